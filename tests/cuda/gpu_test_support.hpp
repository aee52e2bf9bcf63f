#pragma once
// What every GPU test needs: whether a GPU is there (tests skip cleanly without one), a checked
// CUDA call that fails the test, and a device copy of a host tensor freed at scope exit.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <ostream>
#include <string>

#include "core/tensor.hpp"
#include "vectors/vectors.hpp"

namespace overlap::gpu_test {

inline bool gpu_present() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

#define OVERLAP_GPU_TEST_OK(call)                                                  \
  do {                                                                             \
    const cudaError_t overlap_test_status_ = (call);                               \
    ASSERT_EQ(overlap_test_status_, cudaSuccess) << #call << ": " << cudaGetErrorString(overlap_test_status_); \
  } while (0)

// A device copy of a host tensor (or `bytes` of scratch). A failed allocation leaves get()
// null, which the kernels' entry points refuse, so the test fails with a message.
class DeviceTensor {
 public:
  explicit DeviceTensor(const Tensor& host) : DeviceTensor(host.nbytes()) { upload(host); }
  explicit DeviceTensor(std::size_t bytes) : bytes_(bytes) {
    if (cudaMalloc(&ptr_, bytes_) != cudaSuccess) ptr_ = nullptr;
  }
  ~DeviceTensor() { cudaFree(ptr_); }
  DeviceTensor(const DeviceTensor&) = delete;
  DeviceTensor& operator=(const DeviceTensor&) = delete;
  void* get() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }
  void upload(const Tensor& host) const {
    if (ptr_) expect_ok(cudaMemcpy(ptr_, host.bytes().data(), bytes_, cudaMemcpyHostToDevice), "upload");
  }
  void download(Tensor& host) const {
    if (ptr_) expect_ok(cudaMemcpy(host.bytes().data(), ptr_, bytes_, cudaMemcpyDeviceToHost), "download");
  }

 private:
  // A failed copy (e.g. a sticky error from a faulting kernel) fails the test by name.
  static void expect_ok(cudaError_t e, const char* what) {
    EXPECT_EQ(e, cudaSuccess) << "DeviceTensor " << what << ": " << cudaGetErrorString(e);
  }
  void* ptr_ = nullptr;
  std::size_t bytes_;
};

// One shared test-vector set a GPU test runs: shape text in the workload's keys, input
// distribution, seed. gtest prints it by name (PrintTo) rather than as bytes.
struct VectorCase {
  std::string shape;
  std::string distribution;
  std::uint64_t seed;
};
inline void PrintTo(const VectorCase& c, std::ostream* os) {
  *os << c.shape << " " << c.distribution << " seed " << c.seed;
}

// `text` with every character that is not a letter or digit turned into '_': a gtest name or
// property key.
inline std::string identifier(std::string text) {
  for (char& ch : text)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return text;
}

// The name of one (variant, vector case) test: "<variant>_<shape>_<distribution>" as an
// identifier. The device run scripts filter cases by these names (e.g. '*_T_63_*').
inline std::string case_name(const std::string& variant, const VectorCase& c) {
  return identifier(variant + "_" + c.shape + "_" + c.distribution);
}

// Checks every output of one launch against the oracle: a gtest failure naming the whole-tensor
// and the worst-block error (vectors.hpp says why both), a test property per output, and one
// "[ rel_error ]" and one "[ block_error ]" line per output whose last field is the error, for
// the device run scripts to summarise.
inline void expect_outputs_pass(const VectorSet& vectors, const TensorMap& result, const std::string& label,
                                const std::string& property_suffix = "") {
  for (const OutputCheck& check : check_outputs(vectors, result)) {
    EXPECT_TRUE(check.pass()) << label << ": " << describe(check);
    ::testing::Test::RecordProperty(identifier(check.name + "_rel_error" + property_suffix),
                                    std::to_string(check.rel_error));
    std::printf("[ rel_error ] %s: %s %.3e\n", label.c_str(), check.name.c_str(), check.rel_error);
    std::printf("[ block_error ] %s: %s %.3e\n", label.c_str(), check.name.c_str(), check.worst_block_rel_error);
  }
}

}  // namespace overlap::gpu_test
