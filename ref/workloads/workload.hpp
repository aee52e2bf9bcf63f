#pragma once
// The contract every workload (gla, linrnn, projchain, dualgemm) fulfils on the CPU side:
// its shape keys, how to draw inputs, a float64 oracle straight from the definition, a fast
// reference computed the way the kernels compute, and the tolerance each output is checked
// with. Test vectors, `overlap check`, the GPU tests and validation all go through this.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/shape_args.hpp"
#include "core/tensor.hpp"

namespace overlap {

struct OutputSpec {
  std::string name;
  double tolerance;  // bound on ||out - oracle|| / ||oracle|| for the kernels' precision
};

struct Distribution {
  std::string name;         // e.g. "default", "strong_gates"
  std::string description;  // what is drawn, e.g. "q,k,v ~ N(0,1) bf16; g = logsigmoid(N)/16"
};

class Workload {
 public:
  virtual ~Workload() = default;

  virtual std::string_view name() const = 0;
  virtual std::string_view summary() const = 0;  // one line for `overlap list`
  virtual const std::vector<ShapeKey>& shape_keys() const = 0;
  virtual std::vector<Distribution> distributions() const = 0;  // first is the default

  // Throws overlap::Error if the shape is not valid for this workload (beyond key minimums).
  virtual void validate_shape(const ShapeArgs& shape) const = 0;
  // Inputs in the dtypes the kernels consume, drawn deterministically from `seed`.
  virtual TensorMap make_inputs(const ShapeArgs& shape, std::uint64_t seed,
                                std::string_view distribution) const = 0;
  // Throws on missing tensors, wrong shapes or dtypes, and values the definition forbids.
  virtual void validate_inputs(const ShapeArgs& shape, const TensorMap& inputs) const = 0;
  // Float64 oracle from the definition; outputs are F64 tensors.
  virtual TensorMap oracle(const ShapeArgs& shape, const TensorMap& inputs) const = 0;
  // Fast reference (parallel, blocked, kernel algorithm); outputs are F32 tensors.
  virtual TensorMap fast_reference(const ShapeArgs& shape, const TensorMap& inputs) const = 0;
  virtual std::vector<OutputSpec> outputs(const ShapeArgs& shape) const = 0;

  ShapeArgs parse_shape(std::string_view text) const {
    ShapeArgs s = ShapeArgs::parse(text, shape_keys());
    validate_shape(s);
    return s;
  }
  ShapeArgs default_shape() const { return ShapeArgs::defaults(shape_keys()); }
};

// All workloads, in SPEC order, then gla_backward (issue 18: the gla forward's gradients).
const std::vector<const Workload*>& all_workloads();
// Throws "unknown workload 'x' (known: gla, linrnn, projchain, dualgemm, gla_backward)".
const Workload& find_workload(std::string_view name);

// Factories, one per workload folder.
std::unique_ptr<Workload> make_gla_workload();
std::unique_ptr<Workload> make_gla_backward_workload();
std::unique_ptr<Workload> make_linrnn_workload();
std::unique_ptr<Workload> make_projchain_workload();
std::unique_ptr<Workload> make_dualgemm_workload();

}  // namespace overlap
