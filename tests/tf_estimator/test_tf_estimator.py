"""tf.estimator on TensorFlow 2.21 (provided by npu_bridge): train / evaluate / predict / resume give the
numbers plain gradient descent gives, checkpoints and exports land where TensorFlow's Estimator put them, and
bad input fails with TensorFlow's errors."""

import os

import numpy as np
import pytest
import tensorflow as tf
from helpers.estimator import X, Y, eval_input_fn, input_fn, model_fn, numpy_training
from helpers.processes import run_python

import npu_bridge.core.tf_estimator

v1 = tf.compat.v1


def make_estimator(model_dir, lr=0.1, **config):
    config.setdefault("log_step_count_steps", None)
    return tf.estimator.Estimator(
        model_fn, model_dir=str(model_dir), params={"lr": lr}, config=tf.estimator.RunConfig(**config)
    )


def test_tf_estimator_is_installed_under_every_name():
    assert tf.estimator is npu_bridge.core.tf_estimator
    assert tf.compat.v1.estimator is npu_bridge.core.tf_estimator
    from tensorflow.estimator import Estimator

    assert Estimator is npu_bridge.core.tf_estimator.Estimator
    assert tf.estimator.ModeKeys.PREDICT == "infer"


def test_train_evaluate_predict_match_numpy_and_resume_continues(tmp_path):
    estimator = make_estimator(
        tmp_path, save_checkpoints_steps=5, keep_checkpoint_max=2, save_summary_steps=4, log_step_count_steps=4
    )
    estimator.train(input_fn, steps=8)
    estimator.train(input_fn, steps=8)  # resumes from the step-8 checkpoint
    expected = numpy_training(8, 8)
    np.testing.assert_allclose(estimator.get_variable_value("kernel"), expected, rtol=1e-4, atol=1e-6)
    assert estimator.get_variable_value("global_step") == 16

    result = estimator.evaluate(eval_input_fn)
    assert result["global_step"] == 16
    assert result["loss"] == pytest.approx(float(np.mean((X @ expected - Y) ** 2)), rel=1e-4)
    assert result["mae"] == pytest.approx(float(np.mean(np.abs(X @ expected - Y))), rel=1e-4)
    assert estimator.evaluate(eval_input_fn, steps=2, name="two")["global_step"] == 16

    predictions = list(estimator.predict(eval_input_fn))
    assert len(predictions) == 64
    np.testing.assert_allclose(np.stack([p["y"] for p in predictions]), X @ expected, rtol=1e-4, atol=1e-6)
    batches = list(estimator.predict(eval_input_fn, predict_keys=["y"], yield_single_examples=False))
    assert [len(b["y"]) for b in batches] == [8] * 8

    tags = {
        value.tag
        for path in tf.io.gfile.glob(str(tmp_path / "events.out.tfevents.*"))
        for event in v1.train.summary_iterator(path)
        for value in event.summary.value
    }
    assert {"loss", "global_step/sec"} <= tags  # save_summary_steps and log_step_count_steps
    files = set(os.listdir(tmp_path))
    assert {"checkpoint", "graph.pbtxt", "eval", "eval_two"} <= files
    kept = tf.train.get_checkpoint_state(str(tmp_path)).all_model_checkpoint_paths
    # The second run saved at its start (8), 5 steps later (13) and at its end (16); keep_checkpoint_max=2.
    assert [os.path.basename(p) for p in kept] == ["model.ckpt-13", "model.ckpt-16"]


def test_max_steps_already_reached_skips_training(tmp_path):
    estimator = make_estimator(tmp_path)
    estimator.train(input_fn, max_steps=3)
    estimator.train(input_fn, max_steps=3)
    assert estimator.get_variable_value("global_step") == 3


def test_training_stops_at_the_end_of_the_input(tmp_path):
    estimator = make_estimator(tmp_path)
    estimator.train(eval_input_fn)  # 64 examples / 8 = 8 steps, no repeat
    assert estimator.get_variable_value("global_step") == 8


