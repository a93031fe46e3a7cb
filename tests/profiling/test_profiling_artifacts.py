"""The profiling artifacts people look at: timeline spans that nest exactly, and a report whose op statistics leave
out the warm-up, name TensorFlow's op types, give the Ascend estimate its own scale and draw no label over another."""

import datetime
import decimal
import json
import os
import random
import re

import pytest
import tensorflow as tf
from helpers.paths import REPO_ROOT
from helpers.profiling import build_cnn, end_profiles, models, num, profiled_config, read_csv, the_profile, train

from npu_bridge.core.profiling import charts, export, layout, report, summary, timeline
from npu_bridge.core.profiling.cli import main
from npu_bridge.estimator.npu import util

v1 = tf.compat.v1


@pytest.fixture(autouse=True)
def _no_profile_left():
    yield
    end_profiles()


def training_model_id(profile_dir):
    training = [m for m in models(profile_dir).values() if m["training"]]
    assert len(training) == 1, models(profile_dir)
    return training[0]["model_id"]


def read_trace(path):
    """A trace-event JSON file with its numbers read exactly (``ts`` 12.345 is 12345 ns, not a float near it)."""
    with open(path, encoding="utf-8") as f:
        return json.load(f, parse_float=decimal.Decimal)


def as_ns(us):
    """An exact us value of the trace in ns; it must be a whole number of ns."""
    ns = us * 1000
    assert ns == int(ns), us
    return int(ns)


def spans_of(trace):
    """{(pid, tid): [(start ns, end ns, event), ...] by start} of the complete events."""
    tracks = {}
    for event in trace["traceEvents"]:
        if event["ph"] == "X":
            start = as_ns(event["ts"])
            tracks.setdefault((event["pid"], event["tid"]), []).append((start, start + as_ns(event["dur"]), event))
    for spans in tracks.values():
        spans.sort(key=lambda span: (span[0], -span[1]))
    return tracks


def profile_loop_training(output, loops, steps_per_loop):
    """Trains the CNN in ``loops`` runs of an iterations_per_loop loop of ``steps_per_loop`` steps."""
    graph, t = build_cnn()
    config = profiled_config(output, training_trace="on", task_trace="on")
    config.graph_options.rewrite_options.custom_optimizers[0].parameter_map["iterations_per_loop"].i = steps_per_loop
    with graph.as_default():
        loop = util.IterationPerLoop()
        train_loop = loop.create_iteration_per_loop_var(t["train"])
    with v1.Session(graph=graph, config=config) as sess:
        sess.run(t["init"])
        loop.load_iteration_per_loop_var(sess, steps_per_loop)
        for _ in range(loops):
            sess.run(train_loop, t["feed"])
        sess.run(t["shutdown"])


