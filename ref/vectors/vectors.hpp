#pragma once
// Shared test vectors: one safetensors file holding a workload's inputs and expected outputs,
// with metadata naming workload, shape, seed, distribution, format version, the reference used
// and each output's tolerance. Written by the CPU reference; read by CPU tests, GPU tests,
// `overlap check`, `overlap validate` and outside tools.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "vectors/safetensors.hpp"
#include "workloads/workload.hpp"

namespace overlap {

inline constexpr const char* kVectorFormat = "overlap-test-vectors";
inline constexpr int kVectorFormatVersion = 1;

enum class ExpectedFrom {
  Oracle,         // float64 oracle (exact for the stored inputs)
  FastReference,  // fp32 fast reference, for shapes where the oracle is too slow
};

struct VectorRequest {
  std::string workload;
  std::string shape;  // "B=4,T=63,..." (missing keys take defaults)
  std::uint64_t seed = 0;
  std::string distribution;  // empty = the workload's default
  ExpectedFrom expected = ExpectedFrom::Oracle;
};

// Builds a vector set in memory (inputs + expected outputs + metadata).
TensorFile make_vector_set(const VectorRequest& request);

// A vector file as read back, with its metadata decoded and checked.
struct VectorSet {
  const Workload* workload = nullptr;
  ShapeArgs shape;
  std::uint64_t seed = 0;
  std::string distribution;
  TensorMap inputs;
  TensorMap expected;
  std::vector<OutputSpec> outputs;  // tolerances as stored in the file
};
VectorSet load_vector_set(const TensorFile& file, const std::string& source);
VectorSet read_vector_set(const std::filesystem::path& path);

// Checked in blocks as well as whole: the relative error of the whole tensor is dominated by
// output rounding (bf16 gives ~3e-3 everywhere), so a wrong tile among thousands moves it by
// 1/sqrt(tiles) of its own error and can pass. A block is up to 64 consecutive rows by 64
// consecutive columns of the last dimension (the channel dimension in every workload; the rows
// are all the other dimensions flattened): about one kernel tile at any output width, so a
// tile-local bug moves its block's error by nearly its full size.
inline constexpr std::int64_t kCheckBlockRows = 64, kCheckBlockCols = 64;

struct OutputCheck {
  std::string name;
  double rel_error = 0;  // ||out - ref|| / ||ref|| over finite, written elements
  double worst_block_rel_error = 0;  // the same per block (kCheckBlockRows x kCheckBlockCols), the largest
  std::int64_t worst_block_row = 0, worst_block_col = 0;  // that block's first row and column
  double tolerance = 0;
  std::int64_t elements = 0;
  std::int64_t non_finite = 0;  // NaN/Inf that are not the poison pattern
  std::int64_t unwritten = 0;   // still holding the poison pattern
  std::string problem;          // missing tensor / wrong shape, empty if none
  bool pass() const {
    return problem.empty() && non_finite == 0 && unwritten == 0 && rel_error <= tolerance &&
           worst_block_rel_error <= tolerance;
  }
};

// One line for people: the output's name, both errors, the tolerance and any problem.
std::string describe(const OutputCheck& check);

// Compares each expected output against the tensor of the same name in `result` (any float
// dtype). A missing or misshapen result tensor fails that output.
std::vector<OutputCheck> check_outputs(const VectorSet& vectors, const TensorMap& result);
// Relative error of one tensor against a reference, both decoded to double.
double relative_error(const Tensor& out, const Tensor& ref);

struct BlockError {
  double rel_error = 0;
  std::int64_t row = 0, col = 0;  // the block's first row and column
};
// The largest relative error over blocks of `block_rows` x `block_cols` of the tensor seen as
// rows x columns (columns = its last dimension). In each direction a tail shorter than half a
// block joins the block before it. A block's reference norm is floored at 1e-3 of the tensor's
// typical block norm, so a block whose reference is (near) zero is judged on an absolute scale
// instead of dividing by nothing.
BlockError worst_block_relative_error(const Tensor& out, const Tensor& ref, std::int64_t block_rows = kCheckBlockRows,
                                      std::int64_t block_cols = kCheckBlockCols);

}  // namespace overlap
