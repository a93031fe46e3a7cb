"""Keras on the TF1 surface: models trained inside a bridged session, and model_to_npu_estimator."""

import numpy as np
import pytest
import tensorflow as tf

from npu_bridge.core.session import bridge
from npu_bridge.estimator.npu import keras_to_npu
from npu_bridge.estimator.npu.npu_config import NPURunConfig
from npu_bridge.npu_init import (
    ExponentialUpdateLossScaleManager,
    FixedLossScaleManager,
    NPUDistributedOptimizer,
    NPULossScaleOptimizer,
    NPUOptimizer,
    npu_clear_session,
    set_keras_session_npu_config,
)

keras = tf.compat.v1.keras  # what TF1 scripts use (legacy optimizers, graph-mode training)
X = np.random.RandomState(1).rand(64, 3).astype(np.float32)
Y = X.sum(axis=1, keepdims=True)


@pytest.fixture(autouse=True)
def _fresh_keras():
    keras.backend.clear_session()
    yield
    keras.backend.clear_session()


def compiled_model(learning_rate=0.1):
    model = keras.Sequential([keras.layers.Dense(4, activation="relu", input_shape=(3,)), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(learning_rate), loss="mse", metrics=["mae"])
    return model


def test_keras_fit_runs_in_a_bridged_session():
    config = tf.compat.v1.ConfigProto()
    config.graph_options.rewrite_options.custom_optimizers.add().name = "NpuOptimizer"
    config.graph_options.rewrite_options.custom_optimizers[0].parameter_map["hcom_parallel"].b = False
    sess = set_keras_session_npu_config(config)
    assert keras.backend.get_session() is sess
    assert getattr(sess, bridge.OPTIONS_ATTRIBUTE).get("hcom_parallel") is False
    model = compiled_model()
    history = model.fit(X, Y, epochs=4, batch_size=16, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    assert model.evaluate(X, Y, verbose=0)[0] == pytest.approx(history.history["loss"][-1], rel=0.5)

    npu_clear_session()
    fresh = keras.backend.get_session()
    assert fresh is not sess and getattr(fresh, bridge.OPTIONS_ATTRIBUTE) is not None


def test_model_to_npu_estimator_warm_starts_from_the_keras_weights_and_trains(tmp_path, monkeypatch):
    monkeypatch.setenv("JOB_ID", "1")
    model = compiled_model(learning_rate=0.0)
    model.fit(X, Y, epochs=1, batch_size=16, verbose=0)
    keras_loss, keras_mae = model.evaluate(X, Y, verbose=0)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"dense_input": X}, Y)).batch(16)

    frozen = keras_to_npu.model_to_npu_estimator(
        keras_model=model, config=NPURunConfig(model_dir=str(tmp_path / "frozen"))
    )
    frozen.train(input_fn, steps=1)  # learning rate 0: the weights stay the Keras model's
    result = frozen.evaluate(input_fn)
    assert result["loss"] == pytest.approx(keras_loss, rel=1e-4)
    assert result["mae"] == pytest.approx(keras_mae, rel=1e-4)
    prediction = next(frozen.predict(input_fn))
    np.testing.assert_allclose(prediction["dense_1"], model.predict(X[:1], verbose=0)[0], rtol=1e-4)

    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    trained = keras_to_npu.model_to_npu_estimator(
        keras_model=model, config=NPURunConfig(model_dir=str(tmp_path / "trained"), iterations_per_loop=4)
    )
    trained.train(lambda: input_fn().repeat(), steps=40)
    assert trained.get_variable_value("global_step") == 40
    assert trained.evaluate(input_fn)["loss"] < keras_loss / 2


class _FetchByName(tf.compat.v1.train.SessionRunHook):
    """Fetches tensors by name in every training run, as zoo hooks fetch ``loss/add:0``."""

    def __init__(self, *names):
        self.names, self.values = list(names), []

    def before_run(self, run_context):
        return tf.compat.v1.train.SessionRunArgs(self.names)

    def after_run(self, run_context, run_values):
        self.values.append(run_values.results)


def test_model_to_npu_estimator_names_its_loss_as_tensorflow_1_15_keras_did(tmp_path, monkeypatch):
    monkeypatch.setenv("JOB_ID", "1")
    regularized = keras.regularizers.l2(0.01)
    inputs = keras.Input((3,), name="features")
    hidden = keras.layers.Dense(4, activation="relu", kernel_regularizer=regularized)(inputs)
    total = keras.layers.Dense(1, name="total")(hidden)
    half = keras.layers.Dense(1, name="half")(hidden)
    model = keras.Model(inputs, [total, half])
    model.compile(optimizer=keras.optimizers.SGD(0.0), loss=["mse", "mae"], loss_weights=[1.0, 0.5])
    keras_loss = model.evaluate(X, [Y, Y / 2], verbose=0)[0]

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"features": X}, {"total": Y, "half": Y / 2})).batch(64)

    estimator = keras_to_npu.model_to_npu_estimator(keras_model=model, model_dir=str(tmp_path))
    # 1.0 * mse of "total" (loss/mul), 0.5 * mae of "half" (loss/mul_1), their sum (loss/add), plus l2 (loss/add_1)
    hook = _FetchByName("loss/mul:0", "loss/mul_1:0", "loss/add:0", "loss/add_1:0")
    estimator.train(input_fn, steps=1, hooks=[hook])  # learning rate 0: the Keras model's weights
    total_mse, weighted_half_mae, outputs_loss, total_loss = hook.values[0]
    assert total_mse == pytest.approx(np.mean((model.predict(X, verbose=0)[0] - Y) ** 2), rel=1e-5)
    assert weighted_half_mae == pytest.approx(0.5 * np.mean(np.abs(model.predict(X, verbose=0)[1] - Y / 2)), rel=1e-5)
    assert outputs_loss == pytest.approx(total_mse + weighted_half_mae)
    assert total_loss == pytest.approx(keras_loss, rel=1e-5) and total_loss > outputs_loss  # the l2 penalty
    assert estimator.evaluate(input_fn)["loss"] == pytest.approx(keras_loss, rel=1e-5)


