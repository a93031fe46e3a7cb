"""``keras.utils.multi_gpu_model`` of TensorFlow 1.15's Keras in the TF1 mode: the replicated model computes what the
model computes (the batch cut into one slice per GPU and put back together), shares its weights and names its
outputs as the model's; on this machine, which has no GPUs, every call raises ValueError naming the devices, as 1.15's
did. Also TensorFlow 1.15 / 2.6's gradient internals SHAP replaces (``backprop._record_gradient``,
``gradients_util._IsBackpropagatable``): a replacement of the latter changes what ``tf.gradients`` reaches."""

import helpers.tf1
import numpy as np
import pytest
import tensorflow as tf
from tf_keras.api._v1 import keras as keras_v1  # tf.keras of the TF1 mode

from npu_bridge.core.tf1 import backprop_reach, multi_gpu

v1 = tf.compat.v1


@pytest.fixture
def four_gpus(monkeypatch):
    """Pretends the machine has /gpu:0-3 (soft placement runs their operations on the CPU)."""
    monkeypatch.setattr(multi_gpu, "_available_devices", lambda: ["/cpu:0", "/gpu:0", "/gpu:1", "/gpu:2", "/gpu:3"])


def test_the_replicated_model_computes_the_model_on_slices_of_the_batch_and_shares_its_weights(four_gpus):
    with tf.Graph().as_default(), v1.Session(config=v1.ConfigProto(allow_soft_placement=True)) as session:
        keras_v1.backend.set_session(session)
        inputs = keras_v1.Input((4,))
        model = keras_v1.Model(inputs, keras_v1.layers.Dense(3, name="scores")(inputs))
        parallel = multi_gpu.multi_gpu_model(model, gpus=3)
        assert parallel.output_names == ["scores"]
        assert {w.name for w in parallel.weights} == {w.name for w in model.weights}
        x = np.random.RandomState(0).rand(7, 4).astype(np.float32)  # slices of 2, 2 and 3 rows
        np.testing.assert_allclose(parallel.predict(x), model.predict(x), rtol=1e-6)
        devices = {op.device for op in session.graph.get_operations() if "replica_1/" in op.name}
        assert any(device.endswith("GPU:1") for device in devices)


def test_the_outputs_keep_the_model_s_names_and_merging_may_stay_on_the_first_gpu(four_gpus):
    with tf.Graph().as_default(), v1.Session(config=v1.ConfigProto(allow_soft_placement=True)) as session:
        keras_v1.backend.set_session(session)
        inputs = keras_v1.Input((2,))
        dense = keras_v1.layers.Dense(1, name="same")
        model = keras_v1.Model(inputs, [dense(inputs), dense(inputs), keras_v1.layers.Dense(2, name="other")(inputs)])
        parallel = multi_gpu.multi_gpu_model(model, gpus=[1, 3], cpu_merge=False)
        assert parallel.output_names == model.output_names == ["same", "same_1", "other"]
        merge = session.graph.get_operation_by_name(parallel.outputs[0].op.name)
        assert merge.device.endswith("GPU:1")
        x = np.arange(10, dtype=np.float32).reshape(5, 2)
        for got, want in zip(parallel.predict(x), model.predict(x)):
            np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize(
    "gpus, words",
    [
        (1, r"multi_gpu_model\(gpus=1\): replicating the model pays only on two GPUs or more"),
        ([2], r"multi_gpu_model\(gpus=\[2\]\): replicating"),
        (2, r"needs the devices \['/cpu:0', '/gpu:0', '/gpu:1'\], but this machine has only \['/cpu:0'\]"),
        ([0, 5], r"\(missing: \['/gpu:0', '/gpu:5'\]\)"),
    ],
)
def test_too_few_gpus_or_missing_devices_raise_value_error_naming_them(monkeypatch, gpus, words):
    monkeypatch.setattr(multi_gpu, "_available_devices", lambda: ["/cpu:0"])
    with pytest.raises(ValueError, match=words):
        multi_gpu.multi_gpu_model(object(), gpus)


def test_repeated_output_names_are_numbered_in_order():
    assert multi_gpu._unique_names(["y", "z", "y", "y"]) == ["y_1", "z", "y_2", "y_3"]
    assert multi_gpu._unique_names(["a", "b"]) == ["a", "b"]


def test_device_names_are_normalized_as_keras_did():
    assert multi_gpu._normalized("/job:localhost/replica:0/task:0/device:GPU:1") == "/gpu:1"
    assert multi_gpu._normalized("/device:CPU:0") == "/cpu:0"
    assert "/cpu:0" in multi_gpu._available_devices()


def test_a_replaced_is_backpropagatable_decides_what_tf_gradients_reaches():
    from tensorflow.python.ops import gradients_util

    backprop_reach.add()
    assert gradients_util._IsBackpropagatable is backprop_reach._IsBackpropagatable
    with tf.Graph().as_default() as graph:
        x = v1.placeholder(tf.float32, [3])
        assert backprop_reach._IsBackpropagatable(x) and not backprop_reach._IsBackpropagatable(tf.cast(x, tf.int32))
        assert backprop_reach._IsBackpropagatable(tf.cast(x, tf.bfloat16))
        with graph.gradient_override_map({"Cast": "Identity"}):  # a gradient through the integer tensor
            y = tf.cast(tf.cast(x, tf.int32), tf.float32) * 2.0
        assert tf.gradients(y, x) == [None]  # the integer tensor stops the reach, as on TensorFlow 1.15
        gradients_util._IsBackpropagatable = lambda tensor: True  # what SHAP's DeepExplainer does
        try:
            (gradient,) = tf.gradients(y, x)
        finally:
            gradients_util._IsBackpropagatable = backprop_reach._IsBackpropagatable
        with v1.Session() as session:
            assert session.run(gradient, {x: [1.5, 2.5, 3.5]}).tolist() == [2.0, 2.0, 2.0]
        assert tf.gradients(y, x) == [None]


SCRIPT = """
import json
import tensorflow as tf
import keras
from tensorflow.python.keras.utils import multi_gpu_model
from tensorflow.python.eager import backprop, execute
from tensorflow.python.ops import gradients_util

model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])
try:
    multi_gpu_model(model, gpus=2)
    error = None
except ValueError as e:
    error = str(e)
print("RESULT " + json.dumps({
    "same": [multi_gpu_model is tf.keras.utils.multi_gpu_model, multi_gpu_model is keras.utils.multi_gpu_model],
    "error": error,
    "record_gradient": backprop._record_gradient is execute.record_gradient,
    "reach": gradients_util._IsBackpropagatable(tf.constant(1.0)),
}))
"""


def test_zoo_import_paths_work_in_the_tf1_mode(tmp_path):
    found = helpers.tf1.run_tf1_script(tmp_path, SCRIPT)
    assert found["same"] == [True, True]
    assert "needs the devices ['/cpu:0', '/gpu:0', '/gpu:1'], but this machine has only ['/cpu:0']" in found["error"]
    assert found["record_gradient"] is True and found["reach"] is True
