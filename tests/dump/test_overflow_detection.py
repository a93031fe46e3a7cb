"""Overflow detection (enable_dump_debug): every floating-point output is checked, training keeps running, and
each overflow is recorded as on Ascend plus a readable report, first overflow first."""

import os

import numpy as np
import pytest
import tensorflow as tf
from helpers.dump import artifacts, device_dirs, dump_config

from npu_bridge.core import dump
from npu_bridge.core.dump import dump_file, overflow_records
from npu_bridge.core.precision import float_status
from npu_bridge.estimator.npu import util

v1 = tf.compat.v1
STEPS = 5


def debug_config(path, **options):
    return dump_config(path, enable_dump=False, enable_dump_debug=True, **options)


def exploding_graph():
    """exp(x * scale) overflows for a large scale; the loss clips it, so the weights stay finite."""
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [4], name="x")
        scale = v1.placeholder_with_default(1.0, [], name="scale")
        w = tf.Variable(np.ones(4, np.float32), name="w")
        amplified = tf.multiply(x, scale, name="amplify")
        exploded = tf.exp(amplified, name="explode")  # the line the report must name
        loss = tf.reduce_mean(tf.minimum(exploded, 10.0) * w, name="loss")
        train = v1.train.GradientDescentOptimizer(0.01).minimize(loss)
        init = v1.global_variables_initializer()
    return graph, x, scale, loss, train, init


def test_an_injected_overflow_is_found_at_the_right_op_and_step_while_training_continues(tmp_path, npu_log):
    graph, x, scale, loss, train, init = exploding_graph()
    losses = []
    with v1.Session(graph=graph, config=debug_config(tmp_path)) as sess:
        sess.run(init)
        for step in range(STEPS):
            feed = {x: np.linspace(0.5, 1.0, 4).astype(np.float32), scale: 1000.0 if step == 2 else 1.0}
            losses.append(sess.run([loss, train], feed)[0])
    assert np.all(np.isfinite(losses)) and len(losses) == STEPS  # training went on
    records = artifacts(tmp_path, "opdebug")
    assert {(a.step, a.model) for a in records} == {(2, records[0].model)} and len(records) == 1
    payload = dump_file.load(records[0].path).overflow["AI Core"]
    assert payload["task_id"] == records[0].name.task_id and payload["status"] == 0x2  # inf
    overflowing = dump_file.load(next(a.path for a in artifacts(tmp_path) if a.name.task_id == payload["task_id"]))
    assert overflowing.op_name == "explode"
    np.testing.assert_allclose(overflowing.inputs[0].array(), np.linspace(500, 1000, 4), rtol=1e-6)
    assert np.isinf(overflowing.outputs[0].array()).any()

    (root,) = device_dirs(tmp_path).values()
    with open(os.path.join(root, overflow_records.REPORT_FILE), encoding="utf-8") as f:
        report = f.read()
    assert "1 overflow records in 1 steps; the first overflowing op is [Exp] explode at step 2" in report
    assert f"created at {__file__}:" in report and "in exploding_graph" in report
    assert "input 0: [Format ND][Shape [4]][Dtype DT_FLOAT][Max 1000][Min 500]" in report
    assert "output 0:" in report and "[Inf " in report
    assert any("overflow detected: [Exp] explode at step 2" in message for message in npu_log)
    assert dump.overflow_report(tmp_path) == report.replace(root, str(tmp_path))


def test_overflows_are_listed_in_execution_order_across_steps(tmp_path):
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [2], name="x")
        first = tf.square(x, name="first")
        second = tf.square(first, name="second")
        total = tf.reduce_sum(tf.minimum(second, 1.0), name="total")
    with v1.Session(graph=graph, config=debug_config(tmp_path)) as sess:
        for value in (1.0, 1e20, 2.0, 1e10):  # step 1: first overflows; step 3: only second does
            sess.run(total, {x: [value, value]})
    entries = overflow_records.find(tmp_path)
    assert [(e.step, e.op_name) for e in entries] == [(1, "first"), (1, "second"), (3, "second")]


