"""``npu_device.ops``: the adapter's NPU activations for TF2 code."""

import tensorflow as tf

from npu_bridge.core.compute import activations


def gelu(x):
    """The NPU's approximate GELU (``FastGelu``) in graphs and Keras models; TensorFlow's exact GELU eagerly,
    as the adapter computes it.

    Args:
      x: a float tensor (or a Keras symbolic tensor while a functional model is built).
    Returns:
      GELU of ``x``.
    """
    if tf.executing_eagerly() and not _is_keras_symbolic(x):
        return tf.nn.gelu(x)
    return activations.fast_gelu(x)


def _is_keras_symbolic(x):
    return type(x).__module__.startswith("tf_keras.")