def test_warm_start_initializes_from_another_model(tmp_path):
    source = make_estimator(tmp_path / "source")
    source.train(input_fn, steps=5)
    target = tf.estimator.Estimator(
        model_fn, model_dir=str(tmp_path / "target"), params={"lr": 0.0}, warm_start_from=source.model_dir
    )
    target.train(input_fn, steps=1)
    np.testing.assert_allclose(target.get_variable_value("kernel"), source.get_variable_value("kernel"))


def test_export_saved_model_serves_the_predictions(tmp_path):
    estimator = make_estimator(tmp_path / "model")
    estimator.train(input_fn, steps=4)
    receiver_fn = tf.estimator.export.build_raw_serving_input_receiver_fn({"x": v1.placeholder(tf.float32, [None, 4])})
    export_dir = estimator.export_saved_model(str(tmp_path / "export"), receiver_fn).decode()
    with tf.Graph().as_default(), v1.Session() as sess:
        meta = v1.saved_model.load(sess, [tf.saved_model.SERVING], export_dir)
        signature = meta.signature_def["serving_default"]
        served = sess.run(signature.outputs["y"].name, {signature.inputs["x"].name: X[:3]})
    np.testing.assert_allclose(served, X[:3] @ estimator.get_variable_value("kernel"), rtol=1e-5)


def test_a_tensor_serving_input_receiver_hands_model_fn_its_tensor(tmp_path):
    def tensor_model_fn(features, labels, mode, params):
        assert isinstance(features, tf.Tensor)  # TF 1.x's TensorServingInputReceiver: the tensor itself
        return model_fn({"x": features}, labels, mode, params)

    estimator = make_estimator(tmp_path / "model")
    estimator.train(input_fn, steps=4)
    serving = tf.estimator.Estimator(tensor_model_fn, model_dir=estimator.model_dir, params={"lr": 0.1})

    def receiver_fn():
        x = v1.placeholder(tf.float32, [None, 4], name="x")
        return tf.estimator.export.TensorServingInputReceiver(x, {"x": x})

    export_dir = serving.export_saved_model(str(tmp_path / "export"), receiver_fn).decode()
    with tf.Graph().as_default(), v1.Session() as sess:
        signature = v1.saved_model.load(sess, [tf.saved_model.SERVING], export_dir).signature_def["serving_default"]
        served = sess.run(signature.outputs["y"].name, {signature.inputs["x"].name: X[:3]})
    np.testing.assert_allclose(served, X[:3] @ estimator.get_variable_value("kernel"), rtol=1e-5)
    with pytest.raises(ValueError, match="features must be one Tensor or SparseTensor, given {'x'"):
        with tf.Graph().as_default():
            tf.estimator.export.TensorServingInputReceiver({"x": v1.placeholder(tf.float32)}, {})


def test_train_and_evaluate_evaluates_and_exports(tmp_path):
    estimator = make_estimator(tmp_path, save_checkpoints_steps=10)
    receiver_fn = tf.estimator.export.build_raw_serving_input_receiver_fn({"x": v1.placeholder(tf.float32, [None, 4])})
    evaluated = []

    class CountEvaluations(tf.estimator.SessionRunHook):
        def end(self, session):
            evaluated.append(1)

    result, exports = tf.estimator.train_and_evaluate(
        estimator,
        tf.estimator.TrainSpec(input_fn, max_steps=30),
        tf.estimator.EvalSpec(
            eval_input_fn,
            steps=None,
            throttle_secs=0,
            hooks=[CountEvaluations()],
            exporters=[
                tf.estimator.LatestExporter("latest", receiver_fn, exports_to_keep=1),
                tf.estimator.FinalExporter("final", receiver_fn),
            ],
        ),
    )
    assert result["global_step"] == 30
    assert len(evaluated) == 3  # after the checkpoints at 10, 20 and 30
    assert len(os.listdir(tmp_path / "export" / "latest")) == 1
    assert len(exports) == 2 and all(os.path.isdir(e) for e in exports)


