"""Test vectors from Python: write, read and check the safetensors files the CPU reference
writes (README, "Test-vector format"), with numpy arrays or torch tensors. Generation, the
float64 oracle, the file format and the checks are the C++ of ref/ (through overlap._core), so a
file written here is the file `overlap vectors` writes, byte for byte.

    overlap.vectors.write("gla.safetensors", "gla", "B=2,T=100,H=4,K=64,V=64", seed=7)
    v = overlap.vectors.read("gla.safetensors", kind="torch")     # v.inputs["q"] is bf16
    o = my_kernel(**v.inputs)
    report = overlap.vectors.check("gla.safetensors", {"o": o})
    assert report.passed, report
"""
import os
import pathlib

from . import _core
from ._tensors import dict_from_core, dict_to_core
from .model import parse_shape_text


class VectorSet:
    """A vector file as read back: `workload`, `shape` (canonical text) and `shape_keys`, `seed`,
    `distribution`, `inputs` and `expected` (name -> array or tensor), `tolerances` (output ->
    bound on ||out - ref|| / ||ref||)."""

    def __init__(self, data, kind, path=None):
        self.path = path
        self.workload = data["workload"]
        self.shape = data["shape"]
        self.shape_keys = parse_shape_text(self.shape)
        self.seed = data["seed"]
        self.distribution = data["distribution"]
        self.inputs = dict_from_core(data["inputs"], kind)
        self.expected = dict_from_core(data["expected"], kind)
        self.tolerances = dict(data["tolerances"])

    def __repr__(self):
        return (f"<VectorSet {self.workload} {self.shape} seed={self.seed} {self.distribution}: inputs "
                f"{', '.join(self.inputs)}; outputs {', '.join(self.expected)}>")


class OutputCheck:
    """One output checked: `passed`, `rel_error` (whole tensor), `worst_block_rel_error` (with
    the block's `worst_block_row` / `worst_block_col`), `tolerance`, `non_finite`, `unwritten`,
    `problem`; `str()` is the C++ checker's line."""

    def __init__(self, d):
        self.__dict__.update(d)

    def __repr__(self):
        return f"<OutputCheck {'pass' if self.passed else 'FAIL'} {self.description}>"

    def __str__(self):
        return f"{'pass' if self.passed else 'FAIL'}  {self.description}"


class CheckReport:
    """Every expected output of a vector file checked; `passed` when all pass."""

    def __init__(self, checks):
        self.outputs = [OutputCheck(c) for c in checks]
        self.passed = all(c.passed for c in self.outputs)

    def __getitem__(self, name):
        for c in self.outputs:
            if c.name == name:
                return c
        raise KeyError(name)

    def __iter__(self):
        return iter(self.outputs)

    def __str__(self):
        return "\n".join(str(c) for c in self.outputs)

    def __repr__(self):
        return f"<CheckReport {'pass' if self.passed else 'FAIL'}: " + "; ".join(c.description for c in self.outputs) + ">"


def write(path, workload, shape="", seed=0, distribution="", expected="oracle"):
    """Writes a vector set (inputs drawn from `seed`, expected outputs from the float64 oracle or,
    with expected="fast", the fp32 fast reference) atomically to `path`, or into `path` under the
    name `overlap vectors --out` gives when it is a directory. Returns the file's path."""
    is_dir = os.path.isdir(path)
    written = _core.write_vectors(os.fspath(path), is_dir, workload, shape, seed, distribution, expected)
    return pathlib.Path(written)


def read(path, kind="numpy"):
    """Reads and checks a vector file; kind="torch" gives CPU torch tensors."""
    return VectorSet(_core.read_vector_set(os.fspath(path)), kind, path)


def check(vectors_path, result):
    """Checks `result` (name -> array/tensor, or a safetensors result file) against the vector
    file: whole-tensor and per-block relative error against each output's tolerance, NaN/Inf,
    unwritten (poisoned) elements. Returns a CheckReport."""
    if isinstance(result, (str, os.PathLike)):
        _, tensors = _core.read_safetensors(os.fspath(result))
    else:
        tensors = dict_to_core(result)
    return CheckReport(_core.check(os.fspath(vectors_path), tensors))


def read_tensors(path, kind="numpy"):
    """Any safetensors file: (tensors, metadata)."""
    metadata, tensors = _core.read_safetensors(os.fspath(path))
    return dict_from_core(tensors, kind), dict(metadata)


def write_tensors(path, tensors, metadata=None):
    """Writes tensors (e.g. a result file for `check` or `overlap check`) atomically."""
    _core.write_safetensors(os.fspath(path), dict(metadata or {}), dict_to_core(tensors))
    return path


def make_inputs(workload, shape="", seed=0, distribution="", kind="numpy"):
    """The inputs a vector file of this workload, shape, seed and distribution holds."""
    return dict_from_core(_core.make_inputs(workload, shape, seed, distribution), kind)


def reference(workload, shape, inputs, which="oracle", kind="numpy"):
    """The workload's float64 oracle (which="oracle") or fp32 fast reference (which="fast") on
    `inputs` (name -> array/tensor in the dtypes the vectors use)."""
    return dict_from_core(_core.reference(workload, shape, dict_to_core(inputs), which), kind)


def distributions(workload):
    """[(name, description)] of the input distributions; the first is the default."""
    return [tuple(d) for d in _core.distributions(workload)]
