#pragma once
// The C entry points (liboverlap_<workload>_capi.so, loaded by the Python benchmarks through
// ctypes) never let an exception cross the C boundary: capi_guard runs the body and turns an
// exception into `failure` plus its message in the caller's buffer.
//
//   int overlap_x_forward(..., char* err, int err_len) {
//     return capi_guard(err, err_len, 1, [&] { x_forward(...); return 0; });
//   }
#include <cstring>
#include <exception>

namespace overlap::cuda {

inline void copy_capi_message(const char* text, char* out, int out_len) {
  if (!out || out_len <= 0) return;
  std::strncpy(out, text, static_cast<std::size_t>(out_len - 1));
  out[out_len - 1] = '\0';
}

template <class Result, class Body>
Result capi_guard(char* err, int err_len, Result failure, Body&& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    copy_capi_message(e.what(), err, err_len);
    return failure;
  }
}

}  // namespace overlap::cuda
