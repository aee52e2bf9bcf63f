#include "vectors/safetensors.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <vector>

#include "core/error.hpp"

namespace overlap {
namespace {

constexpr std::uint64_t kMaxHeaderBytes = 100u << 20;  // the Python package's own limit

std::uint64_t read_u64_le(const std::byte* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<std::uint8_t>(p[i]);
  return v;
}

}  // namespace

std::vector<std::byte> encode_safetensors(const TensorFile& file) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!file.metadata.empty()) {
    nlohmann::ordered_json meta = nlohmann::ordered_json::object();
    for (const auto& [k, v] : file.metadata) meta[k] = v;
    header["__metadata__"] = meta;
  }
  std::uint64_t offset = 0;
  for (const auto& [name, t] : file.tensors) {
    OVERLAP_REQUIRE(name != "__metadata__", "a tensor cannot be named __metadata__");
    header[name] = {{"dtype", std::string(dtype_name(t.dtype()))},
                    {"shape", t.shape()},
                    {"data_offsets", {offset, offset + t.nbytes()}}};
    offset += t.nbytes();
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::vector<std::byte> out(8 + text.size() + offset);
  const std::uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::byte>((n >> (8 * i)) & 0xff);
  std::memcpy(out.data() + 8, text.data(), text.size());
  std::byte* data = out.data() + 8 + text.size();
  for (const auto& [name, t] : file.tensors) {
    if (t.nbytes()) std::memcpy(data, t.bytes().data(), t.nbytes());
    data += t.nbytes();
  }
  return out;
}