@pytest.mark.parametrize("loop", [False, True], ids=["session_runs", "iterations_per_loop"])
def test_every_step_span_meets_its_neighbours_and_holds_its_ops(tmp_path, loop):
    if loop:
        profile_loop_training(tmp_path, loops=4, steps_per_loop=5)
    else:
        train(profiled_config(tmp_path, training_trace="on", task_trace="on"), steps=20)
    profile = the_profile(tmp_path)
    info = layout.read_info(profile)
    trace = read_trace(layout.exported_file(profile, "msprof", "json"))

    # ts counts from the profile's start, whose absolute time is in the trace's metadata (and in info.json)
    epoch = trace["otherData"]["profile_start_epoch_ns"]
    assert isinstance(epoch, int) and epoch == info["start_epoch_ns"]
    start_time = datetime.datetime.fromisoformat(trace["otherData"]["profile_start_time"])
    assert abs(start_time - datetime.datetime.fromisoformat(info["start_time"])) < datetime.timedelta(seconds=1)
    tracks = spans_of(trace)
    first = min(start for spans in tracks.values() for start, _, _ in spans)
    assert 0 <= first < 10 * 10**9, first  # the first traced run starts right after the profile does

    # no two spans of a track overlap: iterations, FP_BP / Refresh, each stream, Session.run calls
    for track, spans in tracks.items():
        for (_, end, event), (start, _, following) in zip(spans, spans[1:]):
            assert end <= start, (track, event, following)

    # the iterations of the training graph follow each other exactly: each starts where the previous one ends
    model = training_model_id(profile)
    step_pid = info["device_id"] * 10 + timeline.STEP_TRACE
    steps = {event["args"]["Iteration ID"]: (start, end) for start, end, event in tracks[(step_pid, model)]}
    assert sorted(steps) == list(range(1, 21))
    for iteration in range(2, 21):
        assert steps[iteration][0] == steps[iteration - 1][1]

    # every op of the graph lies within its iteration, and so do FP_BP and Refresh
    checked = 0
    for spans in tracks.values():
        for start, end, event in spans:
            args = event.get("args", {})
            if "Op Type" in args and args["Model ID"] == model:
                step_start, step_end = steps[args["Iteration ID"]]
                assert step_start <= start <= end <= step_end, event
                checked += 1
    assert checked >= 20 * 10
    parts = tracks[(step_pid, 1000 + model)]
    assert len(parts) == 2 * 20
    for start, end, event in parts:
        assert any(step_start <= start <= end <= step_end for step_start, step_end in steps.values()), event

    # relative times plus the epoch are the CSVs' absolute times, to the ns
    _, rows = read_csv(profile, "step_trace")
    for row in rows:
        assert num(row["Iteration End(us)"]) * 1000 == epoch + steps[int(row["Iteration ID"])][1]
    step_json = read_trace(layout.exported_file(profile, "step_trace", "json"))
    assert step_json["otherData"] == trace["otherData"]
    assert {as_ns(e["ts"]) for e in step_json["traceEvents"] if e["name"].startswith("Iteration ")} == {
        start for start, _ in steps.values()
    }

    # a viewer that reads ts as a float and rounds ts * 1000 to ns (Perfetto) sees the same spans
    with open(layout.exported_file(profile, "msprof", "json"), encoding="utf-8") as f:
        floats = json.load(f)
    exact = [(e["ts"], e["dur"]) for e in trace["traceEvents"] if e["ph"] == "X"]
    rounded = [(round(e["ts"] * 1000), round(e["dur"] * 1000)) for e in floats["traceEvents"] if e["ph"] == "X"]
    assert rounded == [(as_ns(ts), as_ns(dur)) for ts, dur in exact]


def test_complete_events_are_exact_in_ns_far_from_the_start():
    rng = random.Random(0)
    epoch = 1_795_401_626_688_994_517
    for _ in range(2000):
        start = epoch + rng.randrange(0, 10**15)  # up to 11 days into the profile
        middle, end = start + rng.randrange(1, 10**9), start + rng.randrange(10**9, 2 * 10**9)
        first = timeline.complete_event("a", 0, 0, start, middle, epoch)
        second = timeline.complete_event("b", 0, 0, middle, end, epoch)
        text = json.loads(json.dumps([first, second]), parse_float=decimal.Decimal)
        assert as_ns(text[0]["ts"]) == start - epoch and as_ns(text[1]["ts"]) == middle - epoch
        assert text[0]["ts"] + text[0]["dur"] == text[1]["ts"]  # they touch, exactly
        assert as_ns(text[1]["ts"] + text[1]["dur"]) == end - epoch


def test_profiles_recorded_before_the_epoch_was_kept_count_from_their_start_time():
    assert export.profile_epoch_ns({"start_epoch_ns": 5, "start_time": "2026-01-01T00:00:00.000+00:00"}) == 5
    assert export.profile_epoch_ns({"start_time": "2026-11-23T02:40:29.294+00:00"}) == 1795401629294000000
    assert export.profile_epoch_ns({"start_epoch_ns": True}) is None
    assert export.profile_epoch_ns({"start_time": "yesterday"}) is None