def test_model_to_npu_estimator_trains_batch_normalization_without_the_clones_own_placeholders(tmp_path, monkeypatch):
    monkeypatch.setenv("JOB_ID", "1")
    inputs = keras.Input((3,), name="features")
    normalized = keras.layers.BatchNormalization(momentum=0.5, name="norm")(keras.layers.Dense(4)(inputs))
    model = keras.Model(inputs, keras.layers.Dense(1)(normalized))
    model.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse")

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"features": X}, Y)).batch(16).repeat()

    estimator = keras_to_npu.model_to_npu_estimator(keras_model=model, model_dir=str(tmp_path))
    estimator.train(input_fn, steps=3)  # each step also runs the moving averages' updates
    moving_mean = estimator.get_variable_value("norm/moving_mean")
    assert estimator.get_variable_value("global_step") == 3 and np.abs(moving_mean).max() > 0


def test_model_to_npu_estimator_errors(tmp_path):
    model = keras.Sequential([keras.layers.Dense(1, input_shape=(3,))])
    with pytest.raises(ValueError, match="Either `keras_model` or `keras_model_path` needs to be provided"):
        keras_to_npu.model_to_npu_estimator()
    with pytest.raises(ValueError, match="has not been compiled yet"):
        keras_to_npu.model_to_npu_estimator(keras_model=model, model_dir=str(tmp_path))
    with pytest.raises(ValueError, match="checkpoint_format must be one of"):
        keras_to_npu.model_to_npu_estimator(keras_model=model, checkpoint_format="h5")
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")  # a TF2 optimizer: no graph-mode updates
    with pytest.raises(ValueError, match="needs a legacy Keras optimizer"):
        keras_to_npu.model_to_npu_estimator(keras_model=model, model_dir=str(tmp_path))


@pytest.mark.parametrize("fixed", [False, True], ids=["exponential", "fixed"])
def test_keras_fit_initializes_the_loss_scale_managers_variables(fixed):
    # tf_keras initializes only the variables it tracks and the TF optimizer's variables(), not all globals.
    if fixed:
        manager = FixedLossScaleManager(2**10)
    else:
        manager = ExponentialUpdateLossScaleManager(init_loss_scale=2**10, incr_every_n_steps=1)
    optimizer = NPULossScaleOptimizer(NPUDistributedOptimizer(tf.compat.v1.train.AdamOptimizer(0.01)), manager)
    model = keras.Sequential([keras.layers.Dense(4, activation="relu", input_shape=(3,)), keras.layers.Dense(1)])
    model.compile(optimizer=optimizer, loss="mse")
    history = model.fit(X[:8], Y[:8], batch_size=4, epochs=1, verbose=0)  # 2 steps
    assert np.isfinite(history.history["loss"]).all()
    scale = keras.backend.get_session().run(manager.get_loss_scale())
    assert scale == (2**10 if fixed else 2**12)  # grown once per finite step


def test_loss_scale_optimizer_variables_include_the_managers_once():
    with tf.Graph().as_default():
        manager = ExponentialUpdateLossScaleManager(init_loss_scale=2**10, incr_every_n_steps=1)
        var = tf.compat.v1.Variable(1.0)
        adam = tf.compat.v1.train.AdamOptimizer(0.01)
        adam.minimize(var * var)
        state = manager.variables()
        assert [v.name for v in state] == ["loss_scale:0", "good_steps:0", "bad_steps:0"]
        expected = [v.name for v in adam.variables() + state]
        wrapped = NPULossScaleOptimizer(NPUDistributedOptimizer(adam), manager)
        assert [v.name for v in wrapped.variables()] == expected
        twice = NPUOptimizer(wrapped, loss_scale_manager=manager, is_loss_scale=True)
        assert [v.name for v in twice.variables()] == expected  # no duplicates
        fixed = NPULossScaleOptimizer(adam, FixedLossScaleManager(2**10))
        assert [v.name for v in fixed.variables()] == [v.name for v in adam.variables()]
    with tf.Graph().as_default():
        assert wrapped.variables() == []  # like Optimizer.variables(): only the current graph's
