"""overlap.plot (python/overlap/plot.py): the sweep plot and the predicted-vs-measured plot,
written as PNG and SVG."""
import json
import pathlib

import numpy as np
import pytest

import overlap
from overlap import plot

REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def sweep():
    return overlap.sweep("gla", variants="sequential_fused,pingpong_fused", shape="B=4,H=32,K=64,V=64",
                         sweep="T=1024:16384:x2", hw="H100,H200")


def test_sweep_plot_one_panel_per_gpu_one_line_per_variant(sweep, tmp_path):
    fig = plot.sweep_plot(sweep, x="T", path=tmp_path / "sweep.png")
    assert (tmp_path / "sweep.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [ax.get_title() for ax in fig.axes] == ["gla on H100", "gla on H200"]
    for ax, hw in zip(fig.axes, ["H100", "H200"]):
        lines = {line.get_label(): line for line in ax.get_lines()}
        assert set(lines) == {"sequential_fused", "pingpong_fused"}
        expected = sweep[(sweep["hw"] == hw) & (sweep["variant"] == "pingpong_fused")].sort_values("T")
        np.testing.assert_array_equal(lines["pingpong_fused"].get_xdata(), expected["T"])
        np.testing.assert_array_equal(lines["pingpong_fused"].get_ydata(), expected["time_us"])


def test_speedup_plot_against_a_baseline_gpu_as_svg(sweep, tmp_path):
    fig = plot.sweep_plot(sweep, x="T", y="speedup", by="hw", baseline="H100", path=tmp_path / "speedup.svg")
    assert "<svg" in (tmp_path / "speedup.svg").read_text()
    assert [ax.get_title() for ax in fig.axes] == ["sequential_fused", "pingpong_fused"]
    lines = {line.get_label(): line for line in fig.axes[1].get_lines() if not line.get_label().startswith("_")}
    assert set(lines) == {"H100", "H200"}
    np.testing.assert_allclose(lines["H100"].get_ydata(), 1.0)
    h100 = sweep[(sweep["hw"] == "H100") & (sweep["variant"] == "pingpong_fused")].sort_values("T")["time_us"]
    h200 = sweep[(sweep["hw"] == "H200") & (sweep["variant"] == "pingpong_fused")].sort_values("T")["time_us"]
    np.testing.assert_allclose(lines["H200"].get_ydata(), h100.to_numpy() / h200.to_numpy())


@pytest.mark.parametrize("kwargs,message", [
    ({"x": "L"}, "x='L' is not a column of the sweep \\(shape keys: B, T, H, K, V"),
    ({"y": "speedup"}, "y='speedup' needs baseline="),
    ({"y": "speedup", "baseline": "warp9"}, "baseline='warp9' is not a variant of the sweep"),
    ({"by": "gpu"}, "by='gpu' is not 'variant' or 'hw'"),
])
def test_sweep_plot_refuses_what_it_cannot_draw(sweep, kwargs, message):
    with pytest.raises(ValueError, match=message):
        plot.sweep_plot(sweep, **kwargs)


def test_sweep_plot_refuses_several_rows_per_point():
    df = overlap.sweep("gla", "pipelined", "B=4,H=32,K=64,V=64", sweep=["T=1024/2048", "B=2/4"])
    with pytest.raises(ValueError, match="shape keys other than x='T' vary \\(B\\)"):
        plot.sweep_plot(df, x="T")


def _report(rows):
    return {"format": "overlap-validation-report", "gpu": "test GPU", "profile": "H100", "rows": rows,
            "summary": {"median_abs_error": 0.1, "max_abs_error": 0.2}}


def test_validation_plot_puts_each_passed_row_at_measured_predicted(tmp_path):
    rows = [{"workload": "gla", "passed": True, "measured_us": 100.0, "predicted_us": 110.0},
            {"workload": "gla", "passed": True, "measured_us": 20.0, "predicted_us": 16.0},
            {"workload": "linrnn", "passed": True, "measured_us": 300.0, "predicted_us": 290.0},
            {"workload": "linrnn", "passed": False, "measured_us": 50.0, "predicted_us": 10.0}]
    path = tmp_path / "report.json"
    path.write_text(json.dumps(_report(rows)))
    fig = plot.validation_plot(path, path=tmp_path / "v.svg")
    assert "<svg" in (tmp_path / "v.svg").read_text()
    points = {c.get_label(): c.get_offsets().tolist() for c in fig.axes[0].collections}
    assert points == {"gla": [[100.0, 110.0], [20.0, 16.0]], "linrnn": [[300.0, 290.0]]}
    assert "3 runs" in fig.axes[0].get_title()


def test_validation_plot_of_the_current_report(tmp_path):
    report = REPO / "docs/validation/current/report.json"
    rows = json.loads(report.read_text())["rows"]
    fig = plot.validation_plot(report, path=tmp_path / "current.png")
    assert (tmp_path / "current.png").stat().st_size > 10_000
    assert sum(len(c.get_offsets()) for c in fig.axes[0].collections) == sum(r["passed"] for r in rows)


def test_validation_plot_refuses_what_is_not_a_report():
    with pytest.raises(ValueError, match="format='overlap-test-vectors'"):
        plot.validation_plot({"format": "overlap-test-vectors"})
    with pytest.raises(ValueError, match="no passed, timed rows"):
        plot.validation_plot(_report([{"workload": "gla", "passed": False, "measured_us": 1, "predicted_us": 1}]))
