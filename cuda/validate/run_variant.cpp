#include "validate/run_variant.hpp"

#include "runtime/cuda_check.hpp"

#include "vectors/poison.hpp"

namespace overlap::gpu {

DeviceTensors upload(const TensorMap& host) {
  DeviceTensors out;
  for (const auto& [name, t] : host) {
    DeviceTensor d{t.dtype(), t.shape(), DeviceBuffer(t.nbytes())};
    d.buffer.upload(t.bytes().data(), t.nbytes());
    out.emplace(name, std::move(d));
  }
  return out;
}

namespace {

// Output tensors in the kernel's dtypes, filled with the poison pattern.
TensorMap poisoned_outputs(const GpuVariant& variant, const VectorSet& vectors) {
  TensorMap outputs;
  for (const auto& spec : vectors.outputs) {
    Tensor t(variant.output_dtype(spec.name), vectors.expected.at(spec.name).shape());
    poison(t);
    outputs.emplace(spec.name, std::move(t));
  }
  return outputs;
}

TensorMap download(const DeviceTensors& device) {
  TensorMap host;
  for (const auto& [name, d] : device) {
    Tensor t(d.dtype, d.shape);
    d.buffer.download(t.bytes().data(), t.nbytes());
    host.emplace(name, std::move(t));
  }
  return host;
}

}  // namespace

namespace {

// The inputs of one set as the variant's runs see them: the uploaded tensors plus whatever its
// load-time `prepare` step made from them (finished before anything is timed).
DeviceTensors prepared_inputs(const GpuVariant& variant, const ShapeArgs& shape, const TensorMap& host) {
  DeviceTensors inputs = upload(host);
  if (!variant.prepare) return inputs;
  DeviceTensors extra = variant.prepare(shape, inputs, nullptr);
  OVERLAP_CUDA_CHECK(cudaGetLastError());
  OVERLAP_CUDA_CHECK(cudaDeviceSynchronize());
  for (auto& [name, t] : extra) {
    OVERLAP_REQUIRE(!inputs.count(name), "{}/{}: prepare() returned '{}', which is already an input", variant.workload,
                    variant.name, name);
    inputs.emplace(name, std::move(t));
  }
  return inputs;
}

}  // namespace

VariantRun run_variant(const GpuVariant& variant, const VectorSet& vectors,
                       const std::vector<TensorMap>& timing_sets, const TimingOptions& options) {
  VariantRun result;
  const DeviceTensors inputs = prepared_inputs(variant, vectors.shape, vectors.inputs);
  DeviceTensors outputs = upload(poisoned_outputs(variant, vectors));
  variant.run(vectors.shape, inputs, outputs, nullptr);
  OVERLAP_CUDA_CHECK(cudaGetLastError());
  OVERLAP_CUDA_CHECK(cudaDeviceSynchronize());
  result.checks = check_outputs(vectors, download(outputs));
  result.passed = true;
  for (const auto& c : result.checks) result.passed &= c.pass();
  if (!result.passed || timing_sets.empty()) return result;

  std::vector<DeviceTensors> sets;
  for (const auto& s : timing_sets) sets.push_back(prepared_inputs(variant, vectors.shape, s));
  result.timing = time_launches(
      [&](int set, cudaStream_t stream) { variant.run(vectors.shape, sets[set], outputs, stream); },
      static_cast<int>(sets.size()), options);
  return result;
}

}  // namespace overlap::gpu
