#pragma once
// Tensors between Python and C++. On the Python side a tensor is a tuple
// (dtype name as safetensors spells it, shape, raw little-endian bytes): python/overlap/_tensors.py
// turns numpy arrays and torch tensors into that and back, so this file never needs numpy.
#include <nanobind/nanobind.h>

#include "core/tensor.hpp"

namespace overlap::python {

// {name: (dtype, shape, bytes)} -> TensorMap; a wrong byte count or unknown dtype is an
// overlap::Error naming the tensor.
TensorMap tensors_from_python(const nanobind::dict& tensors);
nanobind::dict tensors_to_python(const TensorMap& tensors);

}  // namespace overlap::python
