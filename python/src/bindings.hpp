#pragma once
// The pieces of the `_core` extension module, one function per file that adds them.
#include <nanobind/nanobind.h>

namespace overlap::python {

void bind_model(nanobind::module_& m);    // model_bindings.cpp: predict, compare, sweep, profiles
void bind_vectors(nanobind::module_& m);  // vector_bindings.cpp: test vectors, references, checking

}  // namespace overlap::python
