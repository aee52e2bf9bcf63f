// gla's kernels (cuda/gla/gla_forward.hpp) as validation variants.
#include <memory>

#include "gla/gla_forward.hpp"
#include "runtime/cuda_check.hpp"
#include "validate/gpu_variant.hpp"

namespace overlap::gpu {

std::vector<GpuVariant> gla_gpu_variants() {
  std::vector<GpuVariant> out;
  for (const cuda::GlaVariant v : cuda::all_gla_variants()) {
    GpuVariant gv;
    gv.workload = "gla";
    gv.name = cuda::gla_variant_name(v);
    gv.cannot_implement = [v](const ShapeArgs& args) {
      return cuda::gla_cannot_implement(v, gla::GlaShape::from_args(args));
    };
    gv.output_dtype = [](const std::string& output) { return output == "o" ? DType::BF16 : DType::F32; };
    // Scratch for the materialized carry, allocated once and grown on demand, so timed runs
    // measure the kernels and not an allocation.
    auto workspace = std::make_shared<DeviceBuffer>();
    gv.run = [v, workspace](const ShapeArgs& args, const DeviceTensors& in, DeviceTensors& out, cudaStream_t stream) {
      const gla::GlaShape shape = gla::GlaShape::from_args(args);
      OVERLAP_REQUIRE(in.at("g").dtype == DType::F32, "gla kernels take g as F32, the vectors hold {}",
                      dtype_name(in.at("g").dtype));
      cuda::GlaDeviceArgs a;
      a.q = device_ptr(in, "q");
      a.k = device_ptr(in, "k");
      a.v = device_ptr(in, "v");
      a.g = static_cast<const float*>(device_ptr(in, "g"));
      a.h0 = static_cast<const float*>(device_ptr(in, "h0"));
      a.o = device_ptr(out, "o");
      a.hT = static_cast<float*>(device_ptr(out, "hT"));
      const std::size_t need = cuda::gla_workspace_bytes(v, shape);
      if (need > workspace->bytes()) *workspace = DeviceBuffer(need);
      a.workspace = need ? workspace->get() : nullptr;
      cuda::gla_forward(v, a, shape, stream);
    };
    out.push_back(std::move(gv));
  }
  return out;
}

}  // namespace overlap::gpu
