// projchain's kernels (cuda/projchain/projchain_forward.hpp) as validation variants.
//
// The vectors hold five separate weights. wide_gemm and epilogue_fused multiply by the packed
// weight [W_q|W_k|W_v|W_g|W_alpha], which a model packs once when it loads its weights: here
// that is the variant's `prepare` step (projchain_pack_weights, once per input set, not
// timed), and the timed runs get it as the input "W_packed". The packing copy itself (read +
// write of d·(4·H·dk+H) bf16, 67 MB at d=2048, H=16, dk=128) is timed separately by
// bench/gpu/bench_projchain.py.
#include <cstdint>
#include <memory>

#include "projchain/projchain_forward.hpp"
#include "runtime/cuda_check.hpp"
#include "validate/gpu_variant.hpp"

namespace overlap::gpu {

std::vector<GpuVariant> projchain_gpu_variants() {
  std::vector<GpuVariant> out;
  for (const cuda::ProjchainVariant v : cuda::all_projchain_variants()) {
    GpuVariant gv;
    gv.workload = "projchain";
    gv.name = cuda::projchain_variant_name(v);
    gv.cannot_implement = [v](const ShapeArgs& args) {
      return cuda::projchain_cannot_implement(v, projchain::ProjchainShape::from_args(args));
    };
    gv.output_dtype = [](const std::string&) { return DType::BF16; };
    const bool packs = v == cuda::ProjchainVariant::WideGemm || v == cuda::ProjchainVariant::EpilogueFused;
    if (packs)
      gv.prepare = [v](const ShapeArgs& args, const DeviceTensors& in, cudaStream_t stream) {
        const projchain::ProjchainShape shape = projchain::ProjchainShape::from_args(args);
        cuda::ProjchainDeviceArgs w;
        w.w_q = device_ptr(in, "W_q");
        w.w_k = device_ptr(in, "W_k");
        w.w_v = device_ptr(in, "W_v");
        w.w_g = device_ptr(in, "W_g");
        w.w_alpha = device_ptr(in, "W_alpha");
        const std::size_t bytes = cuda::packed_weight_bytes(shape);
        DeviceTensor packed{DType::BF16, Shape{static_cast<std::int64_t>(bytes / 2)}, DeviceBuffer(bytes)};
        cuda::projchain_pack_weights(v, w, packed.buffer.get(), shape, stream);
        DeviceTensors out;
        out.emplace("W_packed", std::move(packed));
        return out;
      };
    // Scratch (the wide intermediate) allocated once and grown on demand, so timed runs
    // measure the kernels, not an allocation.
    auto workspace = std::make_shared<DeviceBuffer>();
    gv.run = [v, workspace](const ShapeArgs& args, const DeviceTensors& in, DeviceTensors& o, cudaStream_t stream) {
      const projchain::ProjchainShape shape = projchain::ProjchainShape::from_args(args);
      for (const char* name : {"x", "W_q", "W_k", "W_v", "W_g", "W_alpha"})
        OVERLAP_REQUIRE(in.at(name).dtype == DType::BF16, "projchain kernels take {} as BF16, the vectors hold {}",
                        name, dtype_name(in.at(name).dtype));
      cuda::ProjchainDeviceArgs a;
      a.x = device_ptr(in, "x");
      a.w_q = device_ptr(in, "W_q");
      a.w_k = device_ptr(in, "W_k");
      a.w_v = device_ptr(in, "W_v");
      a.w_g = device_ptr(in, "W_g");
      a.w_alpha = device_ptr(in, "W_alpha");
      a.q = device_ptr(o, "q");
      a.k = device_ptr(o, "k");
      a.v = device_ptr(o, "v");
      a.g = device_ptr(o, "g");
      a.alpha = device_ptr(o, "alpha");
      a.w_packed = device_ptr(in, "W_packed");  // from prepare (wide variants), else null
      const std::size_t need = cuda::projchain_workspace_bytes(v, shape, a.w_packed != nullptr);
      if (need > workspace->bytes()) *workspace = DeviceBuffer(need);
      a.workspace = need ? workspace->get() : nullptr;
      cuda::projchain_forward(v, a, shape, stream);
    };
    out.push_back(std::move(gv));
  }
  return out;
}

}  // namespace overlap::gpu
