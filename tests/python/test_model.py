"""overlap.predict / compare / sweep / trace (python/overlap/model.py): the package gives the
numbers and the words of the C++ model, which the command-line tool prints too."""
import json
import math

import pandas as pd
import pytest

import overlap

GLA = "B=8,T=4096,H=16,K=128,V=128"


def test_predict_returns_the_models_numbers():
    p = overlap.predict("gla", "pingpong_fused", GLA, hw="H100")
    assert (p.workload, p.variant, p.hw) == ("gla", "pingpong_fused", "H100")
    assert p.shape_keys["B"] == 8 and p.shape_keys["T"] == 4096
    assert p.time_us > 0 and p.flops > 0 and p.hbm_bytes > 0
    assert p.bottleneck in {"hbm", "copy", "tensor", "fma", "sfu", "launch", "latency"}
    assert set(p.busy) >= {"copy", "tensor", "fma", "sfu", "hbm"}
    assert all(0 <= v <= 1.0 + 1e-9 for v in p.busy.values())
    # Achieved bandwidth is bytes over time: the fields agree with each other.
    assert p.achieved_GBps == pytest.approx(p.hbm_bytes / (p.time_us * 1e-6) / 1e9, rel=1e-6)


def test_predict_matches_the_command_line_json_and_table(cli):
    p = overlap.predict("gla", "pingpong_fused", GLA, hw="H100")
    args = ["predict", "--hw", "H100", "--workload", "gla", "--variant", "pingpong_fused", "--shape", GLA]
    assert p.to_dict() == cli.json(*args)
    assert str(p) == cli.run(*args).stdout


def test_repr_names_the_variant_time_and_bottleneck():
    p = overlap.predict("gla", "pipelined", "B=4,T=1024,H=32,K=64,V=64")
    text = repr(p)
    assert "gla pipelined_fused on H100" in text and f"{p.time_us:.2f} us" in text and p.bottleneck in text


def test_to_dict_is_plain_json_and_a_copy():
    p = overlap.predict("linrnn", "chunk_fused", "B=4,T=2048,d=256,dv=64")
    d = p.to_dict()
    assert json.loads(json.dumps(d)) == d
    d["time_us"] = -1
    assert p.to_dict()["time_us"] == p.time_us


def test_shape_as_a_dict_is_the_same_shape_as_text():
    a = overlap.predict("gla", "pipelined", {"B": 4, "T": 1024, "H": 32, "K": 64, "V": 64})
    b = overlap.predict("gla", "pipelined", "B=4,T=1024,H=32,K=64,V=64")
    assert a.to_dict() == b.to_dict()


def test_longer_sequences_take_longer():
    short = overlap.predict("gla", "pipelined", "B=4,T=1024,H=32,K=64,V=64")
    long = overlap.predict("gla", "pipelined", "B=4,T=8192,H=32,K=64,V=64")
    assert long.time_us > 4 * short.time_us


def test_compare_is_the_ratio_of_the_two_predictions():
    c = overlap.compare("gla", "sequential_fused", "pingpong_fused", GLA, hw="H100")
    a = overlap.predict("gla", "sequential_fused", GLA, hw="H100")
    b = overlap.predict("gla", "pingpong_fused", GLA, hw="H100")
    assert c.speedup == pytest.approx(a.time_us / b.time_us, rel=1e-12)
    assert c.a.to_dict() == a.to_dict() and c.b.to_dict() == b.to_dict()
    assert c.reason and "pingpong_fused" in repr(c)


def test_compare_matches_the_command_line(cli):
    c = overlap.compare("gla", "sequential_fused", "pingpong_fused", GLA, hw="H100")
    j = cli.json("compare", "--hw", "H100", "--workload", "gla", "--variants", "sequential_fused,pingpong_fused",
                 "--shape", GLA)
    assert (c.speedup, c.reason) == (j["speedup"], j["reason"])


