"""TF2 scripts written the way the model zoo writes them run unchanged with ``import npu_device``: Keras ``fit``
with global options, a custom ``tf.function`` loop with ``NpuLossScaleOptimizer`` and a forced overflow, a GAN with
nested functions and a copied npu_ops.py, a TF1 script behind ``compat.enable_v1()``, data-parallel ``fit``
on two ranks, and fp16 overflow in function graphs (saturated on the simulated Ascend backend, as in TF1 sessions).
Each runs in a fresh
interpreter (opening the device changes TensorFlow for the whole process)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
from helpers.collectives import launch, parse_results
from helpers.paths import REPO_ROOT, TESTS_DIR
from helpers.precision import run_executed
from helpers.tf2 import SCRIPTS
from helpers.tf2 import run_script as _run

EXAMPLE = os.path.join(REPO_ROOT, "examples", "tf2_keras_fit.py")


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    "precision_mode, backend, precision",
    [("allow_mix_precision", "cpu", "fp16"), ("must_keep_origin_dtype", "cpu", "fp32"), ("", "ascend", "fp16")],
)
def test_keras_fit_learns_and_the_precision_mode_acts_on_the_function_graphs(
    tmp_path, precision_mode, backend, precision
):
    args = [f"--precision_mode={precision_mode}"] if precision_mode else []
    env = {"NPU_BRIDGE_DEVICE_TARGET": backend}
    if not precision_mode:  # unset: the simulated Ascend backend's default, allow_fp32_to_fp16
        args = ["--precision_mode=allow_fp32_to_fp16"]
    result, _ = _run(EXAMPLE, tmp_path, *args, "--auto_tune=1", env=env)
    assert result["losses"][-1] < result["losses"][0] and result["accuracy"] > 0.7  # chance is 0.5
    if precision == "fp32":
        assert result["matmul_error"] < 1e-5
    else:
        assert 1e-5 < result["matmul_error"] < 5e-3  # inputs rounded through fp16: 2**-11 relative


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    "mode, poison, backend",
    [
        ("dynamic", "inf", "cpu"),
        ("static", "inf", "cpu"),
        ("dynamic", "1e6", "cpu"),  # the fp16 gradient overflows to inf (IEEE)
        ("dynamic", "1e6", "ascend"),  # it saturates to 65504: only the float-status register tells
        ("static", "inf", "ascend"),
    ],
)
def test_loss_scaling_skips_the_overflowing_step_in_a_custom_loop(tmp_path, mode, poison, backend):
    result, _ = _run("custom_loop_loss_scale.py", tmp_path, mode, poison, env={"NPU_BRIDGE_DEVICE_TARGET": backend})
    steps = result["steps"]
    assert [s["finite"] for s in steps] == [True, True, True, False, True]
    assert [s["changed"] for s in steps] == [True, True, True, False, True]
    assert result["iterations"] == 5  # a skipped step still counts, as in Keras and the adapter
    if mode == "dynamic":
        assert steps[3]["scale"] == steps[2]["scale"] / 2 and steps[4]["scale"] == steps[3]["scale"]
    else:
        assert {s["scale"] for s in steps} == {128.0}


def _tf1_conv_filter_gradient():
    """The filter gradient of conv_gradient_overflow.py, computed in a TF1 session with the same option."""
    graph = tf.Graph()
    with graph.as_default():
        images = tf.compat.v1.placeholder(tf.float32, (1, 4, 4, 1))
        factor = tf.compat.v1.placeholder(tf.float32, ())
        filters = tf.constant(np.ones((3, 3, 1, 1), np.float32))
        loss = tf.reduce_sum(tf.nn.conv2d(images, filters, 1, "VALID") * factor)
        gradient = tf.gradients(loss, filters)[0]
    value, _ = run_executed(
        graph, gradient, {images: np.full((1, 4, 4, 1), 300.0), factor: 1000.0}, precision_mode="allow_mix_precision"
    )
    return value.ravel().tolist()


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("backend, expected", [("ascend", 65504.0), ("cpu", np.inf)])
def test_an_fp16_conv_filter_gradient_overflows_in_a_tf_function_as_in_a_tf1_session(
    tmp_path, monkeypatch, backend, expected
):
    # 1.2e6 in float32: the simulated Ascend backend saturates it to fp16's largest value, IEEE fp16 gives inf
    result, _ = _run("conv_gradient_overflow.py", tmp_path, env={"NPU_BRIDGE_DEVICE_TARGET": backend})
    assert [float(v) for v in result["gradient"]] == [expected] * 9
    monkeypatch.setenv("NPU_BRIDGE_DEVICE_TARGET", backend)
    assert _tf1_conv_filter_gradient() == [expected] * 9


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("backend", ["ascend", "cpu"])
def test_a_resnet_style_mixed_precision_loop_stays_finite_on_the_simulated_ascend_backend(tmp_path, backend):
    result, _ = _run("resnet_mixed_precision_loop.py", tmp_path, "5", env={"NPU_BRIDGE_DEVICE_TARGET": backend})
    losses = result["losses"]
    if backend == "ascend":  # fp16 overflow saturates, as on Atlas training devices
        assert all(isinstance(loss, float) and np.isfinite(loss) for loss in losses), losses
    else:  # the same data overflows IEEE fp16 (the check that the loop does overflow): NaN from the second step
        assert "nan" in losses, losses


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_gan_with_nested_functions_and_a_copied_npu_ops_module_trains(tmp_path):
    result, stderr = _run("gan_nested_functions.py", tmp_path)
    distance = [abs(value - 3.0) for value in result["fake_mean"]]
    start = [abs(value - 3.0) for value in result["start_mean"]]
    assert sum(distance) < 0.75 * sum(start)  # the generator moved toward the data (mean 3)
    assert result["d_last"] == result["d_last"]  # finite


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_tf1_script_runs_behind_compat_enable_v1(tmp_path):
    result, _ = _run("compat_v1_session.py", tmp_path)
    assert result["losses"][-1] < result["losses"][0] / 4 and result["bridged"]


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_two_rank_keras_fit_ends_with_equal_weights_that_equal_one_rank_on_the_whole_batch(tmp_path):
    script = os.path.join(SCRIPTS, "data_parallel_fit.py")
    env = {"PYTHONPATH": os.pathsep.join([REPO_ROOT, TESTS_DIR, SCRIPTS])}
    result, ranks = launch(script, 2, env=env, timeout=240)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-6000:]
    single = subprocess.run(
        [sys.executable, script],
        env=dict(os.environ, **env, TF_CPP_MIN_LOG_LEVEL="2"),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert single.returncode == 0, single.stderr[-6000:]
    alone = parse_results("\n".join(f"[rank 0] {line}" for line in single.stdout.splitlines()))[0]
    assert [ranks[r]["batch_size"] for r in (0, 1)] == [8, 8] and alone["batch_size"] == 16
    assert ranks[0]["initial"] == ranks[1]["initial"] == alone["initial"]  # rank 1's own weights were replaced
    for rank in (0, 1):
        for got, want in zip(ranks[rank]["weights"], alone["weights"]):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        assert ranks[rank]["metric_sum"] == [3.0] and ranks[rank]["metric_mean"] == [1.5]
    assert alone["metric_sum"] == [1.0]  # one rank: all_reduce returns its input


def _only(paths, what):
    assert len(paths) == 1, (what, paths)
    return paths[0]


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_dump_options_dump_the_selected_steps_of_the_function_graphs(tmp_path):
    dump = tmp_path / "dump"
    dump.mkdir()
    flags = ["--precision_mode=must_keep_origin_dtype", "--data_dump_flag=1", f"--data_dump_path={dump}"]
    _run(EXAMPLE, tmp_path, *flags, "--data_dump_step=0|2")
    root = _only(list(dump.glob("*/0")), "one dump root: {time}/{device id}")
    steps = {p.name for p in root.glob("ge_default_*/*/*") if p.is_dir()}
    assert steps == {"0", "2"}  # the selected steps of each function graph (Keras' train_function, ...)
    names = {p.name.split(".")[0] for p in root.glob("ge_default_*/*/0/*") if not p.name.endswith(".npy")}
    assert {"MatMul", "Relu", "BiasAdd"} <= names  # the model's ops, under their op types
    assert '"state": "complete"' in (root / "dump_status.json").read_text()
    sources = json.loads((root / "op_sources.json").read_text())  # the function graphs' ops, by source line
    assert sources and all(site.startswith(f"{EXAMPLE}:") for site in sources.values()), sources


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_overflow_detection_names_the_op_and_the_step_of_the_function_call_that_overflowed(tmp_path):
    dump = tmp_path / "dump"
    dump.mkdir()
    argv = [sys.executable, os.path.join(SCRIPTS, "overflow_function.py"), f"--over_dump_path={dump}"]
    environ = dict(os.environ, PYTHONPATH=REPO_ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run(argv, cwd=tmp_path, env=environ, capture_output=True, text=True, timeout=240, check=False)
    assert result.returncode == 0, result.stderr[-6000:]
    assert [line.split()[1] for line in result.stdout.splitlines()] == ["23847.6640625", "inf", "23847.6640625"]
    script = os.path.join(SCRIPTS, "overflow_function.py")
    assert f"overflow detected: [Exp] Exp at step 1 overflowed first (created at {script}:26 in step)" in result.stderr
    report = _only(list(dump.glob("*/0/overflow_report.txt")), "one report").read_text()
    assert "Exp" in report and f"{script}:26 in step" in report  # the function graph's op, by its source line


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_device_handle_and_the_scripts_process_wide_habits(tmp_path):
    result, stderr = _run("device_handle.py", tmp_path)
    assert result["same_handle"] and result["default"]
    assert result["name"] == "/job:localhost/replica:0/task:0/device:NPU:0"
    assert result["workers"] == [1, 0, False]
    assert result["precision_mode"] == "allow_mix_precision"  # the options open() read first
    assert "after npu_device.open() has no effect" in stderr
    assert result["other_id"] == "NpuUsageError"
    assert len(result["loop_size_errors"]) == 2 and "integer >= 1" in result["loop_size_errors"][0]
    assert result["inf_nan"] is True  # cpu computes with IEEE INF/NaN
    np.testing.assert_allclose(result["gelu_eager"], result["exact"], rtol=1e-6)  # exact GELU eagerly
    np.testing.assert_allclose(result["gelu_graph"], result["exact"], atol=0.03)  # FastGelu in graphs
    assert result["gelu_graph"] != result["exact"]
    assert result["device_ignored"] == 2.0


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    "env, error",
    [
        ({"RANK_SIZE": "2", "CM_WORKER_SIZE": "2", "RANK_ID": "0"}, "RANK_SIZE and CM_WORKER_SIZE are both set"),
        ({"NPU_LOOP_SIZE": "abc"}, "NPU_LOOP_SIZE='abc': the loop size must be an integer >= 1"),
        ({"ASCEND_DEVICE_ID": "-1"}, "ASCEND_DEVICE_ID"),
    ],
)
def test_a_bad_environment_fails_at_open_with_a_clear_error(tmp_path, env, error):
    result = _run("device_handle.py", tmp_path, env=env, expect_ok=False)
    assert result.returncode == 1 and error in result.stderr, result.stderr[-3000:]
    assert "npu_device.open()" in result.stderr  # the traceback points at the script's open() call


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_profiling_options_profile_every_function_call_of_a_keras_fit(tmp_path):
    import csv
    import json

    output = tmp_path / "prof"
    result, _ = _run("profiling_fit.py", tmp_path, f"--profiling_dump_path={output}", "--epochs=2")
    assert result["wrapped"] and result["steps"] == 8
    profile = _only(list(output.glob("PROF_*_rank0")), "one profile directory")
    exported = profile / "mindstudio_profiler_output"
    for pattern in ("op_summary_*.csv", "op_statistic_*.csv", "step_trace_*.csv", "step_trace_*.json", "msprof_*.json"):
        _only(list(exported.glob(pattern)), pattern)
    assert (profile / "report.html").is_file() and (profile / "device_0" / "data" / "step_stats.records").is_file()
    with open(_only(list(exported.glob("op_summary_*.csv")), "op_summary"), newline="") as f:
        rows = list(csv.DictReader(f))
    assert {"MatMul", "BiasAddGrad", "ReluGrad", "SparseSoftmaxCrossEntropyWithLogits"} <= {r["OP Type"] for r in rows}
    assert any(r["Op Name"].startswith("sequential/dense") for r in rows)  # the function graph's node names
    # dtypes, static shapes and inputs from the traced function graph (batch 16, 20 features, Dense(16), Dense(2))
    shapes = {r["Op Name"]: (r["Input Shapes"], r["Output Shapes"], r["Output Data Types"]) for r in rows}
    assert shapes["gradient_tape/sequential/dense/ReluGrad"] == ("16,16;16,16", "16,16", "FLOAT")
    assert shapes["gradient_tape/sequential/dense/MatMul/MatMul"][1:] == ("20,16", "FLOAT")
    info = json.loads((profile / "info.json").read_text())
    assert [(m["runs"], m["iterations"], m["training"]) for m in info["models"]] == [(8, 8, True)]
    with open(_only(list(exported.glob("step_trace_*.csv")), "step_trace"), newline="") as f:
        assert len(list(csv.DictReader(f))) == 8
    summary = subprocess.run(
        [sys.executable, "-m", "npu_bridge.core.profiling.cli", "summary", str(profile)],
        env=dict(os.environ, PYTHONPATH=REPO_ROOT, TF_CPP_MIN_LOG_LEVEL="2"),
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert summary.returncode == 0 and "8 iterations of graph 1" in summary.stdout, summary.stdout + summary.stderr
    unprofiled, _ = _run("profiling_fit.py", tmp_path, "--profiling=0", f"--profiling_dump_path={tmp_path / 'off'}")
    assert not unprofiled["wrapped"] and not (tmp_path / "off").exists()