def ascend_profile(output, steps):
    """A CNN trained ``steps`` steps on the simulated Ascend backend (estimates, and precision roundings that
    artifacts call Cast)."""
    config = profiled_config(output, training_trace="on", task_trace="on")
    config.graph_options.rewrite_options.custom_optimizers[0].parameter_map["device_target"].s = b"ascend"
    train(config, steps=steps)
    return the_profile(output)


@pytest.mark.op_types
def test_report_op_statistics_leave_out_the_warmup_and_show_tensorflow_op_types(tmp_path, capsys):
    profile = ascend_profile(tmp_path / "prof", steps=5)
    model = training_model_id(profile)
    _, ops = read_csv(profile, "op_summary")
    conv = [op for op in ops if op["Op Name"] == "conv/Conv2D"]
    assert [int(op["Infer ID"]) for op in conv] == [1, 2, 3, 4, 5]

    loaded = summary.load(profile)
    assert loaded.warmup.iterations == ((model, 1),) and not loaded.warmup.included
    warm = [op for op in ops if int(op["Model ID"]) == model and op["Infer ID"] == "1"]
    assert loaded.warmup.op_runs == len(warm)
    assert loaded.warmup.total_us == pytest.approx(sum(float(op["Task Duration(us)"]) for op in warm))
    by_type = {(row.op_type, row.tf_op_type): row for row in loaded.op_types}
    assert by_type[("Conv2D", "Conv2D")].count == 4
    assert by_type[("Conv2D", "Conv2D")].total_us == pytest.approx(
        sum(float(op["Task Duration(us)"]) for op in conv[1:])
    )
    assert sum(row.ratio for row in loaded.op_types) == pytest.approx(100)
    # the precision pass's roundings: Cast in Ascend's files, NpuRound in TensorFlow's graph
    assert ("Cast", "NpuRound") in by_type
    assert {op["TensorFlow Op Type"] for op in ops if op["OP Type"] == "Cast"} >= {"NpuRound"}
    assert by_type[("Conv2D", "Conv2D")].estimate_us > 0
    assert all(row.estimate_us is None for row in loaded.op_types if row.core_type != "AI_CORE")
    kept = summary.load(profile, include_warmup=True)
    assert {(r.op_type, r.tf_op_type): r for r in kept.op_types}[("Conv2D", "Conv2D")].count == 5
    assert kept.warmup.included and kept.warmup.op_runs == loaded.warmup.op_runs

    assert main(["report", profile]) == 0
    text = open(report.report_path(profile), encoding="utf-8").read()
    assert (
        f"Op statistics leave out the warm-up, the first iteration of graph_{model}: {len(warm)} op executions" in text
    )
    assert "<code>--include-warmup</code>" in text
    assert "<th class='l'>TensorFlow op type</th><th class='l'>OP Type (Ascend)</th>" in text
    assert re.search(r"<tr><td class='l'>Npu<wbr>Round</td><td class='l'>Cast</td>", text)
    assert main(["report", profile, "--include-warmup", "-o", str(tmp_path / "all.html")]) == 0
    assert "Op statistics include the warm-up" in open(tmp_path / "all.html", encoding="utf-8").read()
    assert main(["summary", profile, "--top", "50"]) == 0
    assert re.search(
        rf"top op types by time \(the first iteration of graph_{model} left out\): .*Cast \(TF NpuRound\)",
        capsys.readouterr().out,
    )

    # the estimate is on a right axis of its own, in the upper part of the chart, not on the floor
    canvas, bars, cut, _ = report.step_time_canvas(loaded)
    assert canvas.overlaps() == []
    assert all(bar.iteration == 1 for bar in cut)  # only the warm-up may be taller than the steady iterations
    assert ("Bars cut at the top (the scale follows the steady iterations): iteration 1: " in text) == bool(cut)
    svg = canvas.svg("chart")
    assert ">estimated (µs)</text>" in svg or ">estimated (ms)</text>" in svg
    line = re.search(r"<polyline points='([^']*)'[^>]*stroke='" + charts.COLORS["estimate"], svg)
    heights = {float(point.split(",")[1]) for point in line.group(1).split()}
    plot_bottom = max(
        float(y) for y in re.findall(r"<line x1='[^']*' y1='[^']*' x2='[^']*' y2='([^']*)' stroke='#9aa5b1'", svg)
    )
    assert all(y < plot_bottom - 100 for y in heights), (heights, plot_bottom)  # >= 40% of the 240 px plot


