#pragma once
// A host tensor: element type, shape (row-major, last index fastest) and raw little-endian
// bytes. This is what test vectors, result files and the references exchange.
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "core/error.hpp"

namespace overlap {

using Shape = std::vector<std::int64_t>;

std::int64_t shape_numel(const Shape& shape);  // throws on a negative dimension or overflow
std::string shape_to_string(const Shape& shape);  // "[4, 63, 2, 64]"

class Tensor {
 public:
  Tensor() = default;
  Tensor(DType dtype, Shape shape);  // zero-filled

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  std::int64_t numel() const { return numel_; }
  std::size_t nbytes() const { return bytes_.size(); }
  std::span<std::byte> bytes() { return bytes_; }
  std::span<const std::byte> bytes() const { return bytes_; }

  // Typed view; T must have the element size of dtype (uint16_t for BF16/F16, uint8_t for
  // F8_E4M3/U8, float for F32, double for F64, ...).
  template <class T>
  std::span<T> view() {
    check_element_size(sizeof(T));
    return {reinterpret_cast<T*>(bytes_.data()), static_cast<std::size_t>(numel_)};
  }
  template <class T>
  std::span<const T> view() const {
    check_element_size(sizeof(T));
    return {reinterpret_cast<const T*>(bytes_.data()), static_cast<std::size_t>(numel_)};
  }

  // Decodes any float dtype to double (exact: every format here is a subset of double).
  std::vector<double> to_f64() const;
  std::vector<float> to_f32() const;
  // Rounds each value to `dtype` (round to nearest even; e4m3 saturates).
  static Tensor from_f64(std::span<const double> values, DType dtype, Shape shape);
  static Tensor from_f32(std::span<const float> values, DType dtype, Shape shape);

 private:
  void check_element_size(std::size_t size) const;

  DType dtype_ = DType::F32;
  Shape shape_;
  std::int64_t numel_ = 0;
  std::vector<std::byte> bytes_;
};

// Named tensors, ordered by name (safetensors headers are maps; order makes files reproducible).
using TensorMap = std::map<std::string, Tensor>;

// Looks a tensor up by name; throws "missing tensor 'name' (have: a, b)" when absent.
const Tensor& require_tensor(const TensorMap& tensors, const std::string& name);
// Throws unless t has exactly `shape`: "tensor 'q' has shape [..], expected [..]".
void require_shape(const Tensor& t, const std::string& name, const Shape& shape);
// Throws unless t has `dtype`: "tensor 'q' has dtype F32, expected BF16".
void require_dtype(const Tensor& t, const std::string& name, DType dtype);
// Throws on the first NaN or infinity: "tensor 'g' has a non-finite value (nan) at index 17".
void require_finite(const Tensor& t, const std::string& name);

}  // namespace overlap
