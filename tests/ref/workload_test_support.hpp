#pragma once
// The generic Workload contract, as `overlap vectors`, `overlap check` and the GPU tests use
// it, checked the same way for every workload: every declared output is produced with the
// declared shape and dtype, and the fast reference passes the checker against the oracle at
// the declared tolerances, for every distribution.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "ref/test_support.hpp"
#include "vectors/vectors.hpp"
#include "workloads/workload.hpp"

namespace overlap::test_support {

inline void expect_fast_reference_passes(const Workload& workload, std::string_view name,
                                         const std::string& shape_text) {
  EXPECT_EQ(workload.name(), name);
  const ShapeArgs shape = workload.parse_shape(shape_text);
  for (const Distribution& dist : workload.distributions()) {
    VectorSet set;
    set.workload = &workload;
    set.shape = shape;
    set.seed = 4;
    set.distribution = dist.name;
    set.inputs = workload.make_inputs(shape, set.seed, dist.name);
    workload.validate_inputs(shape, set.inputs);
    set.expected = workload.oracle(shape, set.inputs);
    set.outputs = workload.outputs(shape);
    ASSERT_EQ(set.expected.size(), set.outputs.size());
    for (const auto& [out_name, t] : set.expected) EXPECT_EQ(t.dtype(), DType::F64) << out_name;

    const TensorMap result = workload.fast_reference(shape, set.inputs);
    ASSERT_EQ(result.size(), set.outputs.size());
    for (const OutputCheck& check : check_outputs(set, result)) {
      EXPECT_TRUE(check.pass()) << dist.name << " " << check.name << ": " << check.problem
                                << " rel_error " << check.rel_error;
      EXPECT_EQ(result.at(check.name).dtype(), DType::F32);
    }
  }
}

// Parameterised-test names from shape text: "" -> "defaults", "B=3,T=31" -> "B3_T31".
inline std::string shape_test_name(const ::testing::TestParamInfo<const char*>& info) {
  const std::string text = info.param;
  return text.empty() ? std::string("defaults") : test_name(text);
}

}  // namespace overlap::test_support