def test_numpy_input_fn(tmp_path):
    with pytest.raises(ValueError, match="shuffle must be provided"):
        tf.estimator.inputs.numpy_input_fn({"x": X}, Y)
    estimator = make_estimator(tmp_path)
    estimator.train(tf.estimator.inputs.numpy_input_fn({"x": X}, Y, batch_size=8, num_epochs=1, shuffle=False))
    np.testing.assert_allclose(estimator.get_variable_value("kernel"), numpy_training(8), rtol=1e-4, atol=1e-6)


def test_model_fn_signatures(tmp_path):
    def no_labels(features, mode):
        del mode
        return model_fn(features, None, tf.estimator.ModeKeys.PREDICT, {})

    with pytest.raises(ValueError, match="model_fn does not take labels, but input_fn returns labels"):
        tf.estimator.Estimator(no_labels, model_dir=str(tmp_path)).train(input_fn, steps=1)
    with pytest.raises(ValueError, match="must include features argument"):
        tf.estimator.Estimator(lambda inputs: None, model_dir=str(tmp_path))
    with pytest.raises(ValueError, match="does not include params argument, but params"):
        tf.estimator.Estimator(no_labels, model_dir=str(tmp_path), params={"lr": 1})
    with pytest.raises(ValueError, match="has following not expected args: \\['extra'\\]"):
        tf.estimator.Estimator(lambda features, extra: None, model_dir=str(tmp_path))
    with pytest.raises(ValueError, match="model_fn should return an EstimatorSpec"):
        tf.estimator.Estimator(lambda features, labels: None, model_dir=str(tmp_path)).train(input_fn, steps=1)


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"steps": 1, "max_steps": 2}, ValueError, "Can not provide both steps and max_steps"),
        ({"steps": 0}, ValueError, "Must specify steps > 0"),
        ({"max_steps": -1}, ValueError, "Must specify max_steps > 0"),
    ],
)
def test_bad_train_arguments(tmp_path, kwargs, error, message):
    with pytest.raises(error, match=message):
        make_estimator(tmp_path).train(input_fn, **kwargs)


def test_estimator_spec_validation():
    with tf.Graph().as_default():
        loss = tf.constant(1.0)
        with pytest.raises(ValueError, match="Missing loss"):
            tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.EVAL)
        with pytest.raises(ValueError, match="Missing train_op"):
            tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.TRAIN, loss=loss)
        with pytest.raises(ValueError, match="Missing predictions"):
            tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.PREDICT)
        with pytest.raises(ValueError, match="mode must be one of"):
            tf.estimator.EstimatorSpec("training", loss=loss)
        with pytest.raises(ValueError, match="loss must be a scalar"):
            tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.EVAL, loss=tf.constant([1.0, 2.0]))
        with pytest.raises(TypeError, match="All hooks must be SessionRunHook instances"):
            tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.EVAL, loss=loss, evaluation_hooks=[object()])
        spec = tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.EVAL, loss=tf.constant([2.0]))
        assert spec.loss.shape.rank == 0
        with pytest.raises(TypeError, match="train_op must be an Operation or Tensor, given: 3"):
            tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.TRAIN, loss=loss, train_op=3)
        # a Tensor train_op stays a Tensor, as in TensorFlow 1.15: running it gives its value
        spec = tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.TRAIN, loss=loss, train_op=tf.identity(loss))
        with tf.compat.v1.Session() as sess:
            assert sess.run(spec.train_op) == 1.0
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="must be from the default graph"):
            tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.EVAL, loss=loss)