def test_sweep_has_one_row_per_prediction():
    df = overlap.sweep("gla", variants=["sequential_fused", "pingpong_fused"], shape="B=4,H=32,K=64,V=64",
                       sweep="T=1024:16384:x2", hw=["H100", "H200"])
    assert len(df) == 2 * 2 * 5
    assert sorted(df["T"].unique()) == [1024, 2048, 4096, 8192, 16384]
    assert set(df["hw"]) == {"H100", "H200"}
    assert list(df.columns[:4]) == ["hw", "workload", "variant", "shape"]
    assert df["error"].isna().all()
    row = df[(df["hw"] == "H200") & (df["variant"] == "pingpong_fused") & (df["T"] == 4096)].iloc[0]
    p = overlap.predict("gla", "pingpong_fused", "B=4,T=4096,H=32,K=64,V=64", hw="H200")
    assert row["time_us"] == p.time_us and row["bottleneck"] == p.bottleneck
    assert row["busy_tensor"] == p.busy["tensor"]


def test_sweep_axes_combine_as_a_product_and_all_means_every_variant():
    df = overlap.sweep("gla", variants="all", shape="B=2,H=8,K=64,V=64", sweep=["T=512/1024", "B=1:4:+1"])
    names = {v["name"] for v in overlap.variants("gla")}
    assert set(df["variant"]) == names
    assert len(df) == len(names) * 2 * 4
    assert sorted(df["B"].unique()) == [1, 2, 3, 4]


def test_sweep_matches_the_command_line_csv(cli):
    df = overlap.sweep("projchain", variants="all", shape="B=4,d=2048,H=16,dk=128", sweep="T=512:4096:x2", hw="all")
    r = cli.run("predict", "--hw", "all", "--workload", "projchain", "--variant", "all", "--shape",
                "B=4,d=2048,H=16,dk=128", "--sweep", "T=512:4096:x2", "--format", "json")
    rows = json.loads(r.stdout)
    assert len(rows) == len(df)
    for (_, row), expected in zip(df.iterrows(), rows):
        assert row["variant"] == expected["variant"]
        if "error" in expected:
            assert math.isnan(row["time_us"]) and row["error"] == expected["error"]
        else:
            assert row["time_us"] == expected["time_us"] and pd.isna(row["error"])


def test_sweep_reports_a_variant_that_cannot_run_as_a_row_with_the_same_names():
    df = overlap.sweep("gla", variants="pingpong,pipelined", shape="B=4,H=32,K=64,V=64", sweep="T=1024/2048",
                       hw="T4,H100")
    refused = df[df["error"].notna()].set_index(["hw", "variant", "T"])["error"]
    # pingpong needs TMA and wgmma: refused on the T4; pipelined runs there on a refitted tiling.
    assert sorted(refused.index) == [("T4", "pingpong_fused", t) for t in (1024, 2048)]
    assert "T4 is sm_75" in refused[("T4", "pingpong_fused", 1024)]
    assert df[df["error"].notna()]["time_us"].isna().all()
    predicted = df[df["error"].isna()]
    assert predicted["time_us"].gt(0).all() and len(predicted) == 6  # H100 x 2 variants x 2 T, T4 pipelined x 2


def test_tune_ranks_every_variant_and_matches_the_command_line(cli):
    shape = "M=256,N=4096,K=7168,fmt=1"
    t = overlap.tune("dualgemm", shape, hw="H100")
    times = [r["time_us"] for r in t.ranked if "time_us" in r]
    assert times == sorted(times) and len(t.ranked) == len(overlap.variants("dualgemm"))
    assert t.pick == t.ranked[0]["variant"]
    assert t.ranked[0]["time_us"] == pytest.approx(overlap.predict("dualgemm", t.pick, shape).time_us, rel=1e-12)
    args = ["tune", "--hw", "H100", "--workload", "dualgemm", "--shape", shape]
    assert t.to_dict() == cli.json(*args)
    assert str(t) == cli.run(*args).stdout


def test_trace_is_a_chrome_trace_written_where_asked(tmp_path):
    path = tmp_path / "t.json"
    trace, p = overlap.trace("gla", "pingpong_fused", "B=4,T=1024,H=32,K=64,V=64", path=path)
    assert trace == json.loads(path.read_text())
    assert trace["traceEvents"]
    assert p.to_dict() == overlap.predict("gla", "pingpong_fused", "B=4,T=1024,H=32,K=64,V=64").to_dict()


