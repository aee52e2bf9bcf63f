#pragma once
// safetensors files: 8-byte little-endian header length N, N bytes of JSON header
// {"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, ...,
//  "__metadata__": {"key": "string value"}}, then the raw little-endian tensor bytes.
// Readable by the `safetensors` Python package, PyTorch and NumPy.
#include <cstddef>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "core/tensor.hpp"

namespace overlap {

struct TensorFile {
  std::map<std::string, std::string> metadata;  // safetensors metadata values are strings
  TensorMap tensors;
};

// Serialises to bytes (header padded with spaces to a multiple of 8, tensors in name order).
std::vector<std::byte> encode_safetensors(const TensorFile& file);
// Parses and validates bytes; every inconsistency (truncation, a header that lies about
// offsets, overlapping or out-of-range data, unknown dtype, bad JSON) is an overlap::Error
// naming `source` and the problem. Never reads outside `bytes`.
TensorFile decode_safetensors(std::span<const std::byte> bytes, std::string_view source);

// Writes atomically: a temporary file beside `path`, then a rename, so a failure leaves no
// half-written file behind.
void write_safetensors(const std::filesystem::path& path, const TensorFile& file);
TensorFile read_safetensors(const std::filesystem::path& path);

// Writes any bytes atomically (temporary file + rename); used for every output of the tool.
void write_file_atomic(const std::filesystem::path& path, std::span<const std::byte> bytes);
void write_text_atomic(const std::filesystem::path& path, std::string_view text);

}  // namespace overlap
