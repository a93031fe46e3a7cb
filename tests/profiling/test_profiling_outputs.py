"""Profiling end to end: what a profiled TF1 training run leaves on disk, and the ways to turn profiling on."""

import json
import os
import re

import helpers.dump
import numpy as np
import pytest
import tensorflow as tf
from helpers.paths import REPO_ROOT
from helpers.processes import run_python
from helpers.profiling import (
    assert_ops_within_iterations,
    build_cnn,
    end_profiles,
    models,
    npu_config,
    num,
    profiled_config,
    profiling_options,
    read_csv,
    read_timeline,
    the_profile,
    train,
)
from tensorflow.core.protobuf import rewriter_config_pb2
from tensorflow.python.framework import op_def_registry

from npu_bridge.core.profiling import layout, summary
from npu_bridge.estimator import npu_ops
from npu_bridge.estimator.npu import npu_plugin, util
from npu_bridge.profiler.profiler import Profiler

v1 = tf.compat.v1


@pytest.fixture(autouse=True)
def _no_profile_left():
    yield
    end_profiles()


def training_model(profile_dir):
    training = [m for m in models(profile_dir).values() if m["training"]]
    assert len(training) == 1, models(profile_dir)
    return training[0]


@pytest.mark.op_types
def test_files_have_upstream_columns_and_consistent_numbers(tmp_path, npu_log):
    train(profiled_config(tmp_path, training_trace="on", task_trace="on"), steps=6)
    profile = the_profile(tmp_path)
    assert os.path.basename(profile).startswith("PROF_") and profile.endswith("_rank0")
    assert os.path.isfile(layout.raw_path(profile, 0))
    header, ops = read_csv(profile, "op_summary")
    assert header == [
        "Device_id",
        "Model Name",
        "Model ID",
        "Task ID",
        "Stream ID",
        "Infer ID",
        "Op Name",
        "OP Type",
        "OP State",
        "Task Type",
        "Task Start Time(us)",
        "Task Duration(us)",
        "Task Wait Time(us)",
        "Block Num",
        "Mix Block Num",
        "HF32 Eligible",
        "Input Shapes",
        "Input Data Types",
        "Input Formats",
        "Output Shapes",
        "Output Data Types",
        "Output Formats",
        "TensorFlow Op Type",
    ]
    header, stats = read_csv(profile, "op_statistic")
    assert header == [
        "Device_id",
        "OP Type",
        "Core Type",
        "Count",
        "Total Time(us)",
        "Min Time(us)",
        "Avg Time(us)",
        "Max Time(us)",
        "Ratio(%)",
    ]
    header, steps = read_csv(profile, "step_trace")
    assert header == [
        "Device_id",
        "Iteration ID",
        "FP Start(us)",
        "BP End(us)",
        "Iteration End(us)",
        "Iteration Time(us)",
        "FP to BP Time(us)",
        "Iteration Refresh(us)",
        "Data Aug Bound(us)",
        "Model ID",
    ]

    model = training_model(profile)
    assert model["runs"] == model["iterations"] == 6
    assert [int(r["Iteration ID"]) for r in steps] == [1, 2, 3, 4, 5, 6]
    assert {int(r["Model ID"]) for r in steps} == {model["model_id"]}
    previous_end = None
    for row in steps:
        fp, bp, end = num(row["FP Start(us)"]), num(row["BP End(us)"]), num(row["Iteration End(us)"])
        assert fp <= bp <= end
        assert num(row["FP to BP Time(us)"]) == bp - fp
        assert num(row["Iteration Refresh(us)"]) == end - bp
        if previous_end is None:
            assert row["Data Aug Bound(us)"] == "N/A"
            assert num(row["Iteration Time(us)"]) == end - fp
        else:
            assert num(row["Iteration Time(us)"]) == end - previous_end
            assert num(row["Data Aug Bound(us)"]) == fp - previous_end
        previous_end = end
    assert_ops_within_iterations(profile, model["model_id"])

    conv = [op for op in ops if op["Op Name"] == "conv/Conv2D"]
    assert len(conv) == 6 and {op["Task Type"] for op in conv} == {"AI_CORE"}
    assert conv[0]["Input Shapes"] == "4,8,8,3;3,3,3,4" and conv[0]["Output Shapes"] == "4,6,6,4"
    assert conv[0]["Input Data Types"] == "FLOAT;FLOAT" and conv[0]["Output Formats"] == "NHWC"
    assert sum(int(s["Count"]) for s in stats) == len(ops)
    by_type = {s["OP Type"]: s for s in stats}
    assert int(by_type["Conv2D"]["Count"]) == 6
    assert num(by_type["Conv2D"]["Total Time(us)"]) == sum(num(op["Task Duration(us)"]) for op in conv)
    assert sum(float(s["Ratio(%)"]) for s in stats) == pytest.approx(100, abs=0.1)
    assert not [op for op in ops if op["OP Type"] in ("Const", "NoOp", "NPUShutdown", "VarHandleOp")]

    summary = "\n".join(npu_log)
    assert "6 iterations of graph" in summary and "mean iteration time" in summary
    assert "FP to BP" in summary and "top op types by time (the first iteration of graph_" in summary
    assert os.path.isfile(os.path.join(profile, "report.html"))


