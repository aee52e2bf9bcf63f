// gla's backward kernels (cuda/gla/gla_backward.hpp) as validation variants of the gla_backward
// workload: inputs q, k, v, g, h0, do, dhT as its vectors store them; dq, dk, dv in bf16, dg and
// dh0 in fp32. saved_states gets its S_n from the default forward variant, run once per input
// set before the checked and timed runs (what training's forward would have left).
#include <memory>

#include "gla/gla_backward.hpp"
#include "gla/gla_forward.hpp"
#include "runtime/cuda_check.hpp"
#include "validate/gpu_variant.hpp"

namespace overlap::gpu {

std::vector<GpuVariant> gla_backward_gpu_variants() {
  std::vector<GpuVariant> out;
  for (const cuda::GlaBackwardVariant v : cuda::all_gla_backward_variants()) {
    GpuVariant gv;
    gv.workload = "gla_backward";
    gv.name = cuda::gla_backward_variant_name(v);
    gv.cannot_implement = [v](const ShapeArgs& args) {
      return cuda::gla_backward_cannot_implement(v, gla::GlaShape::from_args(args));
    };
    gv.output_dtype = [](const std::string& output) {
      return output == "dg" || output == "dh0" ? DType::F32 : DType::BF16;
    };
    if (cuda::gla_backward_reads_saved_states(v))
      gv.prepare = [](const ShapeArgs& args, const DeviceTensors& in, cudaStream_t stream) {
        gla::GlaShape shape = gla::GlaShape::from_args(args);
        shape.want_hT = false;
        const Shape dims = cuda::gla_saved_states_shape(shape);
        DeviceTensor states{DType::BF16, dims, DeviceBuffer(static_cast<std::size_t>(shape_numel(dims)) * 2)};
        DeviceBuffer o(static_cast<std::size_t>(shape.B * shape.T * shape.H * shape.V) * 2);
        cuda::GlaDeviceArgs f;
        f.q = device_ptr(in, "q");
        f.k = device_ptr(in, "k");
        f.v = device_ptr(in, "v");
        f.g = static_cast<const float*>(device_ptr(in, "g"));
        f.h0 = static_cast<const float*>(device_ptr(in, "h0"));
        f.o = o.get();
        f.states = states.buffer.get();
        cuda::gla_forward(cuda::default_gla_variant(shape), f, shape, reinterpret_cast<CUstream_st*>(stream));
        OVERLAP_CUDA_CHECK(cudaStreamSynchronize(stream));  // the forward is done before o goes
        DeviceTensors out;
        out.emplace("states", std::move(states));
        return out;
      };
    // The S_n / dS_n workspace, allocated once and grown on demand (timed runs measure kernels).
    auto workspace = std::make_shared<DeviceBuffer>();
    gv.run = [v, workspace](const ShapeArgs& args, const DeviceTensors& in, DeviceTensors& out, cudaStream_t stream) {
      const gla::GlaShape shape = gla::GlaShape::from_args(args);
      OVERLAP_REQUIRE(in.at("g").dtype == DType::F32, "gla backward kernels take g as F32, the vectors hold {}",
                      dtype_name(in.at("g").dtype));
      cuda::GlaBackwardArgs a;
      a.q = device_ptr(in, "q");
      a.k = device_ptr(in, "k");
      a.v = device_ptr(in, "v");
      a.g = static_cast<const float*>(device_ptr(in, "g"));
      a.h0 = static_cast<const float*>(device_ptr(in, "h0"));
      a.do_ = device_ptr(in, "do");
      a.dhT = static_cast<const float*>(device_ptr(in, "dhT"));
      a.dq = device_ptr(out, "dq");
      a.dk = device_ptr(out, "dk");
      a.dv = device_ptr(out, "dv");
      a.dg = static_cast<float*>(device_ptr(out, "dg"));
      a.dh0 = static_cast<float*>(device_ptr(out, "dh0"));
      a.states = device_ptr(in, "states");
      const std::size_t need = cuda::gla_backward_workspace_bytes(v, shape);
      if (need > workspace->bytes()) *workspace = DeviceBuffer(need);
      a.workspace = workspace->get();
      cuda::gla_backward(v, a, shape, stream);
    };
    out.push_back(std::move(gv));
  }
  return out;
}

}  // namespace overlap::gpu
