#include "vectors/vectors.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

#include "vectors/poison.hpp"

namespace overlap {
namespace {

std::string join(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ",") + n;
  return s;
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size() && !text.empty()) {
    const auto comma = text.find(',', start);
    out.push_back(text.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

const std::string& meta(const TensorFile& file, const std::string& key, const std::string& source) {
  auto it = file.metadata.find(key);
  OVERLAP_REQUIRE(it != file.metadata.end(), "{}: not a test-vector file (no '{}' in metadata)",
                  source, key);
  return it->second;
}

std::uint64_t parse_u64(const std::string& text, const std::string& what, const std::string& source) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  OVERLAP_REQUIRE(ec == std::errc() && end == text.data() + text.size(), "{}: {} '{}' is not an integer",
                  source, what, text);
  return v;
}

const Distribution& find_distribution(const Workload& w, const std::string& name,
                                      std::vector<Distribution>& storage) {
  storage = w.distributions();
  if (name.empty()) return storage.front();
  std::string known;
  for (const auto& d : storage) {
    if (d.name == name) return d;
    known += (known.empty() ? "" : ", ") + d.name;
  }
  fail("unknown distribution '{}' for workload {} (known: {})", name, w.name(), known);
}

}  // namespace

TensorFile make_vector_set(const VectorRequest& request) {
  const Workload& w = find_workload(request.workload);
  const ShapeArgs shape = w.parse_shape(request.shape);
  std::vector<Distribution> dists;
  const Distribution& dist = find_distribution(w, request.distribution, dists);

  TensorFile file;
  file.tensors = w.make_inputs(shape, request.seed, dist.name);
  w.validate_inputs(shape, file.tensors);
  const TensorMap expected = request.expected == ExpectedFrom::Oracle
                                 ? w.oracle(shape, file.tensors)
                                 : w.fast_reference(shape, file.tensors);

  std::vector<std::string> input_names, output_names;
  for (const auto& [name, t] : file.tensors) input_names.push_back(name);
  nlohmann::ordered_json tolerance = nlohmann::ordered_json::object();
  for (const auto& spec : w.outputs(shape)) {
    const Tensor& t = require_tensor(expected, spec.name);
    OVERLAP_REQUIRE(!file.tensors.contains(spec.name), "internal: output '{}' clashes with an input",
                    spec.name);
    file.tensors.emplace(spec.name, t);
    output_names.push_back(spec.name);
    tolerance[spec.name] = spec.tolerance;
  }
  file.metadata = {
      {"format", kVectorFormat},
      {"format_version", std::to_string(kVectorFormatVersion)},
      {"workload", std::string(w.name())},
      {"shape", shape.to_string()},
      {"seed", std::to_string(request.seed)},
      {"distribution", dist.name},
      {"distribution_description", dist.description},
      {"inputs", join(input_names)},
      {"outputs", join(output_names)},
      {"tolerance", tolerance.dump()},
      {"reference", request.expected == ExpectedFrom::Oracle ? "float64 oracle"
                                                             : "fp32 fast reference"},
  };
  return file;
}

VectorSet load_vector_set(const TensorFile& file, const std::string& source) {
  OVERLAP_REQUIRE(meta(file, "format", source) == kVectorFormat, "{}: format is '{}', expected '{}'",
                  source, meta(file, "format", source), kVectorFormat);
  const auto version = parse_u64(meta(file, "format_version", source), "format_version", source);
  OVERLAP_REQUIRE(version == kVectorFormatVersion, "{}: format_version {} is not supported (this build reads {})",
                  source, version, kVectorFormatVersion);
  VectorSet set;
  set.workload = &find_workload(meta(file, "workload", source));
  set.shape = set.workload->parse_shape(meta(file, "shape", source));
  set.seed = parse_u64(meta(file, "seed", source), "seed", source);
  set.distribution = meta(file, "distribution", source);
  for (const auto& name : split(meta(file, "inputs", source)))
    set.inputs.emplace(name, require_tensor(file.tensors, name));
  auto tol = nlohmann::json::parse(meta(file, "tolerance", source), nullptr, false);
  OVERLAP_REQUIRE(!tol.is_discarded() && tol.is_object(), "{}: tolerance metadata is not a JSON object",
                  source);
  for (const auto& name : split(meta(file, "outputs", source))) {
    set.expected.emplace(name, require_tensor(file.tensors, name));
    auto it = tol.find(name);
    OVERLAP_REQUIRE(it != tol.end() && it->is_number() && it->get<double>() > 0,
                    "{}: no positive tolerance for output '{}'", source, name);
    set.outputs.push_back({name, it->get<double>()});
  }
  set.workload->validate_inputs(set.shape, set.inputs);
  return set;
}

VectorSet read_vector_set(const std::filesystem::path& path) {
  return load_vector_set(read_safetensors(path), path.string());
}

namespace {

// The whole-tensor error (and worst_block_of, below, the block error) of values already decoded
// to double: check_outputs decodes each output and its reference once for both.
double relative_error_of(const std::vector<double>& o, const std::vector<double>& r) {
  long double diff = 0, norm = 0;
  for (std::size_t i = 0; i < o.size(); ++i) {
    if (!std::isfinite(o[i])) continue;
    const long double d = static_cast<long double>(o[i]) - r[i];
    diff += d * d;
    norm += static_cast<long double>(r[i]) * r[i];
  }
  if (norm == 0) return diff == 0 ? 0.0 : INFINITY;
  return static_cast<double>(std::sqrt(diff / norm));
}

// Block starts along one dimension of `n`: blocks of `size`, a tail shorter than half a block
// joined to the block before it. The last entry is `n`.
std::vector<std::int64_t> block_bounds(std::int64_t n, std::int64_t size) {
  std::int64_t blocks = std::max<std::int64_t>(1, n / size);
  if (n > size && n - blocks * size >= size / 2) ++blocks;  // a long tail is its own block
  std::vector<std::int64_t> bounds;
  for (std::int64_t b = 0; b < blocks; ++b) bounds.push_back(b * size);
  bounds.push_back(n);
  return bounds;
}

// `cols`: the tensor's last dimension (the block columns run along it).
BlockError worst_block_of(const std::vector<double>& o, const std::vector<double>& r, std::int64_t cols,
                          std::int64_t block_rows, std::int64_t block_cols) {
  const auto n = static_cast<std::int64_t>(o.size());
  if (n == 0) return {};
  const std::int64_t rows = n / cols;
  const auto row_bounds = block_bounds(rows, block_rows), col_bounds = block_bounds(cols, block_cols);
  const std::int64_t blocks = std::int64_t(row_bounds.size() - 1) * std::int64_t(col_bounds.size() - 1);
  long double total_norm = 0;
  for (double v : r) total_norm += static_cast<long double>(v) * v;
  // Floor on a block's squared reference norm: 1e-6 of the mean block's (norm 1e-3 of it).
  const long double floor_sq = 1e-6L * total_norm / blocks;
  BlockError worst;
  for (std::size_t bi = 0; bi + 1 < row_bounds.size(); ++bi) {
    for (std::size_t bj = 0; bj + 1 < col_bounds.size(); ++bj) {
      long double diff = 0, norm = 0;
      for (std::int64_t i = row_bounds[bi]; i < row_bounds[bi + 1]; ++i) {
        for (std::int64_t j = col_bounds[bj]; j < col_bounds[bj + 1]; ++j) {
          const std::int64_t e = i * cols + j;
          if (!std::isfinite(o[e])) continue;  // counted by check_outputs
          const long double d = static_cast<long double>(o[e]) - r[e];
          diff += d * d;
          norm += static_cast<long double>(r[e]) * r[e];
        }
      }
      norm = std::max(norm, floor_sq);
      const double err = norm == 0 ? (diff == 0 ? 0.0 : INFINITY) : static_cast<double>(std::sqrt(diff / norm));
      if (err > worst.rel_error) worst = {err, row_bounds[bi], col_bounds[bj]};
    }
  }
  return worst;
}

std::int64_t last_dim(const Tensor& t) { return t.shape().empty() ? 1 : std::max<std::int64_t>(1, t.shape().back()); }

}  // namespace

double relative_error(const Tensor& out, const Tensor& ref) {
  OVERLAP_REQUIRE(out.numel() == ref.numel(), "relative_error: {} vs {} elements", out.numel(), ref.numel());
  return relative_error_of(out.to_f64(), ref.to_f64());
}

BlockError worst_block_relative_error(const Tensor& out, const Tensor& ref, std::int64_t block_rows,
                                      std::int64_t block_cols) {
  OVERLAP_REQUIRE(out.numel() == ref.numel(), "worst_block_relative_error: {} vs {} elements", out.numel(),
                  ref.numel());
  OVERLAP_REQUIRE(block_rows > 0 && block_cols > 0, "worst_block_relative_error: blocks of {} x {}", block_rows,
                  block_cols);
  return worst_block_of(out.to_f64(), ref.to_f64(), last_dim(ref), block_rows, block_cols);
}

std::string describe(const OutputCheck& c) {
  return fmt::format("{}: rel {:.2e}, worst block {:.2e} at row {} column {} (tol {:.0e}), {} non-finite, {} unwritten{}",
                     c.name, c.rel_error, c.worst_block_rel_error, c.worst_block_row, c.worst_block_col, c.tolerance,
                     c.non_finite, c.unwritten, c.problem.empty() ? "" : ", " + c.problem);
}

std::vector<OutputCheck> check_outputs(const VectorSet& vectors, const TensorMap& result) {
  std::vector<OutputCheck> checks;
  for (const auto& spec : vectors.outputs) {
    OutputCheck c;
    c.name = spec.name;
    c.tolerance = spec.tolerance;
    const Tensor& ref = vectors.expected.at(spec.name);
    c.elements = ref.numel();
    auto it = result.find(spec.name);
    if (it == result.end()) {
      c.problem = "missing from result";
    } else if (it->second.shape() != ref.shape()) {
      c.problem = fmt::format("shape {} != expected {}", shape_to_string(it->second.shape()),
                              shape_to_string(ref.shape()));
    } else if (!dtype_is_float(it->second.dtype())) {
      c.problem = fmt::format("dtype {} is not floating point", dtype_name(it->second.dtype()));
    } else {
      const Tensor& out = it->second;
      c.unwritten = count_poisoned(out);
      const std::vector<double> o = out.to_f64(), r = ref.to_f64();
      for (double v : o)
        if (!std::isfinite(v)) ++c.non_finite;
      c.non_finite -= c.unwritten;
      c.rel_error = relative_error_of(o, r);
      const BlockError block = worst_block_of(o, r, last_dim(ref), kCheckBlockRows, kCheckBlockCols);
      c.worst_block_rel_error = block.rel_error;
      c.worst_block_row = block.row;
      c.worst_block_col = block.col;
    }
    checks.push_back(c);
  }
  return checks;
}

}  // namespace overlap