def test_timeline_is_trace_event_json_with_streams_iterations_and_host_runs(tmp_path):
    train(profiled_config(tmp_path, training_trace="on"), steps=3)
    profile = the_profile(tmp_path)
    events = read_timeline(profile)["traceEvents"]
    assert events and all(
        e["ph"] in ("X", "M") and isinstance(e["pid"], int) and isinstance(e["tid"], int) and isinstance(e["name"], str)
        for e in events
    )
    spans = [e for e in events if e["ph"] == "X"]
    assert all(e["dur"] >= 0 and e["ts"] >= 0 for e in spans)  # us since the profile's start
    assert read_timeline(profile)["otherData"]["profile_start_epoch_ns"] == layout.read_info(profile)["start_epoch_ns"]
    processes = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    names = {name.split(" (")[0]: pid for pid, name in processes.items()}
    assert {"Step Trace", "Ascend Hardware", "Host", "npu_bridge instrumentation"} <= set(names)
    iterations = [e for e in spans if e["pid"] == names["Step Trace"] and e["name"].startswith("Iteration ")]
    assert [e["args"]["Iteration ID"] for e in iterations] == [1, 2, 3]
    assert len([e for e in spans if e["pid"] == names["Host"]]) == 5  # init, 3 steps, shutdown
    assert [e["name"] for e in spans if e["pid"] == names["npu_bridge instrumentation"]] == ["NPUShutdown"]
    by_stream = {}
    for e in spans:
        if e["pid"] == names["Ascend Hardware"]:
            by_stream.setdefault(e["tid"], []).append((e["ts"], e["ts"] + e["dur"]))
    for intervals in by_stream.values():  # a stream never runs two ops at once
        intervals.sort()
        assert all(a_end <= b_start + 0.002 for (_, a_end), (b_start, _) in zip(intervals, intervals[1:]))
    step_json = json.load(open(layout.exported_file(profile, "step_trace", "json"), encoding="utf-8"))
    assert len([e for e in step_json["traceEvents"] if e["name"].startswith("Iteration ")]) == 3


@pytest.mark.op_types
def test_fp_and_bp_points_are_detected_when_empty(tmp_path):
    train(profiled_config(tmp_path, training_trace="on", fp_point="", bp_point=""), steps=2)
    model = training_model(the_profile(tmp_path))
    assert model["fp_point"] == "conv/Conv2D" and model["fp_point_source"] == "detected"
    assert model["bp_point"].startswith("gradients/conv/") and model["bp_point_source"] == "detected"


@pytest.mark.op_types
def test_named_fp_and_bp_points_are_used_and_a_missing_one_is_reported(tmp_path, npu_log):
    train(profiled_config(tmp_path, training_trace="on", fp_point="dense/MatMul", bp_point="no/such/op"), steps=2)
    profile = the_profile(tmp_path)
    model = training_model(profile)
    assert (model["fp_point"], model["fp_point_source"]) == ("dense/MatMul", "option")
    assert model["bp_point"].startswith("gradients/") and model["bp_point_source"] == "detected"
    assert any("bp_point 'no/such/op' does not run" in m for m in npu_log)
    _, ops = read_csv(profile, "op_summary")
    _, steps = read_csv(profile, "step_trace")
    matmul_starts = [
        op["Task Start Time(us)"]
        for op in ops
        if op["Op Name"] == "dense/MatMul" and int(op["Model ID"]) == model["model_id"]
    ]
    assert [r["FP Start(us)"] for r in steps] == matmul_starts


