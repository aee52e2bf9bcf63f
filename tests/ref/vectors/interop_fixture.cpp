// Helper for safetensors_interop.py.
//   write FILE RAWDIR : writes FILE with one tensor of every dtype and metadata, plus each
//                       tensor's raw bytes as RAWDIR/<name>.bin for a bit-exact comparison.
//   read FILE         : reads a file written by the Python package; prints "name dtype shape
//                       sum-of-bytes" per tensor and the metadata, for the script to compare.
#include <fmt/format.h>

#include <fstream>

#include "core/random.hpp"
#include "vectors/safetensors.hpp"

using namespace overlap;

int main(int argc, char** argv) {
  try {
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "write" && argc == 4) {
      TensorFile f;
      f.metadata = {{"format", "overlap-test-vectors"}, {"note", "interop fixture"}};
      std::vector<double> v(60);
      fill_normal<double>(v, 9, "interop", 3.0);
      for (DType t : {DType::F64, DType::F32, DType::F16, DType::BF16, DType::F8_E4M3})
        f.tensors.emplace(fmt::format("t_{}", dtype_name(t)), Tensor::from_f64(v, t, {3, 4, 5}));
      Tensor u8(DType::U8, {7});
      for (int i = 0; i < 7; ++i) u8.view<std::uint8_t>()[i] = static_cast<std::uint8_t>(250 - 31 * i);
      f.tensors.emplace("t_U8", u8);
      write_safetensors(argv[2], f);
      for (const auto& [name, t] : f.tensors) {
        std::ofstream out(fmt::format("{}/{}.bin", argv[3], name), std::ios::binary);
        out.write(reinterpret_cast<const char*>(t.bytes().data()), static_cast<std::streamsize>(t.nbytes()));
      }
      return 0;
    }
    if (mode == "read" && argc == 3) {
      const TensorFile f = read_safetensors(argv[2]);
      for (const auto& [name, t] : f.tensors) {
        std::uint64_t sum = 0;
        for (std::byte b : t.bytes()) sum += static_cast<std::uint8_t>(b);
        fmt::print("tensor {} {} {} {}\n", name, dtype_name(t.dtype()), shape_to_string(t.shape()), sum);
      }
      for (const auto& [k, v] : f.metadata) fmt::print("meta {} {}\n", k, v);
      return 0;
    }
    fmt::print(stderr, "usage: {} write FILE RAWDIR | read FILE\n", argv[0]);
    return 2;
  } catch (const Error& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
}