def test_listing_workloads_variants_and_reference_shapes():
    assert overlap.workloads() == ["gla", "linrnn", "projchain", "dualgemm", "gla_backward"]
    gla = [v["name"] for v in overlap.variants("gla")]
    assert "pingpong_fused" in gla and all(v["workload"] == "gla" for v in overlap.variants("gla"))
    assert overlap.reference_shape("linrnn").startswith("B=4,T=2048,d=256,dv=64")


# Bad input: each refused with overlap.OverlapError (a ValueError) carrying the message the
# command-line tool prints for the same input, which names the offending value.
BAD_INPUT = [
    # (python call, the same request to the tool, a piece of the message)
    (lambda: overlap.predict("gru", "pipelined"), ["predict", "--workload", "gru", "--variant", "pipelined"], "'gru'"),
    (lambda: overlap.predict("gla", "warp9"), ["predict", "--workload", "gla", "--variant", "warp9"], "'warp9'"),
    (lambda: overlap.predict("gla", "pipelined", "B=4,Q=3"),
     ["predict", "--workload", "gla", "--variant", "pipelined", "--shape", "B=4,Q=3"], "Q"),
    (lambda: overlap.predict("gla", "pipelined", "B=four"),
     ["predict", "--workload", "gla", "--variant", "pipelined", "--shape", "B=four"], "four"),
    (lambda: overlap.predict("gla", "pipelined", {"B": "x"}),
     ["predict", "--workload", "gla", "--variant", "pipelined", "--shape", "B=x"], "'x'"),
    (lambda: overlap.predict("gla", "pipelined", "K=100"),
     ["predict", "--workload", "gla", "--variant", "pipelined", "--shape", "K=100"], "K=100"),
    (lambda: overlap.predict("gla", "pipelined", hw="H800"),
     ["predict", "--hw", "H800", "--workload", "gla", "--variant", "pipelined"], "H800"),
    (lambda: overlap.predict("gla", "pingpong_fused", hw="T4"),
     ["predict", "--hw", "T4", "--workload", "gla", "--variant", "pingpong_fused"], "sm_75"),
    (lambda: overlap.sweep("gla", "pipelined", sweep="T=1024:16384:y2"),
     ["predict", "--workload", "gla", "--variant", "pipelined", "--sweep", "T=1024:16384:y2"], "T=1024:16384:y2"),
    (lambda: overlap.sweep("gla", "pipelined,warp9", sweep="T=1024/2048"),
     ["predict", "--workload", "gla", "--variant", "pipelined,warp9", "--sweep", "T=1024/2048"], "'warp9'"),
    (lambda: overlap.compare("gla", "pipelined", "warp9"),
     ["compare", "--workload", "gla", "--variants", "pipelined,warp9"], "'warp9'"),
]


@pytest.mark.parametrize("call,cli_args,needle", BAD_INPUT, ids=[" ".join(c[1][1:]) for c in BAD_INPUT])
def test_bad_input_raises_the_tools_message(call, cli_args, needle, cli_if_built):
    with pytest.raises(overlap.OverlapError) as e:
        call()
    assert isinstance(e.value, ValueError)
    assert needle in str(e.value)
    if cli_if_built:
        assert str(e.value) == cli_if_built.error(*cli_args)


@pytest.mark.parametrize("call,message", [
    (lambda: overlap.predict("gla", "pipelined", 4096), "shape=4096"),
    (lambda: overlap.predict(3, "pipelined"), "workload=3"),
    (lambda: overlap.compare("gla", "pipelined", None), "b=None"),
    (lambda: overlap.predict("gla", "pipelined", hw=3), "hw=3"),
    (lambda: overlap.predict("gla", "pipelined", hw=["H100", "H200"]), "one profile"),
    (lambda: overlap.sweep("gla", variants=3), "variants=3"),
    (lambda: overlap.sweep("gla", sweep=1024), "sweep=1024"),
])
def test_arguments_of_the_wrong_kind_raise_type_errors_naming_them(call, message):
    with pytest.raises(TypeError, match=message):
        call()
