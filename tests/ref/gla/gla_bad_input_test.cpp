// Every way a gla input can be wrong gets an overlap::Error whose message names the problem
// and the offending value. One table, one test body.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "gla_test_support.hpp"
#include "workloads/workload.hpp"

namespace overlap::gla::testing {
namespace {

struct BadCase {
  const char* name;
  std::function<void()> run;  // must throw overlap::Error
  const char* message;        // a piece of the message that names problem and value
};

// Inputs of the default shape B=2,T=63,H=2,K=64,V=64, edited by `edit`, then validated.
void validate_edited(const std::function<void(TensorMap&)>& edit, const char* shape = "") {
  const GlaShape s = parse_shape(shape);
  TensorMap inputs = make_inputs(s, 1, "default");
  edit(inputs);
  validate_inputs(s, inputs);
}

void set_f32(TensorMap& inputs, const char* name, std::size_t index, float value) {
  inputs.at(name).view<float>()[index] = value;
}

const BadCase kCases[] = {
    {"positive_gate",
     [] { validate_edited([](TensorMap& m) { set_f32(m, "g", 64 * 2 * 5 + 64 + 3, 0.25f); }); },
     "gate g[0, 5, 1, 3] = 0.25 at index 707 is positive"},
    {"nan_gate",
     [] { validate_edited([](TensorMap& m) { set_f32(m, "g", 9, std::nanf("")); }); },
     "tensor 'g' has a non-finite value (nan) at index 9"},
    {"inf_h0",
     [] {
       validate_edited([](TensorMap& m) {
         set_f32(m, "h0", 4, std::numeric_limits<float>::infinity());
       });
     },
     "tensor 'h0' has a non-finite value (inf) at index 4"},
    {"nan_q",
     [] { validate_edited([](TensorMap& m) { m.at("q").view<std::uint16_t>()[3] = 0x7fc0; }); },
     "tensor 'q' has a non-finite value (nan) at index 3"},
    {"wrong_shape_v",
     [] { validate_edited([](TensorMap& m) { m["v"] = Tensor(DType::BF16, {2, 63, 2, 32}); }); },
     "tensor 'v' has shape [2, 63, 2, 32], expected [2, 63, 2, 64]"},
    {"wrong_dtype_k",
     [] { validate_edited([](TensorMap& m) { m["k"] = Tensor(DType::F32, {2, 63, 2, 64}); }); },
     "tensor 'k' has dtype F32, expected BF16"},
    {"missing_g", [] { validate_edited([](TensorMap& m) { m.erase("g"); }); },
     "missing tensor 'g'"},
    {"missing_h0", [] { validate_edited([](TensorMap& m) { m.erase("h0"); }); },
     "missing tensor 'h0'"},
    {"h0_given_but_off",
     [] { validate_edited([](TensorMap& m) { m["h0"] = Tensor(DType::F32, {2, 2, 64, 64}); }, "h0=0"); },
     "unexpected input tensor 'h0' (the shape says h0=0)"},
    {"zero_size_parsed", [] { parse_shape("T=0"); }, "shape key 'T' = 0 is below its minimum 1"},
    {"negative_size_parsed", [] { parse_shape("K=-4"); }, "shape key 'K' = -4 is below its minimum 1"},
    {"negative_size_set",
     [] {
       ShapeArgs args = ShapeArgs::defaults(GlaShape::keys());
       args.set("V", -3);
       GlaShape::from_args(args);
     },
     "shape key 'V' = -3 must be at least 1"},
    {"flag_not_boolean", [] { parse_shape("hT=2"); }, "shape key 'hT' = 2 must be 0 or 1"},
    {"unknown_distribution", [] { make_inputs(parse_shape(""), 1, "gentle"); },
     "unknown distribution 'gentle'"},
    {"array_size_mismatch",
     [] {
       const Problem p(parse_shape(""), 1, "default");
       Result<float> r(parse_shape("T=64"));
       chunked_reference(p.shape, p.in.spans(), r.spans());
     },
     "array 'o' has 16384 elements, the shape needs 16128"},
    {"bad_chunking",
     [] {
       const Problem p(parse_shape(""), 1, "default");
       Result<float> r(p.shape);
       chunked_reference(p.shape, p.in.spans(), r.spans(), {48, 32});
     },
     "chunk 48 must be a positive multiple of the sub-chunk 32"},
    {"workload_rejects_positive_gate",
     [] {
       const auto w = make_workload();
       const ShapeArgs shape = w->default_shape();
       TensorMap inputs = w->make_inputs(shape, 1, "default");
       set_f32(inputs, "g", 0, 1.5f);
       w->fast_reference(shape, inputs);
     },
     "gate g[0, 0, 0, 0] = 1.5 at index 0 is positive"},
};

class GlaBadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(GlaBadInput, ThrowsErrorNamingTheValue) {
  const BadCase& c = GetParam();
  try {
    c.run();
    FAIL() << "no error for " << c.name;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos)
        << "message: " << e.what() << "\nexpected to contain: " << c.message;
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, GlaBadInput, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace overlap::gla::testing
