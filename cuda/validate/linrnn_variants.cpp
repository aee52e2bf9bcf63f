// linrnn's kernels (cuda/linrnn/linrnn_forward.hpp) as validation variants.
//
// chunk_fused multiplies by W packed as [u|a|z] per channel block, which a model does once when it loads its weights:
// here that is the variant's `prepare` step (linrnn_pack_weight, once per input set, not
// timed), and the timed runs get it as the input "W_packed". bench/gpu/bench_linrnn.py times
// the packing too ("chunk_fused+pack").
#include <cstdint>
#include <memory>
#include <string>

#include "linrnn/linrnn_forward.hpp"
#include "runtime/cuda_check.hpp"
#include "validate/gpu_variant.hpp"

namespace overlap::gpu {

std::vector<GpuVariant> linrnn_gpu_variants() {
  std::vector<GpuVariant> out;
  for (const linrnn::Variant v : cuda::all_linrnn_variants()) {
    GpuVariant gv;
    gv.workload = "linrnn";
    gv.name = cuda::linrnn_variant_name(v);
    gv.cannot_implement = [v](const ShapeArgs& args) {
      return cuda::linrnn_cannot_implement(v, linrnn::LinrnnShape::from_args(args));
    };
    gv.output_dtype = [](const std::string& output) { return output == "y" ? DType::BF16 : DType::F32; };
    if (v == linrnn::Variant::ChunkFused)
      gv.prepare = [](const ShapeArgs& args, const DeviceTensors& in, cudaStream_t stream) {
        const linrnn::LinrnnShape shape = linrnn::LinrnnShape::from_args(args);
        const std::size_t bytes = cuda::linrnn_packed_weight_bytes(shape);
        DeviceTensor packed{DType::BF16, Shape{static_cast<std::int64_t>(bytes / 2)}, DeviceBuffer(bytes)};
        cuda::linrnn_pack_weight(device_ptr(in, "W"), packed.buffer.get(), shape, stream);
        DeviceTensors out;
        out.emplace("W_packed", std::move(packed));
        return out;
      };
    // Workspace (look-back words, and the projection for the cuBLAS variants), allocated and
    // zero-filled once per shape (the look-back region moves with the shape), regrown on
    // demand, so timed runs measure the kernels and not an allocation.
    auto workspace = std::make_shared<DeviceBuffer>();
    auto workspace_shape = std::make_shared<std::string>();
    gv.run = [v, workspace, workspace_shape](const ShapeArgs& args, const DeviceTensors& in, DeviceTensors& outs, cudaStream_t stream) {
      const linrnn::LinrnnShape shape = linrnn::LinrnnShape::from_args(args);
      OVERLAP_REQUIRE(in.at("x").dtype == DType::BF16 && in.at("W").dtype == DType::BF16,
                      "linrnn kernels take x and W as BF16, the vectors hold {} and {}",
                      dtype_name(in.at("x").dtype), dtype_name(in.at("W").dtype));
      cuda::LinrnnDeviceArgs a;
      a.x = device_ptr(in, "x");
      a.W = device_ptr(in, "W");
      a.h0 = static_cast<const float*>(device_ptr(in, "h0"));
      a.y = device_ptr(outs, "y");
      a.hT = static_cast<float*>(device_ptr(outs, "hT"));
      a.w_packed = device_ptr(in, "W_packed");  // chunk_fused (from prepare), else null
      const std::size_t need = cuda::linrnn_workspace_bytes(v, shape);
      if (need > workspace->bytes()) *workspace = DeviceBuffer(need);
      if (need && *workspace_shape != args.to_string()) {
        OVERLAP_CUDA_CHECK(cudaMemsetAsync(workspace->get(), 0, need, stream));
        *workspace_shape = args.to_string();
      }
      a.workspace = need ? workspace->get() : nullptr;
      cuda::linrnn_forward(v, a, shape, stream);
    };
    out.push_back(std::move(gv));
  }
  return out;
}

}  // namespace overlap::gpu
