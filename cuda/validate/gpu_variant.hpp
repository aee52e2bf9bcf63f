#pragma once
// The uniform face every CUDA kernel variant shows to `overlap validate`: which workload and
// variant it is (the simulator's name, so prediction and measurement pair up), which shapes it
// can run, the dtype it writes each output in, and how to enqueue one run on device tensors.
// A workload's kernels join validation by adding their variants to gpu_variants().
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "core/shape_args.hpp"
#include "core/tensor.hpp"
#include "runtime/device_buffer.hpp"

namespace overlap::gpu {

struct DeviceTensor {
  DType dtype = DType::F32;
  Shape shape;
  DeviceBuffer buffer;
};
using DeviceTensors = std::map<std::string, DeviceTensor>;

struct GpuVariant {
  std::string workload;
  std::string name;
  // Why this variant cannot run `shape`, or nullopt when it can (CUTLASS's can_implement).
  std::function<std::optional<std::string>(const ShapeArgs& shape)> cannot_implement;
  // The dtype the kernel writes `output` in (e.g. bf16 for gla's o, fp32 for hT).
  std::function<DType(const std::string& output)> output_dtype;
  // Optional load-time work, done once per input set before the checked and the timed runs
  // and never timed (what a model does once when it loads its weights, e.g. packing five
  // weights into one). The tensors it returns join that set's inputs under their own names.
  std::function<DeviceTensors(const ShapeArgs& shape, const DeviceTensors& inputs, cudaStream_t stream)> prepare;
  // Enqueues one forward run: inputs as the test vectors store them (plus what `prepare`
  // returned), outputs preallocated with the shapes of the expected outputs and the dtypes above.
  std::function<void(const ShapeArgs& shape, const DeviceTensors& inputs, DeviceTensors& outputs,
                     cudaStream_t stream)>
      run;
};

// The device pointer of tensor `name`, or null when the set has no such tensor (an optional
// input such as h0, or an output the shape does not ask for).
inline const void* device_ptr(const DeviceTensors& t, const std::string& name) {
  auto it = t.find(name);
  return it == t.end() ? nullptr : it->second.buffer.get();
}
inline void* device_ptr(DeviceTensors& t, const std::string& name) {
  auto it = t.find(name);
  return it == t.end() ? nullptr : it->second.buffer.get();
}

// Every compiled variant of every workload, in a stable order.
const std::vector<GpuVariant>& gpu_variants();

// Per-workload lists (one file each under cuda/validate/).
std::vector<GpuVariant> gla_gpu_variants();
std::vector<GpuVariant> gla_backward_gpu_variants();
std::vector<GpuVariant> linrnn_gpu_variants();
std::vector<GpuVariant> projchain_gpu_variants();
std::vector<GpuVariant> dualgemm_gpu_variants();

}  // namespace overlap::gpu
