// Input tensors of each format: drawing, checking and decoding them to the exact values the
// tensor cores multiply.
#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"
#include "core/random.hpp"
#include "dualgemm/dualgemm.hpp"
#include "formats/fp8_e4m3.hpp"
#include "formats/nvfp4.hpp"

namespace overlap::dualgemm {
namespace {

struct TensorSpec {
  std::string name;
  DType dtype;
  Shape shape;
};

// Operand names with the number of rows of each (A: M, B1/B2: N).
struct Operand {
  const char* name;
  std::int64_t rows;
};
std::vector<Operand> operands(const DualGemmShape& s) {
  return {{"a", s.M}, {"b1", s.N}, {"b2", s.N}};
}

std::string scale_name(const Operand& op) { return std::string(op.name) + "_scale"; }

// Batch l of a tensor's elements (batches are the outermost dimension, all equal in size).
template <class T>
std::span<T> batch(std::span<T> all, std::int64_t L, std::int64_t l) {
  const std::size_t n = all.size() / static_cast<std::size_t>(L);
  return all.subspan(static_cast<std::size_t>(l) * n, n);
}

formats::Nvfp4Shape nvfp4_shape(const DualGemmShape& s, std::int64_t rows) { return {rows, s.K}; }

Shape nvfp4_scale_shape(const DualGemmShape& s, std::int64_t rows) {
  const auto layout = nvfp4_shape(s, rows).scale_layout();
  return {s.L, layout.row_tiles(), layout.k_tiles(), formats::BlockedScaleLayout::kTileBytes};
}

std::vector<TensorSpec> input_specs(const DualGemmShape& s) {
  std::vector<TensorSpec> specs;
  for (const Operand& op : operands(s)) {
    switch (s.format) {
      case Format::Bf16:
        specs.push_back({op.name, DType::BF16, {s.L, op.rows, s.K}});
        break;
      case Format::Fp8E4m3:
        specs.push_back({op.name, DType::F8_E4M3, {s.L, op.rows, s.K}});
        specs.push_back({scale_name(op), DType::F32, {s.L, op.rows}});
        break;
      case Format::Nvfp4:
        specs.push_back({op.name, DType::U8, {s.L, op.rows, s.K / 2}});
        specs.push_back({scale_name(op), DType::F8_E4M3, nvfp4_scale_shape(s, op.rows)});
        break;
    }
  }
  return specs;
}

// fill_normal's values (element i is a function of seed, name and i only), drawn on all
// cores: large shapes draw tens of millions.
std::vector<float> draw_normal(std::int64_t count, std::uint64_t seed, const char* name,
                               double scale) {
  std::vector<float> x(static_cast<std::size_t>(count));
  const CounterRng rng(seed, stream_id(name));
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < count; ++i)
    x[static_cast<std::size_t>(i)] =
        static_cast<float>(scale * rng.normal(static_cast<std::uint64_t>(i)));
  return x;
}

// Per-row fp8 quantization: scale = amax / 448 so the largest value of each row maps to 448.
void quantize_fp8_rows(std::span<const float> x, std::int64_t rows, std::int64_t cols,
                       Tensor& codes, Tensor& scales) {
  auto c = codes.view<std::uint8_t>();
  auto sc = scales.view<float>();
#pragma omp parallel for schedule(static)
  for (std::int64_t r = 0; r < rows; ++r) {
    const auto row = x.subspan(static_cast<std::size_t>(r * cols), static_cast<std::size_t>(cols));
    float amax = 0;
    for (float v : row) amax = std::max(amax, std::fabs(v));
    const float scale = amax > 0 ? amax / 448.0f : 1.0f;
    sc[static_cast<std::size_t>(r)] = scale;
    for (std::int64_t k = 0; k < cols; ++k)
      c[static_cast<std::size_t>(r * cols + k)] = formats::e4m3_from_float(
          row[static_cast<std::size_t>(k)] / scale, formats::Fp8Overflow::Saturate);
  }
}

// NaN and sign checks of the scales a GEMM reads (padding is never read).
void check_nvfp4_scales(const DualGemmShape& s, const Tensor& scales, const std::string& name,
                        std::int64_t rows) {
  const auto bytes = scales.view<std::uint8_t>();
  const auto layout = nvfp4_shape(s, rows).scale_layout();
  for (std::int64_t l = 0; l < s.L; ++l)
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t b = 0; b < layout.k_blocks; ++b) {
        const std::uint8_t code = bytes[static_cast<std::size_t>(
            l * layout.size() + formats::scale_offset_unchecked(r, b, layout.k_tiles()))];
        OVERLAP_REQUIRE((code & 0x7fu) != 0x7fu,
                        "tensor '{}' has a NaN scale (0x{:02x}) at batch {}, row {}, k-block {}",
                        name, code, l, r, b);
        OVERLAP_REQUIRE((code & 0x80u) == 0,
                        "tensor '{}' has a negative scale (0x{:02x}) at batch {}, row {}, k-block "
                        "{}; NVFP4 scales are unsigned",
                        name, code, l, r, b);
      }
}

}  // namespace