def test_legacy_colon_form_with_separate_fp_bp_keys(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the legacy form has no output key: the profile goes to ./
    train(
        npu_config(
            profiling_mode=True,
            profiling_options="training_trace:task_trace",
            fp_point="dense/MatMul",
            bp_point="gradients/dense/MatMul_grad/MatMul",
        ),
        steps=2,
    )
    profile = the_profile(tmp_path)
    model = training_model(profile)
    assert (model["fp_point"], model["bp_point"]) == ("dense/MatMul", "gradients/dense/MatMul_grad/MatMul")
    assert (model["fp_point_source"], model["bp_point_source"]) == ("option", "option")
    assert len(read_csv(profile, "step_trace")[1]) == 2 and read_csv(profile, "op_summary")[1]


@pytest.mark.parametrize(
    "options, files",
    [
        ("training_trace", {"step_trace", "msprof"}),
        ("op_trace", {"op_summary", "op_statistic", "msprof"}),
        ('{"task_time": "l0"}', {"op_summary", "op_statistic", "msprof"}),
    ],
)
def test_what_the_options_collect(options, files, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    train(npu_config(profiling_mode=True, profiling_options=options), steps=2)
    profile = the_profile(tmp_path)
    written = {
        prefix
        for prefix in layout.EXPORT_PREFIXES
        if layout.exported_file(profile, prefix, "csv") or layout.exported_file(profile, prefix, "json")
    }
    assert written == files
    if "op_summary" in files:
        header, _ = read_csv(profile, "op_summary")
        assert ("Input Shapes" in header) == (options == "op_trace")


@pytest.mark.op_types
def test_iterations_per_loop_runs_are_split_into_iterations(tmp_path):
    graph, t = build_cnn()
    config = profiled_config(tmp_path, training_trace="on")
    config.graph_options.rewrite_options.custom_optimizers[0].parameter_map["iterations_per_loop"].i = 3
    with graph.as_default():
        loop = util.IterationPerLoop()
        train_loop = loop.create_iteration_per_loop_var(t["train"])
    with v1.Session(graph=graph, config=config) as sess:
        sess.run(t["init"])
        loop.load_iteration_per_loop_var(sess, 3)
        sess.run(train_loop, t["feed"])
        sess.run(train_loop, t["feed"])
        sess.run(t["shutdown"])
    profile = the_profile(tmp_path)
    model = training_model(profile)
    assert (model["runs"], model["iterations"]) == (2, 6)
    _, steps = read_csv(profile, "step_trace")
    assert [int(r["Iteration ID"]) for r in steps] == [1, 2, 3, 4, 5, 6]
    assert all(num(r["FP Start(us)"]) <= num(r["BP End(us)"]) <= num(r["Iteration End(us)"]) for r in steps)
    assert_ops_within_iterations(profile, model["model_id"])
    _, ops = read_csv(profile, "op_summary")
    conv = [op for op in ops if op["Op Name"] == "conv/Conv2D"]  # the loop's node name is mapped back
    assert [int(op["Infer ID"]) for op in conv] == [1, 2, 3, 4, 5, 6]


def rnn_loop_graph(steps_per_branch):
    """A recurrent net on a fed batch: a forward op on the placeholder alone (computed once per run, before an
    iterations_per_loop loop), a TF1 while loop over the time steps, a cond that takes its first branch in the
    first ``steps_per_branch`` steps and the other afterwards, and a gradient descent update.

    Returns:
      (graph, tensors) with "train", "init", "shutdown", "feed" and "global_step".
    """
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [6, 4, 3], name="x")
        prepared = tf.nn.relu(tf.matmul(tf.reshape(x, [24, 3]), tf.eye(3) * 0.5), name="prepare")  # loop-invariant
        inputs = tf.reshape(prepared, [6, 4, 3])
        w = v1.get_variable("w", initializer=tf.fill([3, 3], 0.1))
        global_step = v1.train.get_or_create_global_step()

        def body(t, h):
            return t + 1, tf.tanh(tf.matmul(h, w) + inputs[t], name="cell")

        _, h = v1.while_loop(lambda t, h: t < 6, body, (0, tf.zeros([4, 3])), parallel_iterations=1)
        h = tf.cond(global_step < steps_per_branch, lambda: h * 2.0, lambda: h * 3.0)
        loss = tf.reduce_mean(tf.square(h), name="loss")
        train_op = v1.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)
        init = v1.global_variables_initializer()
        shutdown = npu_ops.shutdown_system()
    feed = {x: np.random.RandomState(0).rand(6, 4, 3).astype(np.float32)}
    return graph, {"train": train_op, "init": init, "shutdown": shutdown, "feed": feed, "global_step": global_step}


