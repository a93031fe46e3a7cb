"""The npu_hook hooks and the outfeed channels they drain, in MonitoredSessions."""

import io
import os

import pytest
import tensorflow as tf

from npu_bridge.core.runtime import system
from npu_bridge.estimator import npu_ops
from npu_bridge.estimator.npu import npu_hook

v1 = tf.compat.v1


def run_steps(build, hooks_fn, steps=4, config=None):
    """Builds a graph with ``build()`` (returning the train op), runs ``steps`` steps with ``hooks_fn()``."""
    with tf.Graph().as_default():
        v1.train.get_or_create_global_step()
        train_op = build()
        hooks = hooks_fn()
        with v1.train.MonitoredSession(
            session_creator=v1.train.ChiefSessionCreator(config=config), hooks=hooks
        ) as sess:
            for _ in range(steps):
                sess.run(train_op)
    return hooks


def counter_train_op():
    step = v1.train.get_global_step()
    return v1.assign_add(step, 1)


def test_output_tensor_hook_hands_values_every_n_runs_and_at_the_end():
    batches = []
    run_steps(
        counter_train_op,
        lambda: [
            npu_hook.NPUOutputTensorHook(
                {"step": v1.train.get_global_step()}, output_fn=batches.append, output_every_n_steps=3
            )
        ],
        steps=4,
    )
    assert [len(batch) for batch in batches] == [3, 1]
    assert all(set(values) == {"step"} for batch in batches for values in batch)
    with pytest.raises(ValueError, match="output_every_n_steps must be nonnegative"):
        npu_hook.NPUOutputTensorHook({}, output_every_n_steps=-1)


def test_output_tensor_hook_with_zero_outputs_once_at_the_end():
    batches = []
    run_steps(
        counter_train_op,
        lambda: [npu_hook.NPUOutputTensorHook([v1.train.get_global_step().read_value()], output_fn=batches.append)],
        steps=5,
    )
    assert len(batches) == 1 and len(batches[0]) == 5


def test_tell_me_step_or_loss_hook_publishes_progress(monkeypatch):
    for name in ("STEP_NOW", "TOTAL_STEP", "LOSS_NOW", "TARGET_LOSS"):
        monkeypatch.delenv(name, raising=False)

    def build():
        return counter_train_op()

    run_steps(
        build,
        lambda: [
            npu_hook.TellMeStepOrLossHook(
                step=v1.train.get_global_step(), total_step=100, loss=tf.constant(0.25), final_loss=0.1
            )
        ],
        steps=3,
    )
    assert (os.environ["TOTAL_STEP"], os.environ["LOSS_NOW"], os.environ["TARGET_LOSS"]) == ("100", "0.25", "0.1")
    assert int(os.environ["STEP_NOW"]) in (2, 3)
    with pytest.raises(ValueError, match="needs step"):
        npu_hook.TellMeStepOrLossHook()


def test_shutdown_hook_shuts_the_system_down(npu_log):
    config = v1.ConfigProto()
    config.graph_options.rewrite_options.custom_optimizers.add().name = "NpuOptimizer"
    run_steps(counter_train_op, lambda: [npu_hook.NPUShutDownHook()], steps=1, config=config)
    assert not system.is_initialized()


def test_outfeed_channel_delivers_everything_in_order():
    with tf.Graph().as_default():
        value = v1.placeholder(tf.float32, [])
        enqueue = npu_ops.outfeed_enqueue_op("metrics", [value, tf.cast(value, tf.int32) * 2])
        dequeued = npu_ops.outfeed_dequeue_op("metrics", [tf.float32, tf.int32], [[], []])
        stop = npu_ops.stop_outfeed_dequeue_op("metrics")
        assert dequeued[0].shape.rank == 0
        with v1.Session() as sess:
            for i in range(3):
                sess.run(enqueue, {value: float(i)})
            sess.run(stop)
            assert [tuple(sess.run(dequeued)) for _ in range(3)] == [(0.0, 0), (1.0, 2), (2.0, 4)]
            with pytest.raises(tf.errors.OutOfRangeError):
                sess.run(dequeued)
        with pytest.raises(ValueError, match="carries \\['float32', 'int32'\\], not \\['int64'\\]"):
            npu_ops.outfeed_dequeue_op("metrics", [tf.int64], [[]])
        with pytest.raises(ValueError, match="does not exist in this graph"):
            npu_ops.stop_outfeed_dequeue_op("other")


def test_log_outfeed_hook_writes_the_log_channel():
    stream = io.StringIO()

    def build():
        step = counter_train_op()
        return tf.group(step, npu_ops.outfeed_enqueue_op("_npu_log", [tf.strings.format("step {}", step)]))

    run_steps(build, lambda: [npu_hook.NPULogOutfeedSessionHook(stream)], steps=3)
    assert sorted(stream.getvalue().splitlines()) == ["step 1", "step 2", "step 3"]


def test_infeed_outfeed_hook_reports_failing_host_ops():
    def build():
        return tf.group(counter_train_op(), npu_ops.outfeed_enqueue_op("bad", [tf.constant(-1.0)]))

    def hooks():
        value = npu_ops.outfeed_dequeue_op("bad", [tf.float32], [[]])[0]
        return [npu_hook.NPUInfeedOutfeedSessionHook(v1.assert_positive(value), "bad")]

    with pytest.raises(RuntimeError, match="outfeed channel 'bad': the host ops failed"):
        run_steps(build, hooks, steps=1)


def test_npu_hooks_append_reads_rank_id_as_the_world_does(monkeypatch):
    from npu_bridge.core.runtime.errors import RankTableError
    from npu_bridge.npu_init import npu_hooks_append

    monkeypatch.setenv("RANK_SIZE", "4")
    monkeypatch.setenv("RANK_ID", "3")
    (hook,) = npu_hooks_append()
    assert hook._index == 3
    for bad in ("١", "abc", "4"):  # int() would read "١" as 1; 4 is not a rank of 4
        monkeypatch.setenv("RANK_ID", bad)
        with pytest.raises(RankTableError, match=f"RANK_ID.*'{bad}'"):
            npu_hooks_append()
