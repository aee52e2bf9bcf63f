// Test vectors, references and checking for python/overlap/vectors.py: the C++ in ref/vectors
// and ref/<workload> does the work (generation, the float64 oracle, the safetensors format,
// the whole-tensor and per-block checks); this file only moves tensors across.
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <filesystem>

#include "app/output_names.hpp"
#include "bindings.hpp"
#include "tensor_conversion.hpp"
#include "vectors/safetensors.hpp"
#include "vectors/vectors.hpp"

namespace nb = nanobind;

namespace overlap::python {
namespace {

// "oracle" (float64) or "fast" (the fp32 fast reference), the words of `overlap vectors --expected`.
ExpectedFrom parse_expected(const std::string& expected) {
  if (expected == "oracle") return ExpectedFrom::Oracle;
  if (expected == "fast") return ExpectedFrom::FastReference;
  fail("expected='{}' is not 'oracle' or 'fast'", expected);
}

nb::tuple file_to_python(const TensorFile& file) { return nb::make_tuple(file.metadata, tensors_to_python(file.tensors)); }

TensorFile make_file(const std::string& workload, const std::string& shape, std::uint64_t seed,
                     const std::string& distribution, const std::string& expected) {
  VectorRequest r{workload, shape, seed, distribution, parse_expected(expected)};
  nb::gil_scoped_release release;
  return make_vector_set(r);
}

nb::dict check_to_python(const OutputCheck& c) {
  nb::dict d;
  d["name"] = c.name;
  d["rel_error"] = c.rel_error;
  d["worst_block_rel_error"] = c.worst_block_rel_error;
  d["worst_block_row"] = c.worst_block_row;
  d["worst_block_col"] = c.worst_block_col;
  d["tolerance"] = c.tolerance;
  d["elements"] = c.elements;
  d["non_finite"] = c.non_finite;
  d["unwritten"] = c.unwritten;
  d["problem"] = c.problem;
  d["passed"] = c.pass();
  d["description"] = describe(c);
  return d;
}

}  // namespace

void bind_vectors(nb::module_& m) {
  m.def("write_vectors", [](const std::string& path, bool path_is_dir, const std::string& workload,
                            const std::string& shape, std::uint64_t seed, const std::string& distribution,
                            const std::string& expected) {
    const TensorFile file = make_file(workload, shape, seed, distribution, expected);
    // Into a directory under the name `overlap vectors --out DIR` gives the same set.
    const std::string out = path_is_dir ? (std::filesystem::path(path) /
                                           app::vector_file_name(workload, file.metadata.at("shape"),
                                                                 file.metadata.at("distribution"), seed))
                                              .string()
                                        : path;
    write_safetensors(out, file);
    return out;
  }, "Writes a vector set atomically; returns the file's path");
  m.def("read_safetensors", [](const std::string& path) { return file_to_python(read_safetensors(path)); });
  m.def("write_safetensors", [](const std::string& path, const std::map<std::string, std::string>& metadata,
                                const nb::dict& tensors) {
    write_safetensors(path, TensorFile{metadata, tensors_from_python(tensors)});
  }, "Writes any tensors atomically (a result file for check)");
  m.def("read_vector_set", [](const std::string& path) {
    const VectorSet v = read_vector_set(path);
    nb::dict d;
    d["workload"] = std::string(v.workload->name());
    d["shape"] = v.shape.to_string();
    d["seed"] = v.seed;
    d["distribution"] = v.distribution;
    d["inputs"] = tensors_to_python(v.inputs);
    d["expected"] = tensors_to_python(v.expected);
    nb::dict tol;
    for (const auto& o : v.outputs) tol[nb::str(o.name.c_str())] = o.tolerance;
    d["tolerances"] = tol;
    return d;
  }, "A vector file with its metadata decoded and checked");
  m.def("check", [](const std::string& vectors_path, const nb::dict& result) {
    const VectorSet v = read_vector_set(vectors_path);
    const TensorMap r = tensors_from_python(result);
    std::vector<OutputCheck> checks;
    {
      nb::gil_scoped_release release;
      checks = check_outputs(v, r);
    }
    nb::list out;
    for (const auto& c : checks) out.append(check_to_python(c));
    return out;
  }, "Each expected output of the vector file checked against the tensor of the same name");
  m.def("make_inputs", [](const std::string& workload, const std::string& shape, std::uint64_t seed,
                          const std::string& distribution) {
    const Workload& w = find_workload(workload);
    return tensors_to_python(w.make_inputs(w.parse_shape(shape), seed, distribution.empty() ? w.distributions().front().name : distribution));
  });
  m.def("reference", [](const std::string& workload, const std::string& shape, const nb::dict& inputs,
                        const std::string& which) {
    const Workload& w = find_workload(workload);
    const ShapeArgs args = w.parse_shape(shape);
    const TensorMap in = tensors_from_python(inputs);
    OVERLAP_REQUIRE(which == "oracle" || which == "fast", "which='{}' is not 'oracle' or 'fast'", which);
    TensorMap out;
    {
      nb::gil_scoped_release release;
      w.validate_inputs(args, in);
      out = which == "oracle" ? w.oracle(args, in) : w.fast_reference(args, in);
    }
    return tensors_to_python(out);
  }, "The workload's float64 oracle or fp32 fast reference on the given inputs");
  m.def("distributions", [](const std::string& workload) {
    nb::list out;
    for (const auto& d : find_workload(workload).distributions()) out.append(nb::make_tuple(d.name, d.description));
    return out;
  });
}

}  // namespace overlap::python
