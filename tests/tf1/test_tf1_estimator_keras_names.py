"""TensorFlow 1.15 names the TF1 mode adds for the model zoo: ``variable_scope.variable``,
``rnn_cell_impl._like_rnncell``, ``keras.preprocessing.image``'s image functions, ``tf.estimator.experimental``'s
early-stopping hooks, ``tf.contrib.estimator.replicate_model_fn`` / ``TowerOptimizer`` and
``tf.contrib.learn.preprocessing.VocabularyProcessor``, checked by their values."""

import helpers.tf1
import numpy as np
import pytest
import tensorflow as tf

from npu_bridge.core import tf_estimator
from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError, NpuKeyError
from npu_bridge.core.tf1 import learn_preprocessing, rnn_cell_checks, tower_replication
from npu_bridge.core.tf_estimator import experimental

v1 = tf.compat.v1

# ---------------------------------------------------------------- _like_rnncell


def test_like_rnncell_accepts_a_cell_and_rejects_other_objects():
    class CellLike:
        output_size = state_size = 2

        def zero_state(self, batch_size, dtype):
            return None

        def __call__(self, inputs, state):
            return inputs, state

    class NotCallable:
        output_size = state_size = 2

        def zero_state(self, batch_size, dtype):
            return None

    assert rnn_cell_checks._like_rnncell(v1.nn.rnn_cell.BasicLSTMCell(4))
    assert rnn_cell_checks._like_rnncell(CellLike())
    assert not rnn_cell_checks._like_rnncell(NotCallable())
    assert not rnn_cell_checks._like_rnncell(tf.constant(1.0))
    assert not rnn_cell_checks._like_rnncell(object())


# ---------------------------------------------------------------- VocabularyProcessor


DOCUMENTS = ["a cat sat", "the cat ate a fish", "HTTPServer answers"]


def test_vocabulary_processor_gives_ids_in_order_of_first_use_and_reverses_them():
    processor = learn_preprocessing.VocabularyProcessor(4)
    ids = np.array(list(processor.fit_transform(DOCUMENTS)))
    # tokens: a cat sat | the cat ate a fish | HTTP Server answers (the regex splits an acronym from a word)
    expected = np.array([[1, 2, 3, 0], [4, 2, 5, 1], [7, 8, 9, 0]], np.int64)
    np.testing.assert_array_equal(ids, expected)
    assert ids.dtype == np.int64
    assert len(processor.vocabulary_) == 10  # <UNK> + 9 words ("fish" is cut from the ids, not from the vocabulary)
    assert list(processor.reverse(expected)) == ["a cat sat <UNK>", "the cat ate a", "HTTP Server answers <UNK>"]
    # frozen after fit: unknown words are 0
    np.testing.assert_array_equal(next(processor.transform(["a dog sat"])), [1, 0, 3, 0])


def test_vocabulary_processor_min_frequency_keeps_frequent_words_by_count():
    processor = learn_preprocessing.VocabularyProcessor(3, min_frequency=1).fit(["b a b", "a c b"])
    # counts: b 3, a 2, c 1 -> c dropped (count <= 1), ids by decreasing count
    np.testing.assert_array_equal(list(processor.transform(["a b c"])), [[2, 1, 0]])


def test_vocabulary_processor_save_and_restore_round_trip(tmp_path):
    processor = learn_preprocessing.VocabularyProcessor(5).fit(DOCUMENTS)
    path = str(tmp_path / "vocab")
    processor.save(path)
    restored = learn_preprocessing.VocabularyProcessor.restore(path)
    assert restored.max_document_length == 5
    np.testing.assert_array_equal(list(restored.transform(DOCUMENTS)), list(processor.transform(DOCUMENTS)))


def test_vocabulary_processor_bad_input():
    with pytest.raises(NpuArgumentError, match="max_document_length"):
        learn_preprocessing.VocabularyProcessor(0)
    with pytest.raises(NpuArgumentError, match="min_frequency"):
        learn_preprocessing.VocabularyProcessor(3, min_frequency=-1)
    with pytest.raises(NpuArgumentTypeError, match="strings"):
        learn_preprocessing.VocabularyProcessor(3).fit([b"bytes"])


# ---------------------------------------------------------------- early stopping


