// dualgemm's kernels (cuda/dualgemm/dualgemm_forward.hpp) as validation variants: one per
// tiling, each running bf16 (fmt=0) and fp8 (fmt=1) vectors; nvfp4 is refused (Blackwell).
#include "dualgemm/dualgemm_forward.hpp"
#include "validate/gpu_variant.hpp"

namespace overlap::gpu {

std::vector<GpuVariant> dualgemm_gpu_variants() {
  std::vector<GpuVariant> out;
  for (const dualgemm::Tiling& t : dualgemm::kTilings) {
    GpuVariant gv;
    gv.workload = "dualgemm";
    gv.name = t.name;
    gv.cannot_implement = [&t](const ShapeArgs& args) {
      return cuda::dualgemm_cannot_implement(t, dualgemm::shape_from_args(args));
    };
    gv.output_dtype = [](const std::string&) { return DType::F16; };
    gv.run = [&t](const ShapeArgs& args, const DeviceTensors& in, DeviceTensors& o, cudaStream_t stream) {
      const dualgemm::DualGemmShape shape = dualgemm::shape_from_args(args);
      const bool fp8 = shape.format == dualgemm::Format::Fp8E4m3;
      for (const char* name : {"a", "b1", "b2"})
        OVERLAP_REQUIRE(in.at(name).dtype == (fp8 ? DType::F8_E4M3 : DType::BF16),
                        "dualgemm {}: tensor '{}' is {}, the shape's format wants {}", t.name, name,
                        dtype_name(in.at(name).dtype), fp8 ? "F8_E4M3" : "BF16");
      cuda::DualGemmDeviceArgs a;
      a.a = device_ptr(in, "a");
      a.b1 = device_ptr(in, "b1");
      a.b2 = device_ptr(in, "b2");
      if (fp8) {
        a.a_scale = static_cast<const float*>(device_ptr(in, "a_scale"));
        a.b1_scale = static_cast<const float*>(device_ptr(in, "b1_scale"));
        a.b2_scale = static_cast<const float*>(device_ptr(in, "b2_scale"));
      }
      a.c = device_ptr(o, "c");
      cuda::dualgemm_forward(t, a, shape, stream);
    };
    out.push_back(std::move(gv));
  }
  return out;
}

}  // namespace overlap::gpu