def test_iterations_per_loop_profiles_count_the_iterations_dumps_count(tmp_path):
    """iterations_per_loop=3, two runs of a graph with a nested while loop and a cond that changes branch between
    the runs: one model of 6 iterations whose Iteration ID is the dump step + 1, every iteration has its FP and
    BP points, and the summary's percentages are at most 100."""
    graph, t = rnn_loop_graph(steps_per_branch=3)
    (tmp_path / "dump").mkdir()
    config = profiled_config(tmp_path / "profile", training_trace="on", task_trace="on")
    parameters = config.graph_options.rewrite_options.custom_optimizers[0].parameter_map
    parameters["iterations_per_loop"].i = 3
    parameters["enable_dump"].b = True
    parameters["dump_path"].s = str(tmp_path / "dump").encode()
    with v1.Session(graph=graph, config=config) as sess:
        sess.run(t["init"])
        train_loop = util.set_iteration_per_loop(sess, t["train"], 3)
        for _ in range(2):
            sess.run(train_loop, t["feed"])
        assert sess.run(t["global_step"]) == 6
        sess.run(t["shutdown"])
    profile = the_profile(tmp_path / "profile")
    model = training_model(profile)
    assert (model["runs"], model["iterations"]) == (2, 6)
    assert model["fp_point"] not in (None, "prepare", "Reshape"), model  # these run once per run, before the loop
    _, steps = read_csv(profile, "step_trace")
    assert [int(r["Iteration ID"]) for r in steps] == [1, 2, 3, 4, 5, 6]
    assert all(r["FP Start(us)"] != "N/A" and r["BP End(us)"] != "N/A" for r in steps)
    assert_ops_within_iterations(profile, model["model_id"])
    dumped_steps = {a.step for a in helpers.dump.artifacts(tmp_path / "dump") if a.name.op_name == "prepare"}
    assert sorted(step + 1 for step in dumped_steps) == [int(r["Iteration ID"]) for r in steps]

    loaded = summary.load(profile)
    shares = [loaded.share(field) for field in ("fp_bp", "refresh", "data_aug")]
    assert all(0 <= share <= 100 for share in shares) and sum(shares) == pytest.approx(100)
    line = next(text for text in summary.format_text(loaded).splitlines() if "FP to BP" in text)
    assert all(int(percent) <= 100 for percent in re.findall(r"\((\d+)%\)", line)), line


def test_environment_variables_turn_profiling_on_and_options_win(tmp_path, monkeypatch):
    monkeypatch.setenv("PROFILING_MODE", "true")
    monkeypatch.setenv("PROFILING_OPTIONS", profiling_options(tmp_path / "env", training_trace="on"))
    train(npu_config(profiling_mode=False), steps=1)
    assert not (tmp_path / "env").exists()
    train(npu_config(), steps=2)
    assert len(read_csv(the_profile(tmp_path / "env"), "step_trace")[1]) == 2


def test_bad_profiling_environment_is_rejected(monkeypatch):
    monkeypatch.setenv("PROFILING_MODE", "1")
    monkeypatch.setenv("PROFILING_OPTIONS", '{"training_trace": "yes"}')
    with pytest.raises(ValueError, match="profiling_options.*environment variable PROFILING_OPTIONS"):
        v1.Session(config=npu_config())
    monkeypatch.delenv("PROFILING_OPTIONS")
    with pytest.raises(ValueError, match="profiling_options.*with profiling turned on by PROFILING_MODE"):
        v1.Session(config=npu_config(profiling_options="training_trace:memory"))
    monkeypatch.setenv("PROFILING_MODE", "maybe")
    with pytest.raises(ValueError, match="profiling_mode.*PROFILING_MODE"):
        v1.Session(config=npu_config())