TensorFile decode_safetensors(std::span<const std::byte> bytes, std::string_view source) {
  OVERLAP_REQUIRE(bytes.size() >= 8, "{}: truncated file ({} bytes, need at least 8)", source,
                  bytes.size());
  const std::uint64_t header_len = read_u64_le(bytes.data());
  OVERLAP_REQUIRE(header_len <= kMaxHeaderBytes, "{}: header length {} exceeds the {} byte limit",
                  source, header_len, kMaxHeaderBytes);
  OVERLAP_REQUIRE(header_len <= bytes.size() - 8,
                  "{}: truncated file: header says {} bytes but only {} follow", source,
                  header_len, bytes.size() - 8);
  const auto* text = reinterpret_cast<const char*>(bytes.data() + 8);
  auto header = nlohmann::json::parse(text, text + header_len, nullptr, /*allow_exceptions=*/false);
  OVERLAP_REQUIRE(!header.is_discarded(), "{}: header is not valid JSON", source);
  OVERLAP_REQUIRE(header.is_object(), "{}: header is not a JSON object", source);

  const std::span<const std::byte> data = bytes.subspan(8 + header_len);
  TensorFile file;
  // Byte ranges claimed by tensors, to reject overlaps and gaps.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      OVERLAP_REQUIRE(entry.is_object(), "{}: __metadata__ is not an object", source);
      for (const auto& [k, v] : entry.items()) {
        OVERLAP_REQUIRE(v.is_string(), "{}: metadata '{}' is not a string", source, k);
        file.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    OVERLAP_REQUIRE(entry.is_object(), "{}: entry '{}' is not an object", source, name);
    const auto dtype_it = entry.find("dtype");
    const auto shape_it = entry.find("shape");
    const auto offsets_it = entry.find("data_offsets");
    OVERLAP_REQUIRE(dtype_it != entry.end() && dtype_it->is_string(),
                    "{}: tensor '{}' has no dtype string", source, name);
    OVERLAP_REQUIRE(shape_it != entry.end() && shape_it->is_array(),
                    "{}: tensor '{}' has no shape array", source, name);
    OVERLAP_REQUIRE(offsets_it != entry.end() && offsets_it->is_array() && offsets_it->size() == 2,
                    "{}: tensor '{}' has no [begin, end] data_offsets", source, name);
    const DType dtype = dtype_from_name(dtype_it->get<std::string>());
    Shape shape;
    std::uint64_t numel = 1;
    for (const auto& d : *shape_it) {
      OVERLAP_REQUIRE(d.is_number_unsigned(), "{}: tensor '{}' has a non-integer or negative dimension",
                      source, name);
      const std::uint64_t dim = d.get<std::uint64_t>();
      OVERLAP_REQUIRE(dim == 0 || numel <= (std::uint64_t{1} << 48) / dim,
                      "{}: tensor '{}' shape is too large", source, name);
      numel *= dim;
      shape.push_back(static_cast<std::int64_t>(dim));
    }
    const auto& b = (*offsets_it)[0];
    const auto& e = (*offsets_it)[1];
    OVERLAP_REQUIRE(b.is_number_unsigned() && e.is_number_unsigned(),
                    "{}: tensor '{}' data_offsets are not non-negative integers", source, name);
    const std::uint64_t begin = b.get<std::uint64_t>(), end = e.get<std::uint64_t>();
    OVERLAP_REQUIRE(begin <= end, "{}: tensor '{}' data_offsets [{}, {}] lie outside the {} data bytes (begin > end)",
                    source, name, begin, end, data.size());
    // Past the end: either the file was cut short or its header lies; name both.
    OVERLAP_REQUIRE(end <= data.size(),
                    "{}: truncated file or lying header: tensor '{}' data_offsets [{}, {}] lie outside the {} data bytes",
                    source, name, begin, end, data.size());
    OVERLAP_REQUIRE(end - begin == numel * dtype_size(dtype),
                    "{}: tensor '{}' data_offsets span {} bytes but shape {} of {} needs {}", source,
                    name, end - begin, shape_to_string(shape), dtype_name(dtype),
                    numel * dtype_size(dtype));
    ranges.emplace_back(begin, end);
    Tensor t(dtype, shape);
    if (t.nbytes()) std::memcpy(t.bytes().data(), data.data() + begin, t.nbytes());
    file.tensors.emplace(name, std::move(t));
  }
  std::sort(ranges.begin(), ranges.end());
  std::uint64_t covered = 0;
  for (const auto& [begin, end] : ranges) {
    OVERLAP_REQUIRE(begin == covered, "{}: tensor data overlaps or leaves a gap at byte {}", source,
                    std::min(begin, covered));
    covered = end;
  }
  OVERLAP_REQUIRE(covered == data.size(), "{}: {} trailing bytes after the last tensor", source,
                  data.size() - covered);
  return file;
}

void write_file_atomic(const std::filesystem::path& path, std::span<const std::byte> bytes) {
  namespace fs = std::filesystem;
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  OVERLAP_REQUIRE(fs::is_directory(dir), "cannot write '{}': directory '{}' does not exist",
                  path.string(), dir.string());
  std::random_device rd;
  const fs::path tmp = dir / fmt::format(".{}.tmp{:08x}", path.filename().string(), rd());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    OVERLAP_REQUIRE(out.good(), "cannot write '{}'", tmp.string());
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      fail("failed writing '{}' (disk full?)", path.string());
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    fail("cannot move temporary file into '{}'", path.string());
  }
}

void write_text_atomic(const std::filesystem::path& path, std::string_view text) {
  write_file_atomic(path, std::as_bytes(std::span(text.data(), text.size())));
}

void write_safetensors(const std::filesystem::path& path, const TensorFile& file) {
  write_file_atomic(path, encode_safetensors(file));
}

TensorFile read_safetensors(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  OVERLAP_REQUIRE(in.good(), "cannot open '{}'", path.string());
  const auto size = static_cast<std::size_t>(in.tellg());
  std::vector<std::byte> bytes(size);
  in.seekg(0);
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size));
  OVERLAP_REQUIRE(in.good() || size == 0, "cannot read '{}'", path.string());
  return decode_safetensors(bytes, path.string());
}

}  // namespace overlap
