#include "core/tensor.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include "formats/bf16.hpp"
#include "formats/fp16.hpp"
#include "formats/fp8_e4m3.hpp"

namespace overlap {

std::int64_t shape_numel(const Shape& shape) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) {
    OVERLAP_REQUIRE(d >= 0, "negative dimension {} in shape {}", d, shape_to_string(shape));
    OVERLAP_REQUIRE(d == 0 || n <= std::numeric_limits<std::int64_t>::max() / d,
                    "shape {} has too many elements", shape_to_string(shape));
    n *= d;
  }
  return n;
}

std::string shape_to_string(const Shape& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

Tensor::Tensor(DType dtype, Shape shape)
    : dtype_(dtype), shape_(std::move(shape)), numel_(shape_numel(shape_)) {
  bytes_.resize(static_cast<std::size_t>(numel_) * dtype_size(dtype_));
}

void Tensor::check_element_size(std::size_t size) const {
  OVERLAP_REQUIRE(size == dtype_size(dtype_), "internal: {}-byte view of a {} tensor", size,
                  dtype_name(dtype_));
}

namespace {
template <class Out>
void decode(const Tensor& t, Out* out) {
  const std::size_t n = static_cast<std::size_t>(t.numel());
  switch (t.dtype()) {
    case DType::F64: {
      auto v = t.view<double>();
      for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<Out>(v[i]);
      return;
    }
    case DType::F32: {
      auto v = t.view<float>();
      for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<Out>(v[i]);
      return;
    }
    case DType::BF16: {
      auto v = t.view<std::uint16_t>();
      for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<Out>(formats::bf16_to_float(v[i]));
      return;
    }
    case DType::F16: {
      auto v = t.view<std::uint16_t>();
      for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<Out>(formats::fp16_to_float(v[i]));
      return;
    }
    case DType::F8_E4M3: {
      auto v = t.view<std::uint8_t>();
      for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<Out>(formats::e4m3_to_float(v[i]));
      return;
    }
    default:
      fail("cannot decode a {} tensor as floating point", dtype_name(t.dtype()));
  }
}

template <class In>
Tensor encode(std::span<const In> values, DType dtype, Shape shape) {
  Tensor t(dtype, std::move(shape));
  OVERLAP_REQUIRE(static_cast<std::int64_t>(values.size()) == t.numel(),
                  "{} values do not fill shape {}", values.size(), shape_to_string(t.shape()));
  const std::size_t n = values.size();
  switch (dtype) {
    case DType::F64: {
      auto v = t.view<double>();
      for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<double>(values[i]);
      break;
    }
    case DType::F32: {
      auto v = t.view<float>();
      for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(values[i]);
      break;
    }
    case DType::BF16: {
      auto v = t.view<std::uint16_t>();
      for (std::size_t i = 0; i < n; ++i) v[i] = formats::bf16_from_float(static_cast<float>(values[i]));
      break;
    }
    case DType::F16: {
      auto v = t.view<std::uint16_t>();
      for (std::size_t i = 0; i < n; ++i) v[i] = formats::fp16_from_float(static_cast<float>(values[i]));
      break;
    }
    case DType::F8_E4M3: {
      auto v = t.view<std::uint8_t>();
      for (std::size_t i = 0; i < n; ++i) v[i] = formats::e4m3_from_float(static_cast<float>(values[i]));
      break;
    }
    default:
      fail("cannot encode floating-point values as {}", dtype_name(dtype));
  }
  return t;
}
}  // namespace

std::vector<double> Tensor::to_f64() const {
  std::vector<double> out(static_cast<std::size_t>(numel_));
  decode(*this, out.data());
  return out;
}

std::vector<float> Tensor::to_f32() const {
  std::vector<float> out(static_cast<std::size_t>(numel_));
  decode(*this, out.data());
  return out;
}

Tensor Tensor::from_f64(std::span<const double> values, DType dtype, Shape shape) {
  return encode(values, dtype, std::move(shape));
}
Tensor Tensor::from_f32(std::span<const float> values, DType dtype, Shape shape) {
  return encode(values, dtype, std::move(shape));
}

const Tensor& require_tensor(const TensorMap& tensors, const std::string& name) {
  auto it = tensors.find(name);
  if (it != tensors.end()) return it->second;
  std::string have;
  for (const auto& [n, t] : tensors) have += (have.empty() ? "" : ", ") + n;
  fail("missing tensor '{}' (have: {})", name, have.empty() ? "none" : have);
}

void require_shape(const Tensor& t, const std::string& name, const Shape& shape) {
  OVERLAP_REQUIRE(t.shape() == shape, "tensor '{}' has shape {}, expected {}", name,
                  shape_to_string(t.shape()), shape_to_string(shape));
}

void require_dtype(const Tensor& t, const std::string& name, DType dtype) {
  OVERLAP_REQUIRE(t.dtype() == dtype, "tensor '{}' has dtype {}, expected {}", name,
                  dtype_name(t.dtype()), dtype_name(dtype));
}

namespace {
// Checks `view` element by element, decoding each through `to_double`: no decoded copy of the
// tensor is made (inputs can be hundreds of MB).
template <class T, class Decode>
void require_finite_elements(std::span<const T> view, const std::string& name, Decode to_double) {
  for (std::size_t i = 0; i < view.size(); ++i) {
    const double value = to_double(view[i]);
    OVERLAP_REQUIRE(std::isfinite(value), "tensor '{}' has a non-finite value ({}) at index {}",
                    name, value, i);
  }
}
}  // namespace

void require_finite(const Tensor& t, const std::string& name) {
  // The same per-element decoding as to_f64().
  switch (t.dtype()) {
    case DType::F64:
      return require_finite_elements(t.view<double>(), name, [](double v) { return v; });
    case DType::F32:
      return require_finite_elements(t.view<float>(), name,
                                     [](float v) { return static_cast<double>(v); });
    case DType::BF16:
      return require_finite_elements(t.view<std::uint16_t>(), name, [](std::uint16_t v) {
        return static_cast<double>(formats::bf16_to_float(v));
      });
    case DType::F16:
      return require_finite_elements(t.view<std::uint16_t>(), name, [](std::uint16_t v) {
        return static_cast<double>(formats::fp16_to_float(v));
      });
    case DType::F8_E4M3:
      return require_finite_elements(t.view<std::uint8_t>(), name, [](std::uint8_t v) {
        return static_cast<double>(formats::e4m3_to_float(v));
      });
    default:
      fail("cannot decode a {} tensor as floating point", dtype_name(t.dtype()));
  }
}

}  // namespace overlap