def _constant_loss_model_fn(features, labels, mode):
    w = v1.get_variable("w", [], initializer=v1.zeros_initializer())
    loss = tf.reduce_mean(tf.square(features["x"] + w - 1.0))
    step = v1.train.get_or_create_global_step()
    train_op = v1.train.GradientDescentOptimizer(0.0).minimize(loss, global_step=step)  # the loss never changes
    return tf_estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _input_fn():
    return tf.data.Dataset.from_tensors({"x": np.zeros([2], np.float32)}).repeat()


def _global_step(estimator):
    return int(estimator.get_variable_value("global_step"))


@pytest.mark.timeout(300)
def test_stop_if_no_decrease_hook_stops_training_when_the_eval_loss_stays_flat(tmp_path):
    estimator = tf_estimator.Estimator(_constant_loss_model_fn, model_dir=str(tmp_path))
    for _ in range(3):
        estimator.train(_input_fn, steps=5)
        estimator.evaluate(_input_fn, steps=1)
    metrics = experimental.read_eval_metrics(estimator.eval_dir())
    assert list(metrics) == [5, 10, 15] and {m["loss"] for m in metrics.values()} == {1.0}

    patient = tf_estimator.experimental.stop_if_no_decrease_hook(
        estimator, "loss", 20, run_every_secs=None, run_every_steps=1
    )
    estimator.train(_input_fn, steps=3, hooks=[patient])  # best at 5, last at 15: 10 < 20 steps without decrease
    assert _global_step(estimator) == 18

    hook = tf_estimator.experimental.stop_if_no_decrease_hook(
        estimator, "loss", 10, run_every_secs=None, run_every_steps=1
    )
    estimator.train(_input_fn, steps=100, hooks=[hook])  # 15 - 5 >= 10: stops after the first step
    assert _global_step(estimator) == 19

    higher = tf_estimator.experimental.stop_if_higher_hook(
        estimator, "loss", 0.5, run_every_secs=None, run_every_steps=1
    )
    estimator.train(_input_fn, steps=100, hooks=[higher])
    assert _global_step(estimator) == 20
    lower = tf_estimator.experimental.stop_if_lower_hook(estimator, "loss", 0.5, run_every_secs=None, run_every_steps=1)
    estimator.train(_input_fn, steps=4, hooks=[lower])  # never below 0.5: runs all steps
    assert _global_step(estimator) == 24
    late = tf_estimator.experimental.stop_if_no_increase_hook(
        estimator, "loss", 10, min_steps=10, run_every_secs=None, run_every_steps=1
    )
    estimator.train(_input_fn, steps=4, hooks=[late])  # evaluations from step 10 on: 15 - 10 < 10
    assert _global_step(estimator) == 28

    missing = experimental.stop_if_higher_hook(estimator, "accuracy", 0.5, run_every_secs=None, run_every_steps=1)
    with pytest.raises(NpuKeyError, match="accuracy"):
        estimator.train(_input_fn, steps=2, hooks=[missing])


def test_early_stopping_hook_bad_input(tmp_path):
    estimator = tf_estimator.Estimator(_constant_loss_model_fn, model_dir=str(tmp_path))
    with pytest.raises(NpuArgumentTypeError, match="Estimator"):
        experimental.stop_if_no_decrease_hook(object(), "loss", 10)
    with pytest.raises(NpuArgumentTypeError, match="callable"):
        experimental.make_early_stopping_hook(estimator, "not callable")
    with pytest.raises(NpuArgumentError, match="exactly one"):
        experimental.make_early_stopping_hook(estimator, lambda: False, run_every_secs=10, run_every_steps=10)
    assert experimental.read_eval_metrics(str(tmp_path / "no_such_dir")) == {}


# ---------------------------------------------------------------- replicate_model_fn / TowerOptimizer


@pytest.mark.timeout(300)
def test_replicate_model_fn_runs_one_tower_with_the_models_gradients(tmp_path):
    x, y = np.array([[1.0], [2.0], [3.0]], np.float32), np.array([[2.0], [4.0], [7.0]], np.float32)
    calls = []

    def model_fn(features, labels, mode, params):
        calls.append(params["lr"])
        w = v1.get_variable("w", [1, 1], initializer=v1.ones_initializer())
        loss = v1.losses.mean_squared_error(labels, tf.matmul(features, w))
        optimizer = tower_replication.TowerOptimizer(v1.train.GradientDescentOptimizer(params["lr"]))
        train_op = optimizer.minimize(loss, global_step=v1.train.get_or_create_global_step())
        assert tower_replication.TowerOptimizer.has_been_used()
        return tf_estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    def input_fn():
        return tf.data.Dataset.from_tensors((x, y)).repeat()

    estimator = tf_estimator.Estimator(
        tower_replication.replicate_model_fn(model_fn), model_dir=str(tmp_path), params={"lr": 0.1}
    )
    estimator.train(input_fn, steps=1)
    # one step of gradient descent on mean((x w - y)^2) from w = 1: dL/dw = 2 mean(x (x w - y))
    expected = 1.0 - 0.1 * 2 * np.mean(x * (x * 1.0 - y))
    np.testing.assert_allclose(estimator.get_variable_value("w"), [[expected]], rtol=1e-6)
    assert calls == [0.1]  # one tower


