"""NPUEstimator: train / evaluate / predict / resume with iterations_per_loop give plain gradient descent's
numbers, sessions carry the NPURunConfig options, host_call sees every step, and missing job information or a
wrong config fail clearly."""

import json
import logging
import os

import numpy as np
import pytest
import tensorflow as tf
from helpers.estimator import X, Y, eval_input_fn, input_fn, model_fn, numpy_training

from npu_bridge.core.runtime import log
from npu_bridge.core.session import bridge
from npu_bridge.core.training.distributed import variable_broadcast
from npu_bridge.estimator.npu.npu_config import NPURunConfig
from npu_bridge.estimator.npu.npu_estimator import NPUEstimator, NPUEstimatorSpec

v1 = tf.compat.v1
NPU_PARAMS = {"lr": 0.1, "spec": NPUEstimatorSpec}


@pytest.fixture(autouse=True)
def _job_id(monkeypatch):
    monkeypatch.setenv("JOB_ID", "10086")


class SessionOptions(tf.estimator.SessionRunHook):
    """Records the NpuOptimizer options of the sessions it sees."""

    def __init__(self):
        self.options = []

    def after_create_session(self, session, coord):
        self.options.append(getattr(session, bridge.OPTIONS_ATTRIBUTE))


class CheckpointAtStart(tf.estimator.SessionRunHook):
    """Records the newest checkpoint of ``model_dir`` when the session was created."""

    def __init__(self, model_dir):
        self.model_dir = model_dir
        self.seen = "never called"

    def after_create_session(self, session, coord):
        self.seen = tf.train.latest_checkpoint(self.model_dir)


def test_the_checkpoint_saver_runs_after_the_scripts_hooks_as_upstream_puts_it_among_the_training_hooks(tmp_path):
    """A script's hook that restores weights when model_dir has a checkpoint (ShufflenetV1's EMA restore checks in
    begin and again in after_create_session) finds none on a new model_dir under NPUEstimator, whose saver is a
    training hook; TensorFlow's Estimator makes its saver a chief hook, run first, which saves step 0 before."""
    npu_dir, plain_dir = str(tmp_path / "npu"), str(tmp_path / "plain")
    npu_hook, plain_hook = CheckpointAtStart(npu_dir), CheckpointAtStart(plain_dir)
    config = NPURunConfig(model_dir=npu_dir, save_checkpoints_steps=1, log_step_count_steps=None)
    NPUEstimator(model_fn, config=config, params=NPU_PARAMS).train(input_fn, max_steps=1, hooks=[npu_hook])
    plain_config = tf.estimator.RunConfig(save_checkpoints_steps=1, log_step_count_steps=None)
    estimator = tf.estimator.Estimator(model_fn, model_dir=plain_dir, params={"lr": 0.1}, config=plain_config)
    estimator.train(input_fn, max_steps=1, hooks=[plain_hook])
    assert npu_hook.seen is None
    assert plain_hook.seen == os.path.join(plain_dir, "model.ckpt-0")
    assert tf.train.latest_checkpoint(npu_dir) == os.path.join(npu_dir, "model.ckpt-1")


def test_training_with_iterations_per_loop_matches_step_by_step_and_resumes(tmp_path, npu_log):
    level = log.logger.level
    log.logger.setLevel(logging.INFO)
    try:
        _train_check_and_resume(tmp_path, npu_log)
    finally:
        log.logger.setLevel(level)


