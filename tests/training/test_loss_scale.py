"""Loss scaling: managers, NPULossScaleOptimizer and NPUOptimizer skip exactly the overflowing steps."""

import numpy as np
import pytest
import tensorflow as tf
from helpers.config import npu_config
from helpers.tf1 import run_tf1_script

from npu_bridge.core.collectives import operations as collective_operations
from npu_bridge.core.device import device_mode, device_target
from npu_bridge.core.precision import float_status
from npu_bridge.estimator.npu.npu_loss_scale_manager import ExponentialUpdateLossScaleManager, FixedLossScaleManager
from npu_bridge.estimator.npu.npu_loss_scale_optimizer import NPULossScaleOptimizer
from npu_bridge.estimator.npu.npu_optimizer import NPUOptimizer

v1 = tf.compat.v1


@pytest.fixture(autouse=True)
def _clean_device_state():
    device_mode.reset()
    with tf.Graph().as_default(), v1.Session(config=npu_config()) as sess:
        sess.run(float_status.npu_clear_float_status_v2())  # earlier tests may have left an overflow
    yield
    device_mode.reset()


def model_schedule(flags, scale, incr_every, decr_every, incr_ratio, decr_ratio):
    """The loss scale after each step of a numpy model of ExponentialUpdateLossScaleManager."""
    good = bad = 0
    scales = []
    for finite in flags:
        if finite:
            good += 1
            if good >= incr_every:
                scale, good, bad = (scale * incr_ratio if scale < 3.4e38 / incr_ratio else scale), 0, 0
        else:
            bad, good = bad + 1, 0
            if bad >= decr_every:
                scale, good, bad = max(1.0, scale * decr_ratio), 0, 0
        scales.append(scale)
    return scales


def test_exponential_manager_follows_its_schedule():
    flags = [
        True,
        True,
        True,
        False,
        True,
        False,
        False,
        True,
        True,
        True,
        True,
        False,
        False,
        False,
        False,
        False,
        False,
        False,
        True,
    ]
    graph = tf.Graph()
    with graph.as_default():
        manager = ExponentialUpdateLossScaleManager(
            16, incr_every_n_steps=3, decr_every_n_nan_or_inf=2, incr_ratio=2, decr_ratio=0.25
        )
        finite = v1.placeholder(tf.bool, [])
        update = manager.update_loss_scale(finite)
        scale = manager.get_loss_scale()
        with v1.Session(graph=graph) as sess:
            sess.run(v1.global_variables_initializer())
            seen = []
            for flag in flags:
                sess.run(update, {finite: flag})
                seen.append(float(sess.run(scale)))
    assert seen == model_schedule(flags, 16.0, 3, 2, 2.0, 0.25)
    assert min(seen) == 1.0  # never below 1


def test_exponential_manager_stops_growing_at_the_float32_limit():
    graph = tf.Graph()
    with graph.as_default():
        manager = ExponentialUpdateLossScaleManager(3e38, incr_every_n_steps=1)
        update = manager.update_loss_scale(tf.constant(True))
        with v1.Session(graph=graph) as sess:
            sess.run(v1.global_variables_initializer())
            sess.run(update)
            assert sess.run(manager.get_loss_scale()) == np.float32(3e38)


@pytest.mark.parametrize(
    "make, error",
    [
        (lambda: FixedLossScaleManager(0.5), "loss scale must be at least 1."),
        (lambda: ExponentialUpdateLossScaleManager(0.5, 10), "init_loss_scale must be a number >= 1"),
        (lambda: ExponentialUpdateLossScaleManager(8, 0), "incr_every_n_steps must be an integer >= 1"),
        (lambda: ExponentialUpdateLossScaleManager(8, 10, incr_ratio=1), "incr_ratio must be a number > 1"),
        (lambda: ExponentialUpdateLossScaleManager(8, 10, decr_ratio=1.5), r"decr_ratio must be a number in \(0, 1\)"),
    ],
)
def test_manager_arguments_are_checked(make, error):
    with tf.Graph().as_default(), pytest.raises(ValueError, match=error):
        make()


# x values of the training steps: 1e38 makes the scaled gradient overflow; 1e12 overflows only an intermediate
# value (x^4) whose gradient is zero, which the float-status register sees and an is-finite check does not.
STEPS = [1.0, 1e38, 1.0, 1.0, 1e12, 1.0]


