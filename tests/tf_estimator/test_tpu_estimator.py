"""TPUEstimator without a TPU (``tf.estimator.tpu`` / ``tf.contrib.tpu``): TensorFlow 1.15's ``use_tpu=False``
path. ``params["batch_size"]`` is each mode's batch size, a ``TPUEstimatorSpec``'s scaffold_fn, eval_metrics and
host_call do what they did, the result equals plain gradient descent, and CrossShardOptimizer is one replica."""

import json
import logging
import re

import numpy as np
import pytest
import tensorflow as tf
from helpers.estimator import X, Y, numpy_training

from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError
from npu_bridge.core.tf1 import contrib
from npu_bridge.core.tf1 import tpu as contrib_tpu
from npu_bridge.core.tf_estimator.tpu import estimator as tpu_estimator
from npu_bridge.core.tf_estimator.tpu.config import parse_iterations_per_loop

v1 = tf.compat.v1
tpu = tf.compat.v1.estimator.tpu
BATCHES = {"train": 8, "eval": 16, "infer": 32}
SCAFFOLD_CALLS = []  # params are deep-copied: the model_fn reports here


def input_fn(params):
    dataset = tf.data.Dataset.from_tensor_slices(({"x": X}, Y))
    if params["mode_seen"] == "train":
        dataset = dataset.repeat()
    return dataset.batch(params["batch_size"])


def model_fn(features, labels, mode, params):
    assert params["batch_size"] == BATCHES[mode]
    kernel = v1.get_variable("kernel", [4, 1], initializer=v1.zeros_initializer())
    predictions = tf.matmul(features["x"], kernel)

    def scaffold_fn():
        SCAFFOLD_CALLS.append(mode)
        return v1.train.Scaffold()

    if mode == tf.estimator.ModeKeys.PREDICT:
        return tpu.TPUEstimatorSpec(mode, predictions={"y": predictions}, scaffold_fn=scaffold_fn)
    loss = v1.losses.mean_squared_error(labels, predictions)
    optimizer = contrib_tpu.CrossShardOptimizer(v1.train.GradientDescentOptimizer(0.1))
    train_op = optimizer.minimize(loss, global_step=v1.train.get_global_step())

    def metric_fn(labels, predictions):
        return {"mae": v1.metrics.mean_absolute_error(labels, predictions)}

    def host_call_fn(step, loss):
        counter = v1.get_variable("host_calls", [], tf.int64, v1.zeros_initializer(), trainable=False)
        return [counter.assign_add(1)]

    step = tf.reshape(v1.train.get_global_step(), [1])
    return tpu.TPUEstimatorSpec(
        mode,
        loss=loss,
        train_op=train_op,
        eval_metrics=(metric_fn, {"labels": labels, "predictions": predictions}),
        host_call=(host_call_fn, [step, tf.reshape(loss, [1])]),
        scaffold_fn=scaffold_fn,
    )


class _ModeInput:
    """input_fn with the mode recorded in params for the dataset (the model_fn checks batch_size)."""

    def __init__(self, mode):
        self._mode = mode

    def __call__(self, params):
        return input_fn(dict(params, mode_seen=self._mode))


def make(tmp_path, **kwargs):
    kwargs.setdefault("use_tpu", False)
    config = tpu.RunConfig(
        tpu_config=tpu.TPUConfig(
            iterations_per_loop=4, per_host_input_for_training=tpu.InputPipelineConfig.PER_HOST_V2
        ),
        model_dir=str(tmp_path),
        log_step_count_steps=None,
    )
    return tpu.TPUEstimator(
        model_fn,
        config=config,
        params={"lr": 0.1},
        train_batch_size=8,
        eval_batch_size=16,
        predict_batch_size=32,
        **kwargs,
    )


def test_train_evaluate_predict_run_the_use_tpu_false_path_and_match_gradient_descent(tmp_path, caplog):
    SCAFFOLD_CALLS.clear()
    estimator = make(tmp_path)
    with caplog.at_level(logging.WARNING):
        estimator.train(_ModeInput("train"), max_steps=6)
    expected = numpy_training(6)
    np.testing.assert_allclose(estimator.get_variable_value("kernel"), expected, rtol=1e-4, atol=1e-6)
    assert estimator.get_variable_value("host_calls") == 6  # the host call ran with every step
    assert "CrossShardOptimizer runs as one replica here" in caplog.text

    result = estimator.evaluate(_ModeInput("eval"))
    assert result["global_step"] == 6
    assert result["mae"] == pytest.approx(float(np.mean(np.abs(X @ expected - Y))), rel=1e-4)
    assert result["loss"] == pytest.approx(float(np.mean((X @ expected - Y) ** 2)), rel=1e-4)

    batches = list(estimator.predict(_ModeInput("infer"), yield_single_examples=False))
    assert [len(b["y"]) for b in batches] == [32, 32]
    np.testing.assert_allclose(np.concatenate([b["y"] for b in batches]), X @ expected, rtol=1e-4, atol=1e-6)
    assert SCAFFOLD_CALLS == ["train", "eval", "infer"]


