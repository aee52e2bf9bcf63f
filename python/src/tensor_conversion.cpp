#include "tensor_conversion.hpp"

#include <cstring>

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace nb = nanobind;

namespace overlap::python {

TensorMap tensors_from_python(const nb::dict& tensors) {
  TensorMap out;
  for (auto [key, value] : tensors) {
    const std::string name = nb::cast<std::string>(key);
    const auto item = nb::cast<nb::tuple>(value);
    OVERLAP_REQUIRE(item.size() == 3, "tensor '{}': expected (dtype, shape, bytes)", name);
    const DType dtype = dtype_from_name(nb::cast<std::string>(item[0]));
    const Shape shape = nb::cast<Shape>(item[1]);
    const auto bytes = nb::cast<nb::bytes>(item[2]);
    Tensor t(dtype, shape);
    OVERLAP_REQUIRE(bytes.size() == t.nbytes(), "tensor '{}': {} bytes for dtype {} and shape {}, expected {}", name,
                    bytes.size(), dtype_name(dtype), shape_to_string(shape), t.nbytes());
    std::memcpy(t.bytes().data(), bytes.c_str(), t.nbytes());
    out.emplace(name, std::move(t));
  }
  return out;
}

nb::dict tensors_to_python(const TensorMap& tensors) {
  nb::dict out;
  for (const auto& [name, t] : tensors) {
    const auto* data = reinterpret_cast<const char*>(t.bytes().data());
    out[nb::str(name.c_str())] =
        nb::make_tuple(std::string(dtype_name(t.dtype())), t.shape(), nb::bytes(data, t.nbytes()));
  }
  return out;
}

}  // namespace overlap::python
