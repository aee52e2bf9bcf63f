"""numpy arrays and torch tensors <-> the (dtype, shape, bytes) tuples the C++ core takes.
dtype names are safetensors' (F32, BF16, F8_E4M3, ...). numpy has no bfloat16 or fp8 of its own:
ml_dtypes (a dependency of the package) provides them, as JAX does; it is imported only when such
an array is made, so a GPU machine without it can still import overlap and use torch tensors.
safetensors is little-endian, as is every host this runs on (x86-64, arm64); a big-endian host is
refused rather than misread."""
import sys

import numpy as np

_NUMPY = {
    "F64": np.dtype(np.float64), "F32": np.dtype(np.float32), "F16": np.dtype(np.float16),
    "U8": np.dtype(np.uint8), "I32": np.dtype(np.int32), "I64": np.dtype(np.int64),
}


def _numpy_dtypes():
    """safetensors name -> numpy dtype, with ml_dtypes' bfloat16 and float8_e4m3fn."""
    if "BF16" not in _NUMPY:
        try:
            import ml_dtypes
        except ImportError as e:
            raise ImportError("overlap: bf16 / fp8 tensors as numpy arrays need the ml_dtypes package "
                              "(pip install ml_dtypes), or use kind='torch'") from e
        _NUMPY["BF16"] = np.dtype(ml_dtypes.bfloat16)
        _NUMPY["F8_E4M3"] = np.dtype(ml_dtypes.float8_e4m3fn)
    return _NUMPY


def _numpy_name(dtype):
    for name, d in _NUMPY.items():
        if d == dtype:
            return name
    if dtype.name in ("bfloat16", "float8_e4m3fn"):  # an ml_dtypes array: ml_dtypes is importable
        return {v: k for k, v in _numpy_dtypes().items()}.get(dtype)
    return None


if sys.byteorder != "little":
    raise ImportError("overlap: safetensors data is little-endian; this host is big-endian")


def _torch_dtypes():
    import torch
    return {"F64": torch.float64, "F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16,
            "F8_E4M3": torch.float8_e4m3fn, "U8": torch.uint8, "I32": torch.int32, "I64": torch.int64}


def _is_torch(x):
    torch = sys.modules.get("torch")  # never import torch just to ask
    return torch is not None and isinstance(x, torch.Tensor)


def to_core(name, x):
    """One array or tensor -> (dtype name, shape, bytes)."""
    if _is_torch(x):
        names = {v: k for k, v in _torch_dtypes().items()}
        if x.dtype not in names:
            raise TypeError(f"tensor '{name}': torch dtype {x.dtype} has no safetensors name here "
                            f"(use one of {', '.join(str(d) for d in names)})")
        t = x.detach().to("cpu").contiguous()
        raw = t.view(_torch_uint_of(t.element_size())).numpy() if t.dtype in _torch_views() else t.numpy()
        return names[x.dtype], list(t.shape), raw.tobytes()
    a = np.asarray(x)
    dtype = _numpy_name(a.dtype)
    if dtype is None:
        raise TypeError(f"tensor '{name}': numpy dtype {a.dtype} has no safetensors name here (use float64, "
                        "float32, float16, ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, uint8, int32 or int64)")
    return dtype, list(a.shape), np.ascontiguousarray(a).tobytes()


def _torch_views():
    # dtypes torch cannot hand to numpy directly: reinterpret their bits as unsigned integers.
    import torch
    return (torch.bfloat16, torch.float8_e4m3fn)


def _torch_uint_of(size):
    import torch
    return {1: torch.uint8, 2: torch.int16}[size]


def from_core(item, kind):
    """(dtype name, shape, bytes) -> a numpy array (kind="numpy") or a CPU torch tensor."""
    dtype, shape, raw = item
    if kind == "numpy":
        np_dtype = _NUMPY[dtype] if dtype in _NUMPY else _numpy_dtypes()[dtype]
        return np.frombuffer(raw, dtype=np_dtype).reshape(shape).copy()
    if kind == "torch":
        import torch
        t = torch.frombuffer(bytearray(raw), dtype=_torch_dtypes()[dtype]) if raw else \
            torch.empty(0, dtype=_torch_dtypes()[dtype])
        return t.reshape(shape)
    raise ValueError(f"kind='{kind}' is not 'numpy' or 'torch'")


def dict_to_core(tensors):
    return {name: to_core(name, x) for name, x in tensors.items()}


def dict_from_core(tensors, kind):
    return {name: from_core(item, kind) for name, item in tensors.items()}