def train(make_optimizer, manager_args=(16, 2, 1, 2, 0.5), **options):
    """Trains w on loss = sum(w*x) + sum(min(w*x^4, 1)); returns w, global step and loss scale per step."""
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [2])
        w = v1.get_variable("w", initializer=tf.constant([1.0, 2.0]))
        loss = tf.reduce_sum(w * x) + tf.reduce_sum(tf.minimum(w * x * x * x * x, 1.0))
        global_step = v1.train.get_or_create_global_step()
        manager = ExponentialUpdateLossScaleManager(*manager_args) if isinstance(manager_args, tuple) else manager_args
        train_op = make_optimizer(v1.train.GradientDescentOptimizer(0.1), manager).minimize(
            loss, global_step=global_step
        )
        scale = manager.get_loss_scale()
        ops = {n.type for n in graph.get_operations()}
        with v1.Session(graph=graph, config=npu_config(**options)) as sess:
            sess.run(v1.global_variables_initializer())
            history = []
            for value in STEPS:
                sess.run(train_op, {x: [value, value]})
                history.append((sess.run(w).tolist(), int(sess.run(global_step)), float(sess.run(scale))))
    return history, ops


def applied(history):
    """Which steps were applied (global_step advances only then)."""
    steps = [0] + [step for _, step, _ in history]
    return [after > before for before, after in zip(steps, steps[1:])]


def test_loss_scale_optimizer_on_cpu_checks_the_gradients(monkeypatch):
    history, ops = train(NPULossScaleOptimizer)
    assert applied(history) == [True, False, True, True, True, True]  # the 1e12 step's gradients are finite
    assert [step for _, step, _ in history] == [1, 1, 2, 3, 4, 5]  # skipped steps do not advance global_step
    assert [scale for _, _, scale in history] == model_schedule(
        [True, False, True, True, True, True], 16.0, 2, 1, 2.0, 0.5
    )
    assert "NpuGetFloatStatusV2" not in ops


def test_loss_scale_optimizer_on_the_simulated_backend_reads_the_float_status(monkeypatch):
    monkeypatch.setenv(device_target.ENV_VARIABLE, "ascend")
    history, ops = train(NPULossScaleOptimizer)
    assert applied(history) == [True, False, True, True, False, True]
    assert [scale for _, _, scale in history] == model_schedule(
        [True, False, True, True, False, True], 16.0, 2, 1, 2.0, 0.5
    )
    assert {"NpuGetFloatStatusV2", "NpuClearFloatStatusV2"} <= ops
    np.testing.assert_allclose(history[0][0], [1.0 - 0.1 * 2, 2.0 - 0.1], rtol=1e-6)  # unscaled gradients


def test_inf_nan_mode_on_the_simulated_backend_checks_the_gradients(monkeypatch):
    monkeypatch.setenv(device_target.ENV_VARIABLE, "ascend")
    device_mode.set_device_sat_mode(1)
    history, ops = train(NPULossScaleOptimizer)
    assert applied(history) == [True, False, True, True, True, True]
    assert "NpuGetFloatStatusV2" not in ops


def test_fixed_manager_without_overflow_check_applies_every_step():
    history, _ = train(NPULossScaleOptimizer, FixedLossScaleManager(8, enable_overflow_check=False))
    assert all(applied(history)) and not np.all(np.isfinite(history[1][0]))  # the 8e38 gradient was applied
    history, _ = train(NPULossScaleOptimizer, FixedLossScaleManager(8))
    assert applied(history) == [True, False, True, True, True, True]
    assert {scale for _, _, scale in history} == {8.0}


def test_fixed_manager_imported_from_the_optimizer_module_as_scripts_do():
    from npu_bridge.estimator.npu.npu_loss_scale_optimizer import FixedLossScaleManager as ScriptsFixedManager

    assert ScriptsFixedManager is FixedLossScaleManager
    history, _ = train(NPULossScaleOptimizer, ScriptsFixedManager(loss_scale=8))
    assert {scale for _, _, scale in history} == {8.0}


def test_npu_optimizer_with_loss_scaling_uses_the_float_status_register():
    history, ops = train(lambda opt, manager: NPUOptimizer(opt, manager, is_loss_scale=True))
    assert applied(history) == [True, False, True, True, False, True]
    assert "NpuGetFloatStatusV2" in ops
    plain, ops = train(lambda opt, manager: NPUOptimizer(opt))  # no loss scaling: every step is applied
    assert all(applied(plain)) and "NpuGetFloatStatusV2" not in ops


def test_npu_optimizer_arguments():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="is_loss_scale is True, loss_scale_manager can not be None"):
            NPUOptimizer(v1.train.GradientDescentOptimizer(0.1), is_loss_scale=True)
        with pytest.raises(ValueError, match='"opt" must be an instance of'):
            NPULossScaleOptimizer("sgd", FixedLossScaleManager(1))


