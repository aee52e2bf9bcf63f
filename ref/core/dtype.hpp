#pragma once
// Element types of tensors in test vectors and result files, named as safetensors names them.
#include <cstddef>
#include <string>
#include <string_view>

namespace overlap {

enum class DType {
  F64,
  F32,
  F16,
  BF16,
  F8_E4M3,  // one byte, OCP e4m3fn (no infinities, 0x7f/0xff are NaN)
  U8,       // raw bytes, e.g. two packed NVFP4 e2m1 values per byte
  I32,
  I64,
};

std::size_t dtype_size(DType t);
std::string_view dtype_name(DType t);  // safetensors spelling: "F32", "BF16", "F8_E4M3", ...
DType dtype_from_name(std::string_view name);  // throws overlap::Error on an unknown name
bool dtype_is_float(DType t);                  // F64, F32, F16, BF16, F8_E4M3

}  // namespace overlap