def test_host_call_summaries_are_written_and_flushed(tmp_path):
    def model(features, labels, mode, params):
        kernel = v1.get_variable("kernel", [4, 1], initializer=v1.zeros_initializer())
        loss = v1.losses.mean_squared_error(labels, tf.matmul(features["x"], kernel))
        # The step is read before the train op moves it (without the dependency the read races the update).
        step = tf.reshape(tf.identity(v1.train.get_global_step()), [1])
        with tf.control_dependencies([step]):
            train_op = v1.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=v1.train.get_global_step())

        def host_call_fn(step, loss):
            contrib_summary = contrib.ContribModule("", None, tf).summary  # tf.contrib.summary in the TF1 mode
            with contrib_summary.create_file_writer(str(tmp_path / "host")).as_default():
                with contrib_summary.always_record_summaries():
                    contrib_summary.scalar("host_loss", loss[0], step=step[0])
                    return contrib_summary.all_summary_ops()

        return tpu.TPUEstimatorSpec(
            mode, loss=loss, train_op=train_op, host_call=(host_call_fn, [step, tf.reshape(loss, [1])])
        )

    estimator = tpu.TPUEstimator(
        model, config=tpu.RunConfig(model_dir=str(tmp_path / "model")), use_tpu=False, train_batch_size=8
    )
    estimator.train(_ModeInput("train"), max_steps=3)
    steps = sorted(
        event.step
        for path in tf.io.gfile.glob(str(tmp_path / "host" / "events.out.tfevents.*"))
        for event in v1.train.summary_iterator(path)
        for value in event.summary.value
        if value.tag == "host_loss"
    )
    assert steps == [0, 1, 2]


def test_use_tpu_true_runs_one_replica_and_says_so_once(tmp_path, caplog, monkeypatch):
    monkeypatch.setattr(tpu_estimator, "_told", set())
    with caplog.at_level(logging.WARNING):
        make(tmp_path / "a", use_tpu=True)
        make(tmp_path / "b", use_tpu=True)
    assert caplog.text.count("TPUEstimator(use_tpu=True): there is no TPU here") == 1


def test_a_plain_estimator_spec_is_used_as_it_is(tmp_path):
    def model(features, labels, mode, params):
        kernel = v1.get_variable("kernel", [4, 1], initializer=v1.zeros_initializer())
        loss = v1.losses.mean_squared_error(labels, tf.matmul(features["x"], kernel))
        train_op = v1.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=v1.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    estimator = tpu.TPUEstimator(
        model, config=tpu.RunConfig(model_dir=str(tmp_path)), use_tpu=False, train_batch_size=8
    )
    estimator.train(_ModeInput("train"), max_steps=2)
    np.testing.assert_allclose(estimator.get_variable_value("kernel"), numpy_training(2), rtol=1e-4, atol=1e-6)


def test_bad_arguments_name_themselves(tmp_path):
    with pytest.raises(NpuArgumentError, match=r"input_fn .* does not include params argument"):
        make(tmp_path).train(lambda: input_fn({"batch_size": 8, "mode_seen": "train"}), max_steps=1)
    with pytest.raises(NpuArgumentError, match=r"\['batch_size'\] are reserved keys"):
        tpu.TPUEstimator(model_fn, params={"batch_size": 3}, use_tpu=False)
    with pytest.raises(NpuArgumentError, match="train_batch_size must be a positive integer or None, given: 0"):
        tpu.TPUEstimator(model_fn, use_tpu=False, train_batch_size=0)
    with pytest.raises(NpuArgumentError, match="config must be a tpu.RunConfig"):
        tpu.TPUEstimator(model_fn, config=tf.estimator.RunConfig(), use_tpu=False)
    with pytest.raises(NpuArgumentError, match="iterations_per_loop must be positive: .*, given: -1"):
        tpu.TPUConfig(iterations_per_loop=-1)
    with pytest.raises(NpuArgumentError, match="per_host_input_for_training must be True, False or"):
        tpu.TPUConfig(per_host_input_for_training=9)
    with pytest.raises(NpuArgumentTypeError, match="tpu_config must be a tpu.TPUConfig"):
        tpu.RunConfig(tpu_config={"iterations_per_loop": 2})
    with pytest.raises(NpuArgumentError, match=r"eval_metrics must be a \(function, tensors\) pair"):
        tpu.TPUEstimatorSpec("eval", eval_metrics=lambda: {})
    with pytest.raises(NpuArgumentTypeError, match="CrossShardOptimizer: opt must be"):
        contrib_tpu.CrossShardOptimizer("sgd")


def test_run_config_keeps_tpu_settings_through_replace():
    config = tpu.RunConfig(tpu_config=tpu.TPUConfig(iterations_per_loop=100), master="grpc://10.0.0.2:8470")
    assert config.tpu_config.iterations_per_loop == 100 and config.master == "grpc://10.0.0.2:8470"
    assert config.evaluation_master == "grpc://10.0.0.2:8470"
    replaced = config.replace(model_dir="/tmp/m", tpu_config=tpu.TPUConfig(iterations_per_loop=7))
    assert replaced.tpu_config.iterations_per_loop == 7 and replaced.model_dir == "/tmp/m"
    assert config.tpu_config.iterations_per_loop == 100
    assert tpu.InputPipelineConfig.PER_HOST_V2 == 3


