"""overlap.vectors (python/overlap/vectors.py): the test-vector files of `overlap vectors`, the
CPU references and the checker, with numpy arrays."""
import numpy as np
import pytest

import overlap
from overlap import vectors

SMALL = "B=1,T=70,H=2,K=64,V=64"  # an odd length: the last chunk is partial


@pytest.fixture(scope="module")
def gla_file(tmp_path_factory):
    return vectors.write(tmp_path_factory.mktemp("v") / "gla.safetensors", "gla", "B=2,T=256,H=4,K=64,V=64", seed=3)


def test_write_then_read_gives_inputs_in_the_kernels_dtypes(gla_file):
    v = vectors.read(gla_file)
    assert (v.workload, v.seed, v.shape_keys["T"]) == ("gla", 3, 256)
    assert v.inputs["q"].dtype.name == "bfloat16" and v.inputs["q"].shape == (2, 256, 4, 64)
    assert v.inputs["g"].dtype == np.float32 and (v.inputs["g"] <= 0).all()
    assert v.expected["o"].dtype == np.float64 and set(v.expected) == set(v.tolerances)
    assert "gla" in repr(v)


def test_a_file_written_here_is_the_file_the_tool_writes(tmp_path, cli):
    (tmp_path / "py").mkdir()
    ours = vectors.write(tmp_path / "py", "linrnn", "B=1,T=33,d=64,dv=32", seed=5, distribution="")
    r = cli.run("vectors", "--workload", "linrnn", "--shape", "B=1,T=33,d=64,dv=32", "--seed", "5",
                "--out", str(tmp_path / "cli"))
    assert r.returncode == 0, r.stderr
    theirs = r.stdout.strip()
    assert ours.name == theirs.rsplit("/", 1)[1]  # into a directory: the tool's file name
    assert ours.read_bytes() == open(theirs, "rb").read()


def test_the_oracle_gives_the_expected_outputs_and_the_fast_reference_is_within_tolerance(gla_file):
    v = vectors.read(gla_file)
    oracle = vectors.reference("gla", v.shape, v.inputs, which="oracle")
    for name, ref in v.expected.items():
        np.testing.assert_array_equal(oracle[name], ref)
    fast = vectors.reference("gla", v.shape, v.inputs, which="fast")
    assert fast["o"].dtype == np.float32
    assert vectors.check(gla_file, fast).passed
    inputs = vectors.make_inputs("gla", v.shape, seed=3)
    for name, x in inputs.items():
        np.testing.assert_array_equal(x.view(np.uint8), v.inputs[name].view(np.uint8))


def test_check_passes_the_expected_outputs_in_fp32(gla_file):
    v = vectors.read(gla_file)
    report = vectors.check(gla_file, {k: x.astype(np.float32) for k, x in v.expected.items()})
    assert report.passed and all(c.rel_error < 1e-6 for c in report)
    assert str(report).startswith("pass")


def test_check_finds_one_wrong_block_that_the_whole_tensor_error_hides(gla_file):
    v = vectors.read(gla_file)
    tol = v.tolerances["o"]
    o = v.expected["o"].astype(np.float32)  # [B,T,H,V]: rows are (b,t,h), 2048 of them
    rows = o.reshape(-1, o.shape[-1])
    rows[64:128] *= 1 + 3 * tol  # the second block of 64 rows is 3x the tolerance off
    report = vectors.check(gla_file, {"o": o, "hT": v.expected["hT"]})
    c = report["o"]
    assert c.rel_error <= tol < c.worst_block_rel_error
    assert (c.worst_block_row, c.worst_block_col) == (64, 0)
    assert not c.passed and not report.passed and report["hT"].passed


def test_check_counts_nans_and_names_a_missing_output(gla_file):
    v = vectors.read(gla_file)
    o = v.expected["o"].astype(np.float32)
    o[0, 5, 1, 7] = np.nan
    report = vectors.check(gla_file, {"o": o})
    assert report["o"].non_finite == 1 and not report["o"].passed
    assert report["hT"].problem == "missing from result" and not report["hT"].passed
    assert str(report["hT"]).startswith("FAIL  hT:")


def test_a_result_file_is_checked_like_arrays(gla_file, tmp_path):
    v = vectors.read(gla_file)
    out = {k: x.astype(np.float32) for k, x in v.expected.items()}
    path = vectors.write_tensors(tmp_path / "result.safetensors", out, {"made_by": "test"})
    tensors, metadata = vectors.read_tensors(path)
    assert metadata == {"made_by": "test"}
    np.testing.assert_array_equal(tensors["o"], out["o"])
    assert vectors.check(gla_file, path).passed


def test_distributions_are_listed_default_first():
    names = [name for name, _ in vectors.distributions("gla")]
    assert names[0] == "default" and "strong_gates" in names


def test_bad_input_names_the_value(tmp_path, cli_if_built):
    with pytest.raises(overlap.OverlapError) as e:
        vectors.write(tmp_path / "x.safetensors", "gla", SMALL, distribution="spiky")
    assert "'spiky'" in str(e.value)
    if cli_if_built:
        assert str(e.value) == cli_if_built.error("vectors", "--workload", "gla", "--shape", SMALL, "--distribution",
                                                  "spiky", "--out", str(tmp_path))
    with pytest.raises(overlap.OverlapError, match="expected='exact' is not 'oracle' or 'fast'"):
        vectors.write(tmp_path / "x.safetensors", "gla", SMALL, expected="exact")
    assert not (tmp_path / "x.safetensors").exists()


def test_wrong_inputs_to_a_reference_name_the_tensor():
    inputs = vectors.make_inputs("gla", SMALL)
    inputs["k"] = inputs["k"][:, :69]
    with pytest.raises(overlap.OverlapError, match="'k'|k:|tensor k"):
        vectors.reference("gla", SMALL, inputs)


def test_a_truncated_file_is_refused_naming_it(gla_file, tmp_path):
    bad = tmp_path / "truncated.safetensors"
    bad.write_bytes(gla_file.read_bytes()[:1000])
    with pytest.raises(overlap.OverlapError, match="truncated.safetensors"):
        vectors.read(bad)