def _train_check_and_resume(tmp_path, npu_log):
    config = NPURunConfig(
        model_dir=str(tmp_path),
        iterations_per_loop=4,
        save_checkpoints_steps=4,
        keep_checkpoint_max=10,
        hcom_parallel=False,
        log_step_count_steps=None,
    )
    estimator = NPUEstimator(model_fn, config=config, params=NPU_PARAMS)
    options = SessionOptions()
    estimator.train(input_fn, max_steps=12, hooks=[options])
    assert options.options[0].get("iterations_per_loop") == 4
    assert options.options[0].get("hcom_parallel") is False
    assert estimator.get_variable_value("global_step") == 12
    np.testing.assert_allclose(estimator.get_variable_value("kernel"), numpy_training(12), rtol=1e-4, atol=1e-6)
    checkpoints = tf.train.get_checkpoint_state(str(tmp_path)).all_model_checkpoint_paths
    assert [os.path.basename(p) for p in checkpoints] == [f"model.ckpt-{s}" for s in (0, 4, 8, 12)]
    assert any(message.startswith("global_step: ") for message in npu_log)  # NPUCheckpointSaverHook

    estimator.train(input_fn, steps=4)  # resumes at 12, one loop of 4 steps
    expected = numpy_training(12, 4)
    np.testing.assert_allclose(estimator.get_variable_value("kernel"), expected, rtol=1e-4, atol=1e-6)
    result = estimator.evaluate(eval_input_fn)
    assert result["global_step"] == 16
    assert result["loss"] == pytest.approx(float(np.mean((X @ expected - Y) ** 2)), rel=1e-4)
    predictions = np.stack([p["y"] for p in estimator.predict(eval_input_fn)])
    np.testing.assert_allclose(predictions, X @ expected, rtol=1e-4, atol=1e-6)


def test_steps_that_are_not_a_multiple_of_the_loop_end_at_the_next_loop(tmp_path):
    estimator = NPUEstimator(
        model_fn, config=NPURunConfig(model_dir=str(tmp_path), iterations_per_loop=4), params=NPU_PARAMS
    )
    estimator.train(input_fn, steps=6)
    assert estimator.get_variable_value("global_step") == 8


def test_host_call_runs_on_the_host_for_every_step(tmp_path):
    seen = []

    def host_model_fn(features, labels, mode, params):
        spec = model_fn(features, labels, mode, params)
        if mode != tf.estimator.ModeKeys.TRAIN:
            return spec

        def host_fn(step, first_x):
            return v1.py_func(lambda s, x: seen.append((int(s), float(x))) or np.int64(0), [step, first_x], tf.int64)

        return spec._replace(host_call=(host_fn, [v1.train.get_global_step(), features["x"][0, 0]]))

    estimator = NPUEstimator(
        host_model_fn, config=NPURunConfig(model_dir=str(tmp_path), iterations_per_loop=3), params=NPU_PARAMS
    )
    estimator.train(input_fn, steps=6)
    # The step's global step read races with its increment (as in TensorFlow); the batches are in order.
    assert [step for step, _ in seen] == pytest.approx(list(range(6)), abs=1)
    assert [x for _, x in seen] == pytest.approx([X[8 * i, 0] for i in range(6)])


def test_host_call_is_validated():
    with tf.Graph().as_default():
        loss, train_op = tf.constant(1.0), tf.no_op()
        spec = lambda host_call: NPUEstimatorSpec("train", loss=loss, train_op=train_op, host_call=host_call)  # noqa
        with pytest.raises(ValueError, match="host_call should be tuple or list"):
            spec(lambda x: x)
        with pytest.raises(ValueError, match="host_call should have two elements"):
            spec((print,))
        with pytest.raises(ValueError, match="host_call\\[0\\] should be callable"):
            spec((1, [loss]))
        with pytest.raises(RuntimeError, match="mismatch between the number of arguments"):
            spec((lambda a, b: None, [loss]))
        assert spec((lambda a: None, [loss])).host_call[1] == [loss]


def test_job_id_is_required_unless_a_job_start_file_is_given(tmp_path, monkeypatch):
    monkeypatch.delenv("JOB_ID")
    with pytest.raises(ValueError, match="please check whether `JOB_ID` is set in environment variable"):
        NPUEstimator(model_fn, config=NPURunConfig(model_dir=str(tmp_path)), params=NPU_PARAMS)
    job_file = tmp_path / "job.json"
    job_file.write_text(json.dumps({"job_id": "7", "device_info": {"Index": "0"}, "rank_size": 1}))
    NPUEstimator(
        model_fn, config=NPURunConfig(model_dir=str(tmp_path)), params=NPU_PARAMS, job_start_file=str(job_file)
    )
    job_file.write_text("{not json")
    with pytest.raises(ValueError, match="job start file .*job.json.* is not a readable JSON file"):
        NPUEstimator(
            model_fn, config=NPURunConfig(model_dir=str(tmp_path)), params=NPU_PARAMS, job_start_file=str(job_file)
        )