TensorMap make_inputs(const DualGemmShape& s, std::uint64_t seed) {
  const double sigma = std::pow(static_cast<double>(s.K), -0.25);
  TensorMap inputs;
  for (const Operand& op : operands(s)) {
    const std::vector<float> x = draw_normal(s.L * op.rows * s.K, seed, op.name, sigma);
    switch (s.format) {
      case Format::Bf16:
        inputs.emplace(op.name, Tensor::from_f32(x, DType::BF16, {s.L, op.rows, s.K}));
        break;
      case Format::Fp8E4m3: {
        Tensor codes(DType::F8_E4M3, {s.L, op.rows, s.K});
        Tensor scales(DType::F32, {s.L, op.rows});
        quantize_fp8_rows(x, s.L * op.rows, s.K, codes, scales);
        inputs.emplace(op.name, std::move(codes));
        inputs.emplace(scale_name(op), std::move(scales));
        break;
      }
      case Format::Nvfp4: {
        const auto shape = nvfp4_shape(s, op.rows);
        Tensor packed(DType::U8, {s.L, op.rows, s.K / 2});
        Tensor scales(DType::F8_E4M3, nvfp4_scale_shape(s, op.rows));
        for (std::int64_t l = 0; l < s.L; ++l)
          formats::nvfp4_quantize(batch(std::span<const float>(x), s.L, l), shape,
                                  batch(packed.view<std::uint8_t>(), s.L, l),
                                  batch(scales.view<std::uint8_t>(), s.L, l));
        inputs.emplace(op.name, std::move(packed));
        inputs.emplace(scale_name(op), std::move(scales));
        break;
      }
    }
  }
  return inputs;
}

void validate_inputs(const DualGemmShape& s, const TensorMap& inputs) {
  for (const TensorSpec& spec : input_specs(s)) {
    const Tensor& t = require_tensor(inputs, spec.name);
    OVERLAP_REQUIRE(t.dtype() == spec.dtype, "tensor '{}' has dtype {}, expected {} for fmt={}",
                    spec.name, dtype_name(t.dtype()), dtype_name(spec.dtype),
                    format_name(s.format));
    require_shape(t, spec.name, spec.shape);
    if (s.format != Format::Nvfp4) require_finite(t, spec.name);  // e2m1 has no NaN/Inf codes
  }
  if (s.format == Format::Nvfp4)
    for (const Operand& op : operands(s))
      check_nvfp4_scales(s, inputs.at(scale_name(op)), scale_name(op), op.rows);
}

Operands decode_operands(const DualGemmShape& s, const TensorMap& inputs) {
  validate_inputs(s, inputs);
  Operands ops;
  ops.shape = s;
  std::vector<float>* values[] = {&ops.a, &ops.b1, &ops.b2};
  std::vector<float>* scales[] = {&ops.a_scale, &ops.b1_scale, &ops.b2_scale};
  int i = 0;
  for (const Operand& op : operands(s)) {
    const Tensor& t = inputs.at(op.name);
    std::vector<float>& out = *values[i];
    switch (s.format) {
      case Format::Bf16:
        out = t.to_f32();
        break;
      case Format::Fp8E4m3:
        out = t.to_f32();
        *scales[i] = inputs.at(scale_name(op)).to_f32();
        break;
      case Format::Nvfp4: {
        const auto shape = nvfp4_shape(s, op.rows);
        out.resize(static_cast<std::size_t>(s.L * op.rows * s.K));
        const Tensor& sc = inputs.at(scale_name(op));
        for (std::int64_t l = 0; l < s.L; ++l)
          formats::nvfp4_dequantize(batch(t.view<std::uint8_t>(), s.L, l),
                                    batch(sc.view<std::uint8_t>(), s.L, l), shape,
                                    batch(std::span<float>(out), s.L, l));
        break;
      }
    }
    ++i;
  }
  return ops;
}

}  // namespace overlap::dualgemm
