"""numpy arrays <-> the (dtype, shape, bytes) tuples of the C++ core (python/overlap/_tensors.py),
every dtype the vectors use, bit for bit."""
import ml_dtypes
import numpy as np
import pytest

from overlap import _tensors

DTYPES = [("F64", np.float64), ("F32", np.float32), ("F16", np.float16), ("BF16", ml_dtypes.bfloat16),
          ("F8_E4M3", ml_dtypes.float8_e4m3fn), ("U8", np.uint8), ("I32", np.int32), ("I64", np.int64)]


@pytest.mark.parametrize("name,dtype", DTYPES, ids=[d[0] for d in DTYPES])
def test_every_dtype_round_trips_bit_for_bit(name, dtype):
    a = (np.arange(24, dtype=np.float64).reshape(2, 3, 4) * 0.37 - 3).astype(dtype)
    item = _tensors.to_core("x", a)
    assert item[0] == name and item[1] == [2, 3, 4] and len(item[2]) == a.nbytes
    back = _tensors.from_core(item, "numpy")
    assert back.dtype == a.dtype and back.shape == a.shape
    assert back.tobytes() == a.tobytes()


def test_a_non_contiguous_array_is_sent_in_row_major_order():
    a = np.arange(12, dtype=np.float32).reshape(3, 4).T
    dtype, shape, raw = _tensors.to_core("x", a)
    assert shape == [4, 3] and raw == np.ascontiguousarray(a).tobytes()


def test_a_dtype_without_a_safetensors_name_is_refused_naming_the_tensor():
    with pytest.raises(TypeError, match="tensor 'w': numpy dtype complex64"):
        _tensors.to_core("w", np.zeros(3, np.complex64))


def test_an_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="kind='jax'"):
        _tensors.from_core(("F32", [1], b"\0\0\0\0"), "jax")
