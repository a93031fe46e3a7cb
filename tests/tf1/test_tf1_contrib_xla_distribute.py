"""The TF1 mode's ``contrib.compiler.xla.estimator_model_fn`` (an Estimator's model function compiled as one XLA
cluster) and ``contrib.distribute.CollectiveAllReduceStrategy`` (1.15's constructor over TensorFlow 2.21's
collective strategy): trained and evaluated values, the errors 1.15 gave, and the zoo's import paths, run in the
mode."""

import inspect

import helpers.tf1
import numpy as np
import pytest
import tensorflow as tf

from npu_bridge.core.tf1 import contrib_distribute, contrib_xla
from npu_bridge.core.tf_estimator.mode_keys import ModeKeys
from npu_bridge.core.tf_estimator.spec import EstimatorSpec
from npu_bridge.core.tf_estimator.tpu.spec import TPUEstimatorSpec

v1 = tf.compat.v1


def _linear(features, labels, mode, params):
    w = v1.get_variable("w", [1, 1], initializer=v1.zeros_initializer(), use_resource=True)
    loss = tf.reduce_mean(tf.square(tf.matmul(features, w) - labels))
    if mode == ModeKeys.TRAIN:
        train_op = v1.train.GradientDescentOptimizer(params["lr"]).minimize(loss)
        return EstimatorSpec(mode, loss=loss, train_op=train_op)
    metric_fn = lambda labels, predictions: {"mae": v1.metrics.mean_absolute_error(labels, predictions)}  # noqa: E731
    tensors = {"predictions": tf.matmul(features, w), "labels": labels}
    return TPUEstimatorSpec(mode, loss=loss, eval_metrics=(metric_fn, tensors))


def test_a_train_step_runs_inside_one_xla_cluster_and_its_loss_is_the_train_op():
    model_fn = contrib_xla.estimator_model_fn(_linear)
    with tf.Graph().as_default() as graph:
        x, y = tf.constant([[1.0], [2.0]]), tf.constant([[2.0], [4.0]])
        spec = model_fn(x, y, ModeKeys.TRAIN, {"lr": 0.1})
        assert spec.mode == ModeKeys.TRAIN
        assert any("_xla_compile_id" in op.node_def.attr for op in graph.get_operations())
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            losses = [session.run([spec.loss, spec.train_op])[0] for _ in range(3)]
            (w,) = session.run(v1.trainable_variables())
    # loss (w) = mean((x w - y)^2) = 2.5 (w - 2)^2; each step w += 0.1 * 5 (2 - w)
    assert np.allclose(losses, [10.0, 2.5, 0.625])
    assert np.allclose(w, [[1.75]])


def test_the_model_function_compiles_through_the_module_s_compile_which_a_test_may_replace(monkeypatch):
    # TensorFlow 1.15's own tests replace contrib.compiler.xla.compile with a mock and count its calls
    calls, original = [], contrib_xla.compile

    def counting(step):
        calls.append(step)
        return original(step)

    monkeypatch.setattr(contrib_xla, "compile", counting)
    with tf.Graph().as_default():
        contrib_xla.estimator_model_fn(_linear)(tf.constant([[1.0]]), tf.constant([[2.0]]), ModeKeys.TRAIN, {"lr": 0.1})
    assert len(calls) == 1


def test_evaluation_computes_the_metric_tensors_in_the_cluster_and_the_metrics_outside():
    model_fn = contrib_xla.estimator_model_fn()(_linear)  # the decorator form
    with tf.Graph().as_default():
        spec = model_fn(tf.constant([[1.0], [3.0]]), tf.constant([[2.0], [6.0]]), ModeKeys.EVAL, {})
        value, update = spec.eval_metric_ops["mae"]
        with v1.Session() as session:
            session.run([v1.global_variables_initializer(), v1.local_variables_initializer()])
            session.run(update)
            assert session.run([spec.loss, value]) == [20.0, 4.0]