def test_config_must_be_an_npu_run_config(tmp_path):
    with pytest.raises(ValueError, match="`config` must be provided with type `NPUConfigs`"):
        NPUEstimator(model_fn, config=tf.estimator.RunConfig(model_dir=str(tmp_path)), params=NPU_PARAMS)
    with pytest.raises(ValueError, match="`config` must be provided with type `NPUConfigs`"):
        NPUEstimator(model_fn, model_dir=str(tmp_path), params=NPU_PARAMS)


def test_default_model_dir_and_restore_from(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    source = NPUEstimator(model_fn, config=NPURunConfig(), params=NPU_PARAMS)
    assert os.path.dirname(source.model_dir) == str(tmp_path)
    assert os.path.basename(source.model_dir).startswith("model_dir_")
    source.train(input_fn, steps=3)
    monkeypatch.setenv("RESTORE_FROM", source.model_dir)
    target = NPUEstimator(
        model_fn, config=NPURunConfig(model_dir=str(tmp_path / "target")), params={"lr": 0.0, "spec": NPUEstimatorSpec}
    )
    target.train(input_fn, steps=1)
    np.testing.assert_allclose(target.get_variable_value("kernel"), source.get_variable_value("kernel"))


def test_a_restore_from_path_that_is_not_utf8_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv("RESTORE_FROM", os.fsdecode(b"/ckpt/\xff\xfe"))
    with pytest.raises(ValueError, match="RESTORE_FROM has invalid value '/ckpt/.*': a checkpoint path must be UTF-8"):
        NPUEstimator(model_fn, config=NPURunConfig(model_dir=str(tmp_path)), params=NPU_PARAMS)


def test_several_ranks_prepend_the_broadcast_hook(tmp_path, monkeypatch):
    created = []

    class FakeBroadcastHook(tf.estimator.SessionRunHook):
        def __init__(self, root_rank=None, index=None):
            created.append((root_rank, index))

    monkeypatch.setattr(variable_broadcast, "NPUBroadcastGlobalVariablesHook", FakeBroadcastHook)
    monkeypatch.setenv("RANK_SIZE", "2")
    monkeypatch.setenv("RANK_ID", "1")
    estimator = NPUEstimator(model_fn, config=NPURunConfig(model_dir=str(tmp_path)), params=NPU_PARAMS)
    with tf.Graph().as_default():
        v1.train.get_or_create_global_step()
        features, labels = v1.data.make_one_shot_iterator(input_fn()).get_next()
        spec = estimator._npu_model_fn(features, labels, "train", NPU_PARAMS, estimator.config)
    assert isinstance(spec.training_hooks[0], FakeBroadcastHook) and created == [(0, 1)]
    horovod = NPUEstimator(model_fn, config=NPURunConfig(model_dir=str(tmp_path), horovod_mode=True), params=NPU_PARAMS)
    with tf.Graph().as_default():
        v1.train.get_or_create_global_step()
        features, labels = v1.data.make_one_shot_iterator(input_fn()).get_next()
        spec = horovod._npu_model_fn(features, labels, "train", NPU_PARAMS, horovod.config)
    assert not any(isinstance(hook, FakeBroadcastHook) for hook in spec.training_hooks)


def test_subclasses_may_override_members(tmp_path):
    class MyEstimator(NPUEstimator):
        def train(self, *args, **kwargs):
            return super().train(*args, **kwargs)

    assert MyEstimator(model_fn, config=NPURunConfig(model_dir=str(tmp_path)), params=NPU_PARAMS).model_dir