def test_run_config_defaults_and_validation(tmp_path):
    config = tf.estimator.RunConfig()
    assert (config.save_checkpoints_secs, config.save_checkpoints_steps, config.save_summary_steps) == (600, None, 100)
    assert config.is_chief and config.num_worker_replicas == 1 and config.task_type == "worker"
    assert tf.estimator.RunConfig(save_checkpoints_steps=10).save_checkpoints_secs is None
    assert config.replace(model_dir=tmp_path).model_dir == str(tmp_path)
    with pytest.raises(ValueError, match="Can not specify both save_checkpoints_steps and save_checkpoints_secs"):
        tf.estimator.RunConfig(save_checkpoints_steps=1, save_checkpoints_secs=1)
    with pytest.raises(ValueError, match="cannot be replaced"):
        config.replace(iterations=3)
    # replacing one way of timing checkpoints turns the other off (a ShuffleNet script replaces the default secs)
    by_steps = config.replace(save_checkpoints_steps=556)
    assert (by_steps.save_checkpoints_steps, by_steps.save_checkpoints_secs) == (556, None)
    by_secs = by_steps.replace(save_checkpoints_secs=30)
    assert (by_secs.save_checkpoints_steps, by_secs.save_checkpoints_secs) == (None, 30)
    assert by_steps.replace(save_checkpoints_secs=None).save_checkpoints_steps == 556
    with pytest.raises(
        ValueError, match=r"Can not specify both save_checkpoints_steps \(1\) and save_checkpoints_secs"
    ):
        config.replace(save_checkpoints_steps=1, save_checkpoints_secs=2)
    with pytest.raises(ValueError, match="keep_checkpoint_max must be a number >= 0"):
        tf.estimator.RunConfig(keep_checkpoint_max=-1)
    with pytest.raises(ValueError, match="config must be an instance of RunConfig"):
        tf.estimator.Estimator(model_fn, config={"model_dir": "x"})
    with pytest.raises(ValueError, match="model_dir is set both in the constructor"):
        tf.estimator.Estimator(
            model_fn,
            model_dir=str(tmp_path / "a"),
            config=tf.estimator.RunConfig(model_dir=str(tmp_path / "b")),
            params={},
        )


def test_subclasses_cannot_override_public_methods_unless_allowed(tmp_path):
    class Custom(tf.estimator.Estimator):
        def train(self, *args, **kwargs):
            return super().train(*args, **kwargs)

    with pytest.raises(ValueError, match="cannot override members of Estimator.*\\['train'\\]"):
        Custom(model_fn, model_dir=str(tmp_path), params={})
    from npu_bridge.estimator.npu.npu_estimator import no_check_override

    with no_check_override():
        assert Custom(model_fn, model_dir=str(tmp_path), params={}).model_dir == str(tmp_path)


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_a_migrated_tf_estimator_script_runs(tmp_path):
    script = f"""
        import numpy as np
        from npu_bridge.npu_init import *   # what Ascend's migration tool adds

        X = np.random.RandomState(0).rand(64, 4).astype(np.float32)
        Y = X @ np.array([[1.0], [2.0], [-1.0], [0.5]], np.float32)

        def input_fn():
            return tf.data.Dataset.from_tensor_slices(({{"x": X}}, Y)).repeat().batch(8)

        def model_fn(features, labels, mode):
            predictions = tf.layers.dense(features["x"], 1)
            loss = tf.losses.mean_squared_error(labels, predictions)
            train_op = tf.train.AdamOptimizer(0.05).minimize(loss, global_step=tf.train.get_global_step())
            return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

        seen = []
        class Inspect(tf.estimator.SessionRunHook):
            def after_create_session(self, session, coord):
                seen.append(session._npu_bridge_options)

        config = npu_run_config_init(tf.estimator.RunConfig(model_dir={str(tmp_path)!r}))
        estimator = tf.estimator.Estimator(model_fn, config=config)
        estimator.train(input_fn, steps=200, hooks=[Inspect()])
        print("bridged", seen[0] is not None)
        print("loss", estimator.evaluate(input_fn, steps=8)["loss"])
    """
    result = run_python(script, timeout=200)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = dict(line.split(" ", 1) for line in result.stdout.splitlines() if " " in line)
    assert lines["bridged"] == "True"
    assert float(lines["loss"]) < 0.05