def test_prediction_and_what_xla_compilation_cannot_take_raise_as_in_1_15():
    model_fn = contrib_xla.estimator_model_fn(_linear)
    with tf.Graph().as_default():
        with pytest.raises(NotImplementedError, match="mode 'infer' is not supported with XLA compilation"):
            model_fn(tf.constant([[1.0]]), None, ModeKeys.PREDICT, {})

        def with_metric_ops(features, labels, mode):
            loss = tf.reduce_sum(features)
            return EstimatorSpec(mode, loss=loss, eval_metric_ops={"m": v1.metrics.mean(loss)})

        with pytest.raises(ValueError, match="eval_metric_ops is not supported with XLA compilation"):
            contrib_xla.estimator_model_fn(with_metric_ops)(tf.constant([1.0]), tf.constant([1.0]), ModeKeys.EVAL)

        def without_labels(features, mode):
            return EstimatorSpec(mode, loss=tf.reduce_sum(features), train_op=tf.no_op())

        with pytest.raises(ValueError, match="model_fn 'without_labels' takes no labels, but input_fn returns labels"):
            contrib_xla.estimator_model_fn(without_labels)(tf.constant([1.0]), tf.constant([1.0]), ModeKeys.TRAIN)

        def wrong_tensors(features, labels, mode):
            metric_fn = lambda labels, predictions: {}  # noqa: E731
            spec = TPUEstimatorSpec(mode, loss=tf.reduce_sum(features), eval_metrics=(metric_fn, {"labels": labels}))
            return spec

        with pytest.raises(ValueError, match=r"takes \['labels', 'predictions'\].*missing: \['predictions'\]"):
            contrib_xla.estimator_model_fn(wrong_tensors)(tf.constant([1.0]), tf.constant([1.0]), ModeKeys.EVAL)


def test_the_decorated_model_fn_keeps_the_signature_the_estimator_inspects():
    decorated = contrib_xla.estimator_model_fn(_linear)
    assert list(inspect.signature(decorated).parameters) == ["features", "labels", "mode", "params"]
    assert decorated.__name__ == "_linear"


def test_collective_strategy_of_contrib_runs_one_cpu_replica_by_default():
    strategy = contrib_distribute.CollectiveAllReduceStrategy()
    assert strategy.num_replicas_in_sync == 1
    assert strategy.extended.worker_devices == ("/replica:0/task:0/device:CPU:0",)
    with tf.Graph().as_default(), strategy.scope():
        v = tf.Variable(2.0)
        total = strategy.reduce(
            tf.distribute.ReduceOp.SUM, strategy.extended.call_for_each_replica(lambda: v * 3.0), axis=None
        )
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            assert session.run(total) == 6.0


@pytest.mark.parametrize("count", [-1, 1.5, True])
def test_collective_strategy_rejects_a_bad_gpu_count_naming_it(count):
    with pytest.raises(ValueError, match=f"num_gpus_per_worker={count!r} must be an int >= 0"):
        contrib_distribute.CollectiveAllReduceStrategy(count)


SCRIPT = """
import json
import numpy as np
import tensorflow as tf
from tensorflow.contrib.compiler import xla

tf.enable_resource_variables()
X = np.array([[1.0], [2.0], [3.0], [4.0]], np.float32)


def input_fn():
    return tf.data.Dataset.from_tensor_slices((X, 2 * X + 1)).repeat().batch(4)


def model_fn(features, labels, mode, params):
    prediction = tf.layers.dense(features, 1, kernel_initializer=tf.zeros_initializer())
    loss = tf.losses.mean_squared_error(labels, prediction)
    step = tf.train.get_or_create_global_step()
    train_op = tf.train.GradientDescentOptimizer(0.05).minimize(loss, step)
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


estimator = tf.estimator.Estimator(xla.estimator_model_fn(model_fn), model_dir="model", params={})
estimator.train(input_fn, steps=300)
strategy = tf.contrib.distribute.CollectiveAllReduceStrategy(num_gpus_per_worker=0)
print("RESULT " + json.dumps({
    "step": int(estimator.get_variable_value("global_step")),
    "bias": float(estimator.get_variable_value("dense/bias")[0]),
    "replicas": strategy.num_replicas_in_sync,
    "is_strategy": isinstance(strategy, tf.distribute.Strategy),
}))
"""


def test_zoo_import_paths_work_in_the_tf1_mode(tmp_path):
    found = helpers.tf1.run_tf1_script(tmp_path, SCRIPT)
    assert found["step"] == 300 and abs(found["bias"] - 1.0) < 0.05  # y = 2 x + 1, learned from zeros
    assert found["replicas"] == 1 and found["is_strategy"] is True


def test_a_strategy_runs_a_step_with_tf115s_experimental_run_v2():
    from npu_bridge.core.tf1 import aliases

    aliases.add()
    with tf.Graph().as_default():
        strategy = v1.distribute.MirroredStrategy(["/cpu:0"])
        with strategy.scope():
            x = v1.placeholder(tf.float32, [2])
            doubled = strategy.experimental_run_v2(lambda v: v * 2.0, args=(x,))
        with v1.Session() as sess:
            assert sess.run(doubled, {x: [1.0, 3.0]}).tolist() == [2.0, 6.0]
    assert "run" in v1.distribute.MirroredStrategy.experimental_run_v2.__doc__