def test_an_output_that_is_only_fetched_is_checked(tmp_path):
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [2], name="x")
        cube = tf.pow(x, 3.0, name="cube")  # nothing reads it: the fetch is its only use
    with v1.Session(graph=graph, config=debug_config(tmp_path)) as sess:
        assert np.isinf(sess.run(cube, {x: [1e20, 1.0]})).any()
    assert [e.op_name for e in overflow_records.find(tmp_path)] == ["cube"]


@pytest.mark.parametrize("target, reported", [("ascend", True), ("cpu", False)])
def test_fp16_values_at_65504_count_on_the_simulated_ascend_backend(tmp_path, target, reported):
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float16, [2], name="x")
        saturated = tf.abs(x, name="saturated")  # 65504 is what saturation mode gives for an fp16 overflow
    with v1.Session(graph=graph, config=debug_config(tmp_path, device_target=target)) as sess:
        assert sess.run(saturated, {x: [-65504.0, 1.0]}).tolist() == [65504.0, 1.0]
    entries = overflow_records.find(tmp_path)
    assert [e.op_name for e in entries] == (["saturated"] if reported else [])
    if reported:
        assert entries[0].status == 0x4


def test_the_float_status_register_still_works_with_overflow_detection(tmp_path):
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [2])
        clear = float_status.npu_clear_float_status_v2()
        with tf.control_dependencies([clear]):
            masked = tf.minimum(x * x * x, 7.0)
        with tf.control_dependencies([masked]):
            status = float_status.npu_get_float_status_v2()
    with v1.Session(graph=graph, config=debug_config(tmp_path)) as sess:
        flags = [sess.run([masked, status], {x: [value, 1.0]})[1][0] for value in (1.0, 1e20, 2.0)]
    assert flags == [0, 1, 0]
    assert {e.step for e in overflow_records.find(tmp_path)} == {1}


def overflowing_loop_graph(at_step, large_first):
    """A counter (+1 per step) and two ops that overflow in the step that starts with the counter at ``at_step``:
    ``early``, and ``later``, which runs after it (it reads early's output). One of them has a large output
    (an 8 MiB dump file to write), the other a tiny one, so the asynchronous writer finishes them in either
    order.

    Returns:
      (graph, counter, train_op)
    """
    large, small = [1 << 21], [2]
    graph = tf.Graph()
    with graph.as_default():
        counter = v1.get_variable("counter", initializer=0.0)
        exponent = 1000.0 * tf.cast(tf.equal(counter.read_value(), float(at_step)), tf.float32)  # exp(1000) = inf
        early = tf.exp(tf.fill(large if large_first else small, exponent), name="early")
        clipped = tf.reduce_min(tf.minimum(early, 1.0))  # 1, and only after early
        later = tf.exp(tf.fill(small if large_first else large, exponent * clipped), name="later")
        train_op = v1.assign_add(counter, tf.reduce_min(tf.minimum(later, 1.0))).op  # +1, after later
    return graph, counter, train_op


@pytest.mark.parametrize(
    "run, iteration, large_first", [(1, 1, True), (1, 1, False), (0, 2, True)], ids=["4-large-first", "4", "2"]
)
def test_with_iterations_per_loop_an_overflow_is_recorded_at_its_iteration_and_warned_in_execution_order(
    tmp_path, npu_log, run, iteration, large_first
):
    at_step = run * 3 + iteration
    graph, counter, train_op = overflowing_loop_graph(at_step, large_first)
    with v1.Session(graph=graph, config=debug_config(tmp_path, iterations_per_loop=3)) as sess:
        sess.run(counter.initializer)
        train_loop = util.set_iteration_per_loop(sess, train_op, 3)
        for _ in range(2):
            sess.run(train_loop)
        assert sess.run(counter) == 6.0
    entries = overflow_records.find(tmp_path)
    assert [(e.step, e.op_name) for e in entries] == [(at_step, "early"), (at_step, "later")]
    (root,) = device_dirs(tmp_path).values()
    with open(os.path.join(root, overflow_records.REPORT_FILE), encoding="utf-8") as f:
        report = f.read()
    assert f"2 overflow records in 1 steps; the first overflowing op is [Exp] early at step {at_step}" in report
    warnings = [m for m in npu_log if m.startswith("overflow detected:")]
    assert len(warnings) == 1 and warnings[0].startswith(f"overflow detected: [Exp] early at step {at_step} ")
