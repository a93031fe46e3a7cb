"""TF1 Estimator script patterns on npu_bridge's tf.estimator: numpy_input_fn over large arrays keeps the model
directory small and feeds the right values, the Estimator logs what TensorFlow's did (visible in a script with no
logging setup), and canned estimators fail with an error that says what to do instead."""

import logging
import os
import re

import numpy as np
import pytest
import tensorflow as tf
from helpers.processes import run_python

from npu_bridge.core.runtime.errors import NotAvailableError, NotProvidedError, NpuBridgeError

v1 = tf.compat.v1
ROWS, COLUMNS, BATCH = 6400, 1024, 128  # 26 MB of float32 features


def _directory_bytes(path):
    return sum(os.path.getsize(os.path.join(root, name)) for root, _, names in os.walk(path) for name in names)


def _accumulating_model_fn(features, labels, mode):
    """Sums what arrives: features, labels, examples, features x labels and labels x step (the batch order)."""
    x = tf.cast(features["x"], tf.float64)
    y = tf.cast(labels["y"], tf.float64)
    step = v1.train.get_global_step()
    sums = {
        "x_total": tf.reduce_sum(x),
        "y_total": tf.reduce_sum(y),
        "examples": tf.cast(tf.shape(x)[0], tf.float64),
        "x_times_y": tf.reduce_sum(tf.reduce_sum(x, axis=1) * y),
        "y_times_step": tf.reduce_sum(y) * tf.cast(step, tf.float64),
    }
    loss = tf.reduce_mean(features["x"])
    if mode == tf.estimator.ModeKeys.EVAL:
        return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={"x_mean": v1.metrics.mean(x)})
    totals = [
        v1.assign_add(v1.get_variable(name, [], tf.float64, v1.zeros_initializer()), value)
        for name, value in sums.items()
    ]
    with tf.control_dependencies(totals):  # as an optimizer's minimize: no step without a batch
        train_op = tf.group(v1.assign_add(step, 1))
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def test_numpy_input_fn_feeds_a_26_mb_array_without_putting_it_into_the_model_dir(tmp_path):
    x = (np.arange(ROWS * COLUMNS, dtype=np.int64) % 7).astype(np.float32).reshape(ROWS, COLUMNS)
    y = np.arange(ROWS, dtype=np.float32)
    assert x.nbytes > 25e6
    estimator = tf.estimator.Estimator(
        _accumulating_model_fn,
        model_dir=str(tmp_path),
        config=tf.estimator.RunConfig(save_checkpoints_steps=20, log_step_count_steps=None),
    )
    estimator.train(tf.estimator.inputs.numpy_input_fn({"x": x}, {"y": y}, BATCH, num_epochs=1, shuffle=False))

    size = _directory_bytes(tmp_path)
    assert size < 5 * 2**20, f"model_dir holds {size} bytes"
    assert len(tf.io.gfile.glob(str(tmp_path / "*.meta"))) >= 3  # checkpoints at 0, 20, 40 and 50
    assert estimator.get_variable_value("global_step") == ROWS // BATCH  # num_epochs=1 ends training
    rowsums = x.astype(np.float64).sum(axis=1)
    expected = {
        "x_total": rowsums.sum(),
        "y_total": y.sum(),
        "examples": ROWS,
        "x_times_y": (rowsums * y).sum(),
        "y_times_step": (y * (np.arange(ROWS) // BATCH)).sum(),
    }
    assert {name: estimator.get_variable_value(name) for name in expected} == pytest.approx(expected, rel=1e-12)
    result = estimator.evaluate(tf.estimator.inputs.numpy_input_fn({"x": x}, {"y": y}, 1000, 1, shuffle=False))
    assert result["x_mean"] == pytest.approx(x.mean(dtype=np.float64), rel=1e-6)
    assert _directory_bytes(tmp_path) < 5 * 2**20


def _batches(input_fn, limit=100):
    """Runs ``input_fn`` in a fresh graph until its input ends (or ``limit`` batches); returns the batches."""
    found = []
    with tf.Graph().as_default():
        v1.set_random_seed(7)
        tensors = input_fn()
        with v1.Session() as session:
            while len(found) < limit:
                try:
                    found.append(session.run(tensors))
                except tf.errors.OutOfRangeError:
                    break
    return found


def test_numpy_input_fn_batches_epochs_and_the_end_of_the_input():
    x = np.arange(10, dtype=np.int64)
    batches = _batches(tf.estimator.inputs.numpy_input_fn(x, batch_size=4, num_epochs=1, shuffle=False))
    assert [b.tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert batches[0].dtype == np.int64
    two_epochs = _batches(tf.estimator.inputs.numpy_input_fn(x, batch_size=4, num_epochs=2, shuffle=False))
    assert np.concatenate(two_epochs).tolist() == list(range(10)) * 2 and len(two_epochs) == 5
    forever = tf.estimator.inputs.numpy_input_fn(x, batch_size=4, num_epochs=None, shuffle=False)
    assert [b.tolist() for b in _batches(forever, limit=4)][2:] == [[8, 9, 0, 1], [2, 3, 4, 5]]
    with tf.Graph().as_default():
        assert forever().shape.as_list() == [4]  # full batches only: a static batch size, as in TensorFlow


def test_numpy_input_fn_keeps_dicts_arrays_pairs_and_shuffles_each_epoch():
    x = {"a": np.arange(6, dtype=np.float32), "b": np.array(["p", "q", "r", "s", "t", "u"])}
    y = {"label": np.arange(6, dtype=np.int32) * 10}
    features, labels = _batches(tf.estimator.inputs.numpy_input_fn(x, y, batch_size=6, shuffle=False))[0]
    assert sorted(features) == ["a", "b"] and sorted(labels) == ["label"]
    assert features["b"].tolist() == [b"p", b"q", b"r", b"s", b"t", b"u"]
    shuffled = tf.estimator.inputs.numpy_input_fn(x["a"], y["label"], batch_size=4, num_epochs=3, shuffle=True)
    pairs = _batches(shuffled)
    values = np.concatenate([features for features, _ in pairs])
    np.testing.assert_array_equal(np.concatenate([labels for _, labels in pairs]), values * 10)  # rows stay paired
    epochs = values.reshape(3, 6)
    assert all(sorted(epoch) == list(range(6)) for epoch in epochs)
    assert len({tuple(epoch) for epoch in epochs}) > 1  # each epoch in a new order
    again = np.concatenate([features for features, _ in _batches(shuffled)])
    np.testing.assert_array_equal(again, values)  # the graph seed fixes the order


@pytest.mark.parametrize(
    "args, error, message",
    [
        (({"x": np.zeros(3)}, np.zeros(4)), ValueError, "same length"),
        (({"k": np.zeros(3)}, {"k": np.zeros(3)}), ValueError, "duplicate keys are found in both x and y"),
        (([1.0, 2.0],), TypeError, "x must be a dict of numpy arrays or a numpy array, got list"),
        (({},), ValueError, "x cannot be an empty dict"),
    ],
)
def test_numpy_input_fn_rejects_bad_arrays(args, error, message):
    with pytest.raises(error, match=message):
        tf.estimator.inputs.numpy_input_fn(*args, shuffle=False)
    with pytest.raises(ValueError, match="batch_size must be a positive int, got 0"):
        tf.estimator.inputs.numpy_input_fn(np.zeros(3), batch_size=0, shuffle=False)


def _classifier_model_fn(features, labels, mode):
    logits = v1.layers.dense(features["x"], 2, kernel_initializer=v1.zeros_initializer())
    loss = v1.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = v1.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=v1.train.get_global_step())
    accuracy = v1.metrics.accuracy(labels, tf.argmax(logits, 1))
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops={"accuracy": accuracy})


CLASSIFIER_SCRIPT = """
    import numpy as np
    import tensorflow as tf
    import npu_bridge
    {setup}
    tf.compat.v1.disable_eager_execution()
    x = np.random.RandomState(0).rand(80, 4).astype(np.float32)
    y = (x.sum(axis=1) > 2).astype(np.int32)

    def model_fn(features, labels, mode):
        logits = tf.compat.v1.layers.dense(features["x"], 2)
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
        step = tf.compat.v1.train.get_global_step()
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
        accuracy = tf.compat.v1.metrics.accuracy(labels, tf.argmax(logits, 1))
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops={{"accuracy": accuracy}})

    config = tf.estimator.RunConfig(model_dir={model_dir!r}, log_step_count_steps=5, save_checkpoints_steps=10)
    estimator = tf.estimator.Estimator(model_fn, config=config)
    estimator.train(tf.estimator.inputs.numpy_input_fn({{"x": x}}, y, batch_size=8, num_epochs=1, shuffle=True))
    result = estimator.evaluate(tf.estimator.inputs.numpy_input_fn({{"x": x}}, y, batch_size=8, shuffle=False))
    print("RESULT", ", ".join(f"{{k}} = {{v!s}}" for k, v in sorted(result.items())))
    print("LEVEL", tf.get_logger().level)
"""


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_a_script_with_no_logging_setup_sees_training_and_evaluation_in_its_log(tmp_path):
    result = run_python(CLASSIFIER_SCRIPT.format(setup="", model_dir=str(tmp_path)), timeout=200)
    assert result.returncode == 0, result.stderr[-3000:]
    log = result.stderr
    # As in TensorFlow 1.x, the step is read in the same run as the train op, before or after its increment.
    for step in (0, 5):
        assert re.search(rf"^INFO:tensorflow:loss = [-0-9.e]+, step = ({step}|{step + 1})\b", log, re.M), log[-3000:]
    assert re.search(r"^INFO:tensorflow:global_step/sec: [0-9.e+]+$", log, re.M)
    assert f"INFO:tensorflow:Saving checkpoints for 10 into {tmp_path}{os.sep}model.ckpt." in log
    assert re.search(r"^INFO:tensorflow:Loss for final step: [-0-9.e]+\.$", log, re.M)
    results = re.findall(r"^RESULT (.*)$", result.stdout, re.M)
    assert results and "global_step = 10" in results[0] and results[0].startswith("accuracy = ")
    assert f"INFO:tensorflow:Saving dict for global step 10: {results[0]}\n" in log
    assert "LEVEL 0" in result.stdout  # the logger's level is the script's again once the Estimator returns


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_a_script_that_chose_a_verbosity_keeps_it(tmp_path):
    setup = "tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.WARN)"
    result = run_python(CLASSIFIER_SCRIPT.format(setup=setup, model_dir=str(tmp_path)), timeout=200)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "INFO:tensorflow:" not in result.stderr
    assert "LEVEL 30" in result.stdout


def test_the_estimator_logs_tensorflow_messages_on_the_tensorflow_logger(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="tensorflow")
    x = np.random.RandomState(0).rand(40, 4).astype(np.float32)
    y = (x.sum(axis=1) > 2).astype(np.int32)
    config = tf.estimator.RunConfig(log_step_count_steps=2, save_checkpoints_steps=4)
    estimator = tf.estimator.Estimator(_classifier_model_fn, model_dir=str(tmp_path), config=config)
    estimator.train(tf.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=8, shuffle=False))
    result = estimator.evaluate(tf.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=8, shuffle=False))
    messages = [r.getMessage() for r in caplog.records if r.name == "tensorflow" and r.levelno == logging.INFO]
    assert any(re.fullmatch(r"loss = 0.6931472, step = [01]", m) for m in messages)  # zero weights: log(2)
    assert any(re.fullmatch(r"loss = [0-9.]+, step = [23] \([0-9.]+ sec\)", m) for m in messages)
    assert f"Saving checkpoints for 5 into {tmp_path}{os.sep}model.ckpt." in messages
    assert any(m.startswith("Loss for final step: ") for m in messages)
    assert (
        f"Saving dict for global step 5: accuracy = {result['accuracy']!s}, global_step = 5, loss = {result['loss']!s}"
        in messages
    )
    assert tf.get_logger().level == logging.INFO  # what the test chose stays