def test_tower_optimizer_builds_an_optimizer_function_once_and_forwards_to_it():
    made = []

    def make():
        made.append(1)
        return v1.train.MomentumOptimizer(0.1, 0.9)

    optimizer = tower_replication.TowerOptimizer(make)
    w = v1.get_variable("w_tower", [2], initializer=v1.ones_initializer())
    optimizer.minimize(tf.reduce_sum(w * w))
    assert made == [1]
    assert optimizer.get_name() == "Momentum" and optimizer.get_slot_names() == ["momentum"]
    assert optimizer.get_slot(w, "momentum") is not None


def test_replication_bad_input():
    with pytest.raises(NpuArgumentError, match="reduced"):
        tower_replication.replicate_model_fn(lambda features: None, loss_reduction=v1.losses.Reduction.NONE)
    with pytest.raises(NpuArgumentTypeError, match="callable"):
        tower_replication.replicate_model_fn("model_fn")
    with pytest.raises(NpuArgumentTypeError, match="Optimizer"):
        tower_replication.TowerOptimizer(3)
    with pytest.raises(NpuArgumentTypeError, match="returned"):
        tower_replication.TowerOptimizer(lambda: "sgd").compute_gradients(tf.constant(1.0))


# ---------------------------------------------------------------- the import paths under the mode

SCRIPT = """
import json
import numpy as np
import tensorflow as tf
from tensorflow.python.ops import variable_scope
from tensorflow.python.ops.rnn_cell_impl import _like_rnncell
from tensorflow.python.keras.preprocessing.image import img_to_array, load_img, array_to_img, save_img
from keras.preprocessing import image as keras_image
from tensorflow.contrib.learn.preprocessing import VocabularyProcessor
from tensorflow.contrib.estimator import TowerOptimizer, replicate_model_fn

v = variable_scope.variable(tf.constant([1.0, 2.0]), name="v")
pixels = (np.arange(4 * 5 * 3) % 256).astype("uint8").reshape(4, 5, 3)
save_img("im.png", pixels, scale=False)
array = img_to_array(load_img("im.png"))
gray = keras_image.img_to_array(keras_image.load_img("im.png", color_mode="grayscale"))
processor = VocabularyProcessor(3)
ids = list(processor.fit_transform(["x y", "y z w"]))
print("RESULT " + json.dumps({
    "variable_v1": isinstance(v, tf.compat.v1.Variable) and v.name == "v:0",
    "like_cell": _like_rnncell(tf.nn.rnn_cell.GRUCell(3)),
    "like_tensor": _like_rnncell(tf.constant(1.0)),
    "array": [list(array.shape), str(array.dtype), bool((array == pixels).all())],
    "gray": list(gray.shape),
    "round_trip": img_to_array(array_to_img(array, scale=False)).tolist() == array.tolist(),
    "ids": [i.tolist() for i in ids],
    "reverse": list(processor.reverse(ids)),
    "hook": tf.estimator.experimental.stop_if_no_decrease_hook.__name__,
    "tower": TowerOptimizer.__name__,
    "replicate": callable(replicate_model_fn(lambda features, labels, mode: None)),
}))
"""


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_names_resolve_under_the_tf1_mode(tmp_path):
    found = helpers.tf1.run_tf1_script(tmp_path, SCRIPT)
    assert found["variable_v1"] is True
    assert found["like_cell"] is True and found["like_tensor"] is False
    assert found["array"] == [[4, 5, 3], "float32", True]
    assert found["gray"] == [4, 5, 1]
    assert found["round_trip"] is True
    assert found["ids"] == [[1, 2, 0], [2, 3, 4]]
    assert found["reverse"] == ["x y <UNK>", "y z w"]
    assert found["hook"] == "stop_if_no_decrease_hook"
    assert found["tower"] == "TowerOptimizer" and found["replicate"] is True