def test_profiler_scope_traces_sessions_created_before_it(tmp_path, npu_log):
    graph, t = build_cnn()
    with v1.Session(graph=graph, config=npu_config()) as sess:
        sess.run(t["init"])
        sess.run(t["train"], t["feed"])
        with Profiler(level="L1", aic_metrics="PipeUtilization", output_path=str(tmp_path)) as profiler:
            for _ in range(3):
                sess.run(t["train"], t["feed"])
        sess.run(t["train"], t["feed"])
    assert profiler.directory == the_profile(tmp_path)
    events = read_timeline(profiler.directory)["traceEvents"]
    assert len([e for e in events if e["name"] == "Session.run"]) == 3
    assert len(read_csv(profiler.directory, "step_trace")[1]) == 3
    assert any("iterations of graph" in m for m in npu_log)


def test_profiler_arguments_and_conflicts(tmp_path):
    with pytest.raises(ValueError, match="level must be one of L0, L1, L2"):
        Profiler(level="L3")
    with pytest.raises(ValueError, match="aic_metrics"):
        Profiler(aic_metrics="Everything")
    with Profiler(output_path=str(tmp_path)):
        with pytest.raises(RuntimeError, match="already active"):
            Profiler(output_path=str(tmp_path)).start()
    with pytest.raises(RuntimeError, match="was not started"):
        Profiler().stop()
    graph, t = build_cnn()
    with v1.Session(graph=graph, config=profiled_config(tmp_path / "opt")) as sess:
        sess.run(t["init"])
        with pytest.raises(RuntimeError, match="profiling is already on"):
            Profiler(output_path=str(tmp_path)).start()


def test_npu_resource_init_enables_profiling_for_later_sessions(tmp_path):
    npu_plugin.npu_resource_init(
        enable_profiling=True, profiling_options=profiling_options(tmp_path, training_trace="on")
    )
    graph, t = build_cnn()
    with v1.Session(graph=graph, config=npu_config()) as sess:
        sess.run(t["init"])
        for _ in range(2):
            sess.run(t["train"], t["feed"])
        npu_plugin.npu_resource_shutdown()
    assert len(read_csv(the_profile(tmp_path), "step_trace")[1]) == 2


def test_collectives_are_on_the_communication_row_and_in_the_step_trace(tmp_path):
    train(profiled_config(tmp_path, training_trace="on"), steps=2, allreduce=True)
    profile = the_profile(tmp_path)
    _, ops = read_csv(profile, "op_summary")
    hccl = [op for op in ops if op["Task Type"] == "HCCL"]
    assert hccl and {op["OP Type"] for op in hccl} == {"CollectiveReduceV2"}
    assert {op["Task ID"] for op in hccl} == {op["Stream ID"] for op in hccl} == {"N/A"}
    header, steps = read_csv(profile, "step_trace")
    assert "Reduce Start(us)" in header and "Reduce Duration(us)" in header
    for row in steps:
        assert num(row["FP Start(us)"]) <= num(row["Reduce Start(us)"]) <= num(row["Iteration End(us)"])
    events = read_timeline(profile)["traceEvents"]
    communication = [
        e["pid"] for e in events if e["name"] == "process_name" and e["args"]["name"].startswith("Communication")
    ]
    assert len([e for e in events if e["ph"] == "X" and e["pid"] in communication]) == len(hccl)

    train(profiled_config(tmp_path / "off", training_trace="on", hccl="off"), steps=1, allreduce=True)
    _, ops = read_csv(the_profile(tmp_path / "off"), "op_summary")
    assert ops and not [op for op in ops if op["Task Type"] == "HCCL"]


def test_npu_bridge_instrumentation_is_not_counted_as_the_scripts_ops(tmp_path):
    config = profiled_config(tmp_path, training_trace="on")
    graph, t = build_cnn()
    with graph.as_default():
        init_system = npu_ops.initialize_system()
    with v1.Session(graph=graph, config=config) as sess:
        sess.run(init_system)
        sess.run(t["init"])
        sess.run(t["train"], t["feed"])
        sess.run(t["shutdown"])
    profile = the_profile(tmp_path)
    _, ops = read_csv(profile, "op_summary")
    _, stats = read_csv(profile, "op_statistic")
    assert not {"NPUInit", "NPUShutdown"} & ({op["OP Type"] for op in ops} | {s["OP Type"] for s in stats})
    timeline = read_timeline(profile)["traceEvents"]
    pid = next(
        e["pid"]
        for e in timeline
        if e["name"] == "process_name" and e["args"]["name"].startswith("npu_bridge instrumentation")
    )
    assert sorted(e["name"] for e in timeline if e["ph"] == "X" and e["pid"] == pid) == ["NPUInit", "NPUShutdown"]