@pytest.mark.parametrize(
    "value, expected",
    [
        (1, (1, "count")),
        (100, (100, "count")),
        ("300s", (300, "seconds")),
        ("1m", (60, "seconds")),
        ("1h", (3600, "seconds")),
    ],
)
def test_iterations_per_loop_is_a_count_or_a_duration(value, expected):
    config = tpu.RunConfig(tpu_config=tpu.TPUConfig(iterations_per_loop=value))
    assert config.tpu_config.iterations_per_loop == value  # kept as given, as TensorFlow 1.15 kept it
    assert tuple(parse_iterations_per_loop(value)) == expected


@pytest.mark.parametrize("value", [0, -1, "-1h", "-1m", "-1s", "0s", "10d", "1.5h", 2.5, True, ""])
def test_iterations_per_loop_refuses_what_is_not_a_positive_count_or_duration(value):
    with pytest.raises(
        NpuArgumentError,
        match=rf"iterations_per_loop must be positive: an integer >= 1 \(steps\) or a "
        rf"duration '<N>s', '<N>m' or '<N>h'.*given: {re.escape(repr(value))}",
    ):
        tpu.TPUConfig(iterations_per_loop=value)


def test_tpu_config_checks_shards_cores_and_pipelines_as_tensorflow_1_15():
    assert tpu.TPUConfig().per_host_input_for_training == tpu.InputPipelineConfig.PER_HOST_V1  # True, kept as 2
    assert tpu.TPUConfig(per_host_input_for_training=False).per_host_input_for_training == 1
    assert tpu.TPUConfig(num_cores_per_replica=8).num_cores_per_replica == 8
    for make, error, message in (
        (lambda: tpu.TPUConfig(num_shards=0), NpuArgumentError, r"num_shards must be positive .*given: 0"),
        (lambda: tpu.TPUConfig(num_shards="8"), NpuArgumentTypeError, r"num_shards must be an int, given: '8'"),
        (
            lambda: tpu.TPUConfig(num_cores_per_replica=7),
            NpuArgumentError,
            r"num_cores_per_replica must be 1, 2, 4, 8, 16, 32, 64, 128; got 7",
        ),
        (
            lambda: tpu.TPUConfig(eval_training_input_configuration=tpu.InputPipelineConfig.PER_HOST_V2),
            NpuArgumentError,
            r"eval_training_input_configuration must be PER_HOST_V1 or SLICED; got 3",
        ),
        (lambda: tpu.TPUConfig(input_partition_dims=[[1, 2]]), NpuArgumentError, r"only supported in PER_HOST_V2"),
        (
            lambda: tpu.TPUConfig(input_partition_dims=[[1], [2], [3]]),
            NpuArgumentError,
            r"input_partition_dims must be a list/tuple with one or two elements",
        ),
        (lambda: tpu.TPUConfig(initial_infeed_sleep_secs=-3), NpuArgumentError, r"initial_infeed_sleep_secs must be"),
        (
            lambda: tpu.RunConfig(master="grpc://a:1", cluster=object()),
            NpuArgumentError,
            r"both master \('grpc://a:1'\) and cluster are set",
        ),
    ):
        with pytest.raises(error, match=message):
            make()


def test_masters_and_job_name_come_from_tf_config(monkeypatch):
    monkeypatch.setenv(
        "TF_CONFIG",
        json.dumps({"session_master": "_m", "eval_session_master": "_e", "service": {"tpu_worker_job_name": "_job"}}),
    )
    config = tpu.RunConfig()
    assert (config.master, config.evaluation_master, config.tpu_config.tpu_job_name) == ("_m", "_e", "_job")
    assert tpu.RunConfig(master="_mine").evaluation_master == "_e"
    monkeypatch.setenv("TF_CONFIG", json.dumps({"session_master": "_m"}))
    assert tpu.RunConfig().evaluation_master == "_m"  # the master, when nothing says otherwise
    evaluator = {"cluster": {"chief": ["host0:0"]}, "task": {"type": "evaluator", "index": 0}}
    monkeypatch.setenv("TF_CONFIG", json.dumps(evaluator))
    assert tpu.RunConfig(master="_something").evaluation_master == ""  # an evaluator task keeps its own
    monkeypatch.delenv("TF_CONFIG")
    assert (tpu.RunConfig().master, tpu.RunConfig().evaluation_master, tpu.RunConfig().session_config) == ("", "", None)


def test_cross_replica_sum_of_one_replica_is_its_input():
    with tf.Graph().as_default(), v1.Session() as session:
        x = tf.constant([1.0, -2.0, 3.5])
        np.testing.assert_array_equal(session.run(contrib_tpu.cross_replica_sum(x)), [1.0, -2.0, 3.5])