def bars(count, total=15000.0, estimate=50.0, first=100000.0, rng=None):
    rng = rng or random.Random(count)
    result = []
    for index in range(count):
        time = first if index == 0 else total * rng.uniform(0.5, 1.5)
        parts = (("data_aug", time * 0.05), ("fp_bp", time * 0.9), ("refresh", time * 0.01), ("other", time * 0.04))
        result.append(charts.Bar(index + 1, time, parts, estimate and estimate * rng.uniform(0.9, 1.1)))
    return result


@pytest.mark.parametrize(
    "count, total, estimate",
    [
        (1, 15000.0, 50.0),
        (2, 15000.0, None),
        (5, 0.4, 0.003),  # sub-us iterations
        (90, 15000.0, 50.0),
        (90, 2.5e7, 9.0e6),  # 25 s iterations, estimates in ms
        (600, 987.0, 12345.0),  # an estimate above the measured time
        (600, 15000.0, None),
    ],
)
def test_step_time_chart_labels_never_overlap(count, total, estimate):
    data = bars(count, total, estimate, first=total * 7)
    steady = max(bar.total for bar in data[1:]) if count > 1 else 0.0
    canvas, cut = charts.step_time_chart(data, steady)
    assert canvas.overlaps() == []
    assert [bar.iteration for bar in cut] == ([1] if count > 1 else [])
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", canvas.svg("chart"))
    assert f"iteration {count}" in texts and "iteration 1" in texts
    assert ("estimated Ascend 910 (roofline), right axis" in texts) == bool(estimate)


def test_the_overlap_check_sees_labels_that_touch_or_leave_the_canvas():
    canvas = charts.Canvas(200, 50)
    canvas.text(10, 20, "96.91 ms", anchor="start")
    canvas.text(40, 24, "105.0 ms", anchor="middle")  # the old chart's cut-bar label over the top tick label
    canvas.text(5, 4, "top")  # half above the canvas
    assert len(canvas.overlaps()) == 2
    assert not canvas.text_if_free(30, 20, "x")
    assert canvas.text_if_free(150, 40, "free")


def test_nice_scales():
    scale = charts.nice_scale(96910.0)
    assert (scale.unit, [scale.label(t) for t in scale.ticks]) == ("ms", ["0", "25", "50", "75", "100"])
    scale = charts.nice_scale(50.702)
    assert (scale.unit, [scale.label(t) for t in scale.ticks]) == ("µs", ["0", "20", "40", "60"])
    scale = charts.nice_scale(0.9)
    assert [scale.label(t) for t in scale.ticks] == ["0.00", "0.25", "0.50", "0.75", "1.00"]
    assert all(charts.nice_scale(top).top_us >= top for top in (0.003, 1.0, 999.0, 1000.0, 123456.0, 3.3e7))


def test_render_tool_explains_a_missing_browser(tmp_path, capsys):
    import importlib.util

    spec = importlib.util.spec_from_file_location("render_report", os.path.join(REPO_ROOT, "tools", "render_report.py"))
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    assert tool.main([str(tmp_path), "--browser", str(tmp_path / "no-such-browser")]) == 2
    assert "no browser found" in capsys.readouterr().err
