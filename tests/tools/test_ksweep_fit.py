"""tools/ksweep_fit.py on hand-made K sweeps: exact lines come back as their slope and intercept."""
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools"))
import ksweep_fit  # noqa: E402


def report(times):
    """A bench_dualgemm.py report: `times` maps (format, K, variant) to µs, at M=256, N=3072."""
    shapes = {}
    for (fmt, k, variant), us in times.items():
        entry = shapes.setdefault((fmt, k), {"shape": {"M": 256, "N": 3072, "K": k}, "format": fmt,
                                             "rows": [{"name": "torch_fp8_scaled_mm", "ms": 1.0}]})
        entry["rows"].append({"name": variant, "ms": us / 1e3})
    return {"shapes": list(shapes.values())}


def test_a_line_through_the_k_sweep_gives_the_k_loop_rate_and_the_fixed_cost():
    times = {}
    for k in (1024, 2048, 4096, 8192):
        times[("fp8", k, "tile64x64_stages4_ws")] = 7.5 + 4.8 * k / 1024
        times[("fp8", k, "tile128x128_stages4_ws")] = 9.25 + 4.75 * k / 1024
    times[("bf16", 4096, "tile64x64_stages4_ws")] = 45.0  # one K: nothing to separate
    rows = {r["variant"]: r for r in ksweep_fit.fit_all(report(times))}
    assert set(rows) == {"tile64x64_stages4_ws", "tile128x128_stages4_ws"}
    assert rows["tile64x64_stages4_ws"]["us_per_1024_k"] == pytest.approx(4.8)
    assert rows["tile64x64_stages4_ws"]["fixed_us"] == pytest.approx(7.5)
    assert rows["tile128x128_stages4_ws"]["us_per_1024_k"] == pytest.approx(4.75)
    assert rows["tile128x128_stages4_ws"]["fixed_us"] == pytest.approx(9.25)
    assert rows["tile64x64_stages4_ws"]["K"] == [1024, 2048, 4096, 8192]
    assert "model_us" not in rows["tile64x64_stages4_ws"]  # no overlap binary given


def test_noise_is_averaged_by_least_squares():
    slope, fixed = ksweep_fit.line_fit([1, 2, 4, 8], [10.1, 14.9, 25.0, 45.0])
    assert slope == pytest.approx(5.0, abs=0.05)
    assert fixed == pytest.approx(5.0, abs=0.2)


def test_a_sweep_with_one_k_is_refused_with_the_reason(tmp_path, capsys):
    with pytest.raises(ValueError, match="two distinct K"):
        ksweep_fit.line_fit([4, 4], [1.0, 2.0])
    path = tmp_path / "one_k.json"
    path.write_text(json.dumps(report({("fp8", 4096, "tile64x64_stages4_ws"): 26.8})))
    assert ksweep_fit.main([str(path)]) == 1
    assert "no kernel was timed at two or more K" in capsys.readouterr().err


def test_by_variant_gathers_each_kernels_rate_and_fixed_errors_over_its_shapes():
    rows = [
        {"variant": "a", "us_per_1024_k": 4.0, "fixed_us": 8.0, "model_us": [1], "model_us_per_1024_k": 4.4,
         "model_fixed_us": 8.0},
        {"variant": "a", "us_per_1024_k": 5.0, "fixed_us": 10.0, "model_us": [1], "model_us_per_1024_k": 4.5,
         "model_fixed_us": 11.0},
        {"variant": "b", "us_per_1024_k": 2.0, "fixed_us": 6.0, "model_us": [1], "model_us_per_1024_k": 2.0,
         "model_fixed_us": 3.0},
    ]
    summary = ksweep_fit.by_variant(rows)
    assert summary["a"]["slope_error"] == pytest.approx([0.1, -0.1])
    assert summary["a"]["fixed_diff_us"] == pytest.approx([0.0, 1.0])
    assert summary["b"]["slope_error"] == pytest.approx([0.0])
    assert summary["b"]["fixed_diff_us"] == pytest.approx([-3.0])
    assert ksweep_fit.median([3.0, 1.0, 2.0, 10.0]) == pytest.approx(2.5)


def test_by_variant_without_the_model_is_refused(tmp_path, capsys):
    with pytest.raises(ValueError, match="need the model"):
        ksweep_fit.by_variant([{"variant": "a", "us_per_1024_k": 4.0, "fixed_us": 8.0}])
    times = {("fp8", k, "tile64x64_stages4_ws"): 7.5 + 4.8 * k / 1024 for k in (1024, 2048)}
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps(report(times)))
    assert ksweep_fit.main([str(path), "--by-variant"]) == 1
    assert "give the overlap binary" in capsys.readouterr().err