@pytest.mark.op_types
def test_simulated_ascend_backend_adds_roofline_estimates(tmp_path, npu_log):
    config = profiled_config(tmp_path, training_trace="on")
    config.graph_options.rewrite_options.custom_optimizers[0].parameter_map["device_target"].s = b"ascend"
    train(config, steps=2)
    profile = the_profile(tmp_path)
    header, ops = read_csv(profile, "op_summary")
    assert header[-5:] == [
        "Estimated Ascend Duration(us)",
        "Estimated FLOPs",
        "Estimated Bytes",
        "Estimate Bound",
        "TensorFlow Op Type",
    ]
    matmul = next(op for op in ops if op["Op Name"] == "dense/MatMul")
    assert float(matmul["Estimated FLOPs"]) == 2 * 4 * 10 * 144  # 2 * M * N * K
    assert float(matmul["Estimated Ascend Duration(us)"]) > 0 and matmul["Estimate Bound"] in ("compute", "memory")
    header, steps = read_csv(profile, "step_trace")
    assert header[-1] == "Estimated Ascend Iteration Time(us)" and float(steps[-1][header[-1]]) > 0
    assert "Estimated Ascend Total Time(us)" in read_csv(profile, "op_statistic")[0]
    assert layout.read_info(profile)["roofline_constants"]["cube_fp16_flops"] == 256e12
    assert any("estimated Ascend 910 compute per iteration" in m for m in npu_log)


def test_hardware_counters_are_accepted_and_reported(tmp_path, npu_log):
    train(profiled_config(tmp_path, aic_metrics="ArithmeticUtilization", l2="on", task_trace="on"), steps=1)
    assert layout.read_info(the_profile(tmp_path))["settings"]["hardware_only"] == {
        "aic_metrics": "AI Core PMU counters",
        "l2": "L2 cache counters",
    }
    assert any(
        "NPU hardware data, accepted, no effect here: aic_metrics (AI Core PMU counters), l2 (L2 cache counters)" in m
        for m in npu_log
    )


def test_npu_estimator_profiles_with_a_profiling_config(tmp_path, monkeypatch):
    from helpers.estimator import input_fn, model_fn

    from npu_bridge.estimator.npu.npu_config import NPURunConfig, ProfilingConfig
    from npu_bridge.estimator.npu.npu_estimator import NPUEstimator, NPUEstimatorSpec

    monkeypatch.setenv("JOB_ID", "10086")
    profiling = ProfilingConfig(
        enable_profiling=True, profiling_options=profiling_options(tmp_path / "prof", training_trace="on")
    )
    config = NPURunConfig(
        model_dir=str(tmp_path / "model"),
        iterations_per_loop=4,
        profiling_config=profiling,
        save_checkpoints_steps=100,
        log_step_count_steps=None,
    )
    NPUEstimator(model_fn, config=config, params={"lr": 0.1, "spec": NPUEstimatorSpec}).train(input_fn, max_steps=8)
    end_profiles()  # the process goes on; a script's profile ends at exit
    profile = the_profile(tmp_path / "prof")
    model = training_model(profile)
    assert (model["runs"], model["iterations"]) == (2, 8)
    assert [int(r["Iteration ID"]) for r in read_csv(profile, "step_trace")[1]] == list(range(1, 9))


def test_runs_with_other_settings_join_the_profile_being_recorded(tmp_path, npu_log):
    from npu_bridge.core.profiling import recorder, settings

    context = {
        "rank_id": 0,
        "rank_size": 1,
        "device_id": 0,
        "backend": "cpu",
        "precision_mode": None,
        "precision_mode_v2": None,
        "iterations_per_loop": 1,
        "trace_level": "SOFTWARE_TRACE",
    }
    first = settings.ProfilingSettings(output=str(tmp_path / "a"), options_text="a")
    recorder.ensure_started(first, context)
    recorder.ensure_started(settings.ProfilingSettings(output=str(tmp_path / "b"), options_text="b"), context)
    assert any("runs with other profiling settings (b) are recorded into it" in m for m in npu_log)
    assert not (tmp_path / "b").exists() and len(list((tmp_path / "a").iterdir())) == 1