@pytest.mark.parametrize(
    "lookup, name",
    [
        (lambda: tf.estimator.DNNClassifier, "tf.estimator.DNNClassifier"),
        (lambda: tf.compat.v1.estimator.LinearClassifier, "tf.estimator.LinearClassifier"),
        (lambda: tf.estimator.BoostedTreesClassifier, "tf.estimator.BoostedTreesClassifier"),
        (lambda: tf.estimator.DNNLinearCombinedClassifier, "tf.estimator.DNNLinearCombinedClassifier"),
    ],
)
def test_canned_estimators_raise_an_error_saying_what_to_write_instead(lookup, name):
    with pytest.raises(NotProvidedError) as raised:
        lookup()
    message = str(raised.value)
    assert message.startswith(f"{name} is a canned estimator (or head), which is not provided by npu_bridge's ")
    assert "tf.estimator on TensorFlow 2.21" in message
    assert "write a model_fn(features, labels, mode, params)" in message and "Estimator(model_fn)" in message
    for catch in (AttributeError, NotAvailableError, NotImplementedError, NpuBridgeError):
        with pytest.raises(catch):
            lookup()


def test_other_missing_names_raise_the_same_error_and_probing_stays_sane():
    with pytest.raises(
        NotProvidedError, match=r"tf\.estimator\.experimental\.InMemoryEvaluatorHook is a name that is not provided .* "
    ):
        tf.estimator.experimental.InMemoryEvaluatorHook  # noqa: B018
    with pytest.raises(NotProvidedError, match=r"tf\.estimator\.inputs\.pandas_input_fn .*from_tensor_slices"):
        tf.estimator.inputs.pandas_input_fn  # noqa: B018
    with pytest.raises(NotProvidedError, match=r"provides ClassificationOutput, .* in tf\.estimator\.export"):
        tf.estimator.export.EvalOutput  # noqa: B018
    assert not hasattr(tf.estimator, "DNNRegressor")
    assert getattr(tf.compat.v1.estimator, "LinearRegressor", None) is None
    assert hasattr(tf.estimator, "Estimator") and hasattr(tf.estimator.inputs, "numpy_input_fn")
    for private in ("__wrapped__", "_private", "__all_by_module__"):
        with pytest.raises(AttributeError) as raised:
            getattr(tf.estimator, private)
        assert type(raised.value) is AttributeError
    with pytest.raises(ImportError, match="cannot import name 'DNNClassifier'"):
        from tensorflow.estimator import DNNClassifier  # noqa: F401
