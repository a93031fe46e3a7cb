"""A BatchNormalization subclass that overrides ``_moments`` with Keras 2.6's signature (EfficientNet's
``TpuBatchNormalization``) works on tf_keras 2.21, which passes ``mask=`` too; one with the new signature is left
alone. A convolution subclass that calls Keras 2.6's ``_convolution_op`` convolves."""

import importlib.util

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from npu_bridge.core.runtime import after_import, keras_overrides
from npu_bridge.core.runtime.errors import NpuArgumentError

keras_overrides.install()


class OldSignature(tf_keras.layers.BatchNormalization):
    calls = 0

    def _moments(self, inputs, reduction_axes, keep_dims):
        OldSignature.calls += 1
        return super()._moments(inputs, reduction_axes, keep_dims=keep_dims)


class NewSignature(tf_keras.layers.BatchNormalization):
    def _moments(self, inputs, reduction_axes, keep_dims, mask=None):
        return super()._moments(inputs, reduction_axes, keep_dims=keep_dims, mask=mask)


def test_an_override_with_keras_2_6_s_signature_is_called_without_a_mask_and_normalizes():
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    before = OldSignature.calls
    with tf.Graph().as_default(), tf.compat.v1.Session() as session:  # graph mode, as TF1 scripts run
        output = OldSignature(epsilon=1e-3)(tf.constant(x), training=True)
        session.run(tf.compat.v1.global_variables_initializer())
        y = session.run(output)
    assert OldSignature.calls == before + 1
    expected = (x - x.mean(axis=0)) / np.sqrt(x.var(axis=0) + 1e-3)
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)


def test_a_mask_the_old_override_cannot_apply_is_refused_naming_the_class():
    layer = OldSignature()
    layer.build((4, 2))
    with pytest.raises(NpuArgumentError, match=r"OldSignature\._moments\(inputs, reduction_axes, keep_dims\)"):
        layer._moments(np.ones((4, 2), np.float32), [0], keep_dims=False, mask=np.ones((4,), np.float32))


def test_an_override_that_takes_a_mask_is_left_as_written():
    assert NewSignature._moments is vars(NewSignature)["_moments"]
    assert NewSignature._moments.__qualname__ == "NewSignature._moments"
    assert OldSignature._moments.__wrapped__.__qualname__ == "OldSignature._moments"


class StandardizedConv(tf_keras.layers.Conv2D):
    """DeepLabV3's ``conv2d_ws``: standardizes the kernel, then calls Keras 2.6's ``_convolution_op``."""

    def call(self, inputs):
        mean, variance = tf.nn.moments(self.kernel, axes=[0, 1, 2], keepdims=True)
        return self._convolution_op(inputs, (self.kernel - mean) / tf.sqrt(variance + 1e-5))


class OwnConvolutionOp(tf_keras.layers.Conv2D):
    def build(self, input_shape):
        super().build(input_shape)
        self._convolution_op = lambda inputs, kernel: tf.zeros_like(inputs[..., :1])  # set by the layer itself


def test_keras_2_6_s_convolution_op_convolves_and_a_layer_that_sets_its_own_keeps_it():
    x = np.random.RandomState(0).rand(1, 5, 5, 2).astype(np.float32)
    with tf.Graph().as_default(), tf.compat.v1.Session() as session:  # graph mode, as TF1 scripts run
        layer = StandardizedConv(1, 3, use_bias=False)
        output = layer(tf.constant(x))
        own = OwnConvolutionOp(1, 3)
        own.build((1, 5, 5, 2))
        own_output = own._convolution_op(tf.constant(x), own.kernel)
        session.run(tf.compat.v1.global_variables_initializer())
        y, kernel, own_y = session.run([output, layer.kernel, own_output])
    standardized = (kernel - kernel.mean()) / np.sqrt(kernel.var() + 1e-5)
    expected = np.array(
        [[np.sum(x[0, i : i + 3, j : j + 3, :] * standardized[..., 0]) for j in range(3)] for i in range(3)]
    ).reshape(1, 3, 3, 1)
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)
    assert not own_y.any()


def test_a_callback_waits_for_the_module_and_runs_at_once_when_it_is_imported(tmp_path, monkeypatch):
    (tmp_path / "late_module.py").write_text("VALUE = 7\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    seen = []
    after_import.when_imported("late_module", lambda module: seen.append(module.VALUE))
    assert seen == []
    import late_module  # noqa: F401

    assert seen == [7]
    after_import.when_imported("late_module", lambda module: seen.append(module.VALUE * 2))
    assert seen == [7, 14]


def test_a_module_only_looked_up_keeps_its_callbacks_for_its_import(tmp_path, monkeypatch):
    # TensorFlow asks where tf_keras is (importlib.util.find_spec) before importing it: that is not the import
    (tmp_path / "probed_module.py").write_text("VALUE = 3\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    seen = []
    after_import.when_imported("probed_module", lambda module: seen.append(module.VALUE))
    assert importlib.util.find_spec("probed_module") is not None
    assert seen == []
    import probed_module  # noqa: F401

    assert seen == [3]