@pytest.mark.op_types
def test_ops_the_passes_insert_are_instrumentation(tmp_path):
    config = profiled_config(tmp_path / "prof", task_trace="on")
    parameters = config.graph_options.rewrite_options.custom_optimizers[0].parameter_map
    parameters["device_target"].s = b"ascend"  # fp16 rounding and saturation ...
    parameters["precision_mode"].s = b"force_fp16"
    parameters["enable_dump_debug"].b = True  # ... and overflow checks
    parameters["dump_path"].s = str(tmp_path).encode()
    train(config, steps=2)
    profile = the_profile(tmp_path / "prof")
    _, ops = read_csv(profile, "op_summary")
    op_types = {op["OP Type"] for op in ops}
    assert "MatMul" in op_types and "Cast" in op_types  # the roundings (NpuRound) are Ascend's device casts
    assert not {"NpuRound", "NpuOverflowCheck"} & op_types
    timeline = read_timeline(profile)["traceEvents"]
    pid = next(
        e["pid"]
        for e in timeline
        if e["name"] == "process_name" and e["args"]["name"].startswith("npu_bridge instrumentation")
    )
    shown = {e["args"].get("Op Type") for e in timeline if e["ph"] == "X" and e["pid"] == pid}
    assert "NpuOverflowCheck" in shown


@pytest.mark.op_types
@pytest.mark.parametrize("remapping", [False, True])
def test_op_types_are_the_scripts_whatever_kernels_ran(tmp_path, remapping):
    # With oneDNN on, the conv and its bias run as one _MklNativeConv2DWithBias named conv/BiasAdd and the
    # MatMuls as _MklMatMul; the remapper fuses conv, bias and relu into one _FusedConv2D named conv/Relu.
    config = profiled_config(tmp_path, task_trace="on")
    if remapping:
        config.graph_options.rewrite_options.remapping = rewriter_config_pb2.RewriterConfig.ON
    train(config, steps=2, conv_bias=True)
    profile = the_profile(tmp_path)
    _, ops = read_csv(profile, "op_summary")
    _, stats = read_csv(profile, "op_statistic")
    types = {op["OP Type"] for op in ops}
    assert {"Conv2D", "Conv2DBackpropFilter", "MatMul"} <= types and {s["OP Type"] for s in stats} == types
    assert all(not t.startswith("_") and op_def_registry.get(t) is not None for t in types), types
    conv = [op for op in ops if op["Op Name"].startswith("conv/") and op["OP Type"] == "Conv2D"]
    assert len(conv) == 2 and conv[0]["Input Shapes"].startswith("4,8,8,3;3,3,3,4")


@pytest.mark.slow
@pytest.mark.op_types
@pytest.mark.timeout(300)
def test_keras_fit_in_a_profiled_session_is_traced(tmp_path):
    script = f"""
import numpy as np
from npu_bridge.npu_init import *
from helpers.profiling import profiled_config
tf.compat.v1.disable_eager_execution()
set_keras_session_npu_config(config=profiled_config({str(tmp_path)!r}, training_trace="on"))
model = tf.keras.Sequential([tf.keras.layers.Dense(4, input_shape=(8,), name="hidden"),
                             tf.keras.layers.Dense(1, name="out")])
model.compile(optimizer=tf.keras.optimizers.legacy.SGD(0.1), loss="mse")
model.fit(np.ones((12, 8), np.float32), np.ones((12, 1), np.float32), batch_size=4, epochs=1, verbose=0)
tf.keras.backend.get_session().close()
"""
    result = run_python(script, env={"PYTHONPATH": os.pathsep.join([REPO_ROOT, os.path.join(REPO_ROOT, "tests")])})
    assert result.returncode == 0, result.stderr
    _, ops = read_csv(the_profile(tmp_path), "op_summary")
    fit_steps = {op["Infer ID"] for op in ops if op["Op Name"].endswith("hidden/MatMul")}
    assert len(fit_steps) >= 3  # three batches, each a traced run of Keras' callable