@pytest.mark.parametrize(
    "make_optimizer",
    [
        lambda opt, manager: NPULossScaleOptimizer(opt, manager, is_distributed=True),
        lambda opt, manager: NPUOptimizer(opt, manager, is_distributed=True, is_loss_scale=True),
    ],
)
def test_distributed_runs_agree_on_overflow_through_an_allreduce_of_the_status(monkeypatch, make_optimizer):
    monkeypatch.setenv(device_target.ENV_VARIABLE, "ascend")
    calls = []

    def allreduce(tensor, reduction, fusion=1, fusion_id=-1, group="hccl_world_group"):
        calls.append((tensor.op.type, reduction))
        return tf.identity(tensor)  # a world of one rank

    monkeypatch.setattr(collective_operations, "allreduce", allreduce)
    history, _ = train(make_optimizer)
    assert calls == [("NpuGetFloatStatusV2", "sum")]
    assert applied(history) == [True, False, True, True, False, True]


def test_loss_scale_optimizer_forwards_other_attributes_to_the_wrapped_optimizer():
    with tf.Graph().as_default():
        inner = v1.train.MomentumOptimizer(0.5, 0.9)
        wrapped = NPULossScaleOptimizer(inner, FixedLossScaleManager(2))
        assert wrapped._momentum == 0.9 and wrapped._learning_rate == 0.5


def test_a_fetched_value_that_saturates_counts_in_its_own_step_not_the_next(monkeypatch):
    # The fetched product saturates in fp16 (allow_mix_precision, saturation mode) at step 1 only. The gradients do
    # not depend on it, so only the order the pass adds makes the step's read wait for its saturation; without it
    # the register could be set after the read and clear, and step 2 would be skipped instead.
    monkeypatch.setenv(device_target.ENV_VARIABLE, "ascend")
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [2, 2])
        w = v1.get_variable("w", initializer=tf.ones([2, 2]))
        loss = tf.reduce_sum(w * 0.5)
        reported = tf.matmul(x, w)  # fetched only
        global_step = v1.train.get_or_create_global_step()
        train_op = NPULossScaleOptimizer(v1.train.GradientDescentOptimizer(0.1), FixedLossScaleManager(1)).minimize(
            loss, global_step=global_step
        )
        with v1.Session(graph=graph, config=npu_config(precision_mode="allow_mix_precision")) as sess:
            sess.run(v1.global_variables_initializer())
            steps, values = [], []
            for factor in [1.0, 1e6, 1.0, 1.0] * 3:
                _, value = sess.run([train_op, reported], {x: np.full([2, 2], factor, np.float32)})
                steps.append(int(sess.run(global_step)))
                values.append(float(value[0, 0]))
    assert values[1] == 65504.0  # saturated, finite
    assert steps == [1, 1, 2, 3, 4, 4, 5, 6, 7, 7, 8, 9]


_FETCH_BY_NAME = """
from npu_bridge.npu_init import *
import json

x = tf.placeholder(tf.float32, [2])
w = tf.get_variable("w", initializer=tf.constant([1.0, 2.0]))
manager = ExponentialUpdateLossScaleManager(
    init_loss_scale=16, incr_every_n_steps=2, decr_every_n_nan_or_inf=1, decr_ratio=0.5
)
optimizer = {make}
grads_and_vars = optimizer.compute_gradients(tf.reduce_sum(w * x))
with tf.name_scope("apply_grads"):
    train_op = optimizer.apply_gradients(grads_and_vars)
seen = []
with tf.Session(config=npu_config_proto()) as sess:
    sess.run(tf.global_variables_initializer())
    for value in (1.0, 1e38, 1.0):
        _, status = sess.run([train_op, "apply_grads/overflow_status_reduce_all:0"], {{x: [value, value]}})
        seen.append([bool(status), float(sess.run("loss_scale:0"))])
print("RESULT " + json.dumps(seen))
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    "make",
    [
        "NPULossScaleOptimizer(tf.train.GradientDescentOptimizer(0.1), manager)",
        "NPUOptimizer(tf.train.GradientDescentOptimizer(0.1), manager, is_loss_scale=True)",
    ],
    ids=["NPULossScaleOptimizer", "NPUOptimizer"],
)
def test_scripts_fetch_the_step_status_and_the_loss_scale_by_name(tmp_path, make):
    # BERT scripts of the zoo log skipped steps from a hook that fetches, by name,
    # 'apply_grads/overflow_status_reduce_all:0' (True: the step was applied) and 'loss_scale:0'.
    seen = run_tf1_script(tmp_path, _FETCH_BY_NAME.format(make=make))
    assert seen == [[True, 16.0], [False, 8.0], [True, 8.0]]
