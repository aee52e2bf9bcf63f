"""overlap.profiles / load_profile / Profile (python/overlap/profiles.py): the built-in GPUs and
profile files as the C++ model reads them, usable as `hw=` everywhere."""
import json

import pytest

import overlap

MEMORY_BOUND = ("gla", "pingpong_fused", "B=8,T=4096,H=16,K=128,V=128")


def test_the_built_in_profiles_with_a_source_for_every_number():
    ps = overlap.profiles()
    assert list(ps) == ["T4", "A100", "H100", "H200", "B200"]
    h100 = ps["H100"]
    assert h100.fields["sm_count"] == 132 and h100.fields["copy_engine"] == "tma"
    assert all(h100.sources[k] for k in h100.fields)
    assert "132 SMs" in repr(h100)
    # H200 derives from H100 in its file; the base is resolved.
    assert ps["H200"].fields["sm_count"] == 132
    assert ps["H200"].fields["hbm_bandwidth_GBps"] > h100.fields["hbm_bandwidth_GBps"]


def test_a_profile_file_deriving_from_a_built_in_one(tmp_path):
    path = tmp_path / "slow.json"
    path.write_text(json.dumps({"name": "H100-half-hbm", "base": "H100", "fields": {
        "hbm_bandwidth_GBps": {"value": 1500, "source": "a test: half the H100's"}}}))
    slow = overlap.load_profile(path)
    assert slow.name == "H100-half-hbm" and slow.fields["hbm_bandwidth_GBps"] == 1500
    assert slow.fields["sm_count"] == 132
    base = overlap.predict(*MEMORY_BOUND, hw="H100")
    for hw in (path, str(path), slow):
        p = overlap.predict(*MEMORY_BOUND, hw=hw)
        assert p.hw == "H100-half-hbm"
        assert p.time_us > 1.5 * base.time_us  # bound by HBM at this shape


def test_derive_changes_fields_and_works_as_hw_in_sweeps():
    h100 = overlap.profiles()["H100"]
    fast = h100.derive("H100-2x-hbm", hbm_bandwidth_GBps=6000)
    assert fast.fields["hbm_bandwidth_GBps"] == 6000 and "Python" in fast.sources["hbm_bandwidth_GBps"]
    assert h100.fields["hbm_bandwidth_GBps"] == 3000
    df = overlap.sweep(MEMORY_BOUND[0], MEMORY_BOUND[1], MEMORY_BOUND[2], sweep="T=2048/4096", hw=[h100, fast])
    t = df.set_index(["hw", "T"])["time_us"]
    assert t[("H100-2x-hbm", 4096)] < 0.75 * t[("H100", 4096)]


def test_save_writes_a_profile_file_that_loads_back(tmp_path):
    derived = overlap.profiles()["A100"].derive("A100-more-smem", smem_per_sm_KiB=200)
    derived.save(tmp_path / "p.json")
    again = overlap.load_profile(tmp_path / "p.json")
    assert again.fields == derived.fields and again.sources == derived.sources


def test_an_unknown_field_is_refused_by_name():
    with pytest.raises(overlap.OverlapError, match="H100.derive\\('x'\\): unknown profile field 'hbm_GBps'"):
        overlap.profiles()["H100"].derive("x", hbm_GBps=1)
    with pytest.raises(overlap.OverlapError, match="field 'sm_count' = -4 must not be negative"):
        overlap.profiles()["H100"].derive("x", sm_count=-4)


def test_a_bad_profile_file_is_refused_with_the_tools_message(tmp_path, cli_if_built):
    path = tmp_path / "bad.json"
    path.write_text('{"name": "bad", "base": "H100", "fields": {"warp_size": {"value": 32, "source": "x"}}}')
    with pytest.raises(overlap.OverlapError) as e:
        overlap.load_profile(path)
    assert "unknown profile field 'warp_size'" in str(e.value) and str(path) in str(e.value)
    if cli_if_built:
        assert str(e.value) == cli_if_built.error("predict", "--hw", str(path), "--workload", "gla", "--variant",
                                                  "pipelined")


def test_a_missing_profile_names_the_value():
    with pytest.raises(overlap.OverlapError, match="unknown hardware profile 'no-such-gpu.json'"):
        overlap.load_profile("no-such-gpu.json")
