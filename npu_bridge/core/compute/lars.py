"""LARS (layer-wise adaptive rate scaling) gradient updates: ``npu_ops.LARS`` and ``npu_ops.LARSV2``.

For a weight w and its gradient g, with ||.|| the L2 norm:
  trust = hyperpara * ||w|| / (||g|| + weight_decay * ||w|| + epsilon)   (1 when ||w|| or ||g|| is 0)
  result = trust * (g + weight_decay * w)
LARSV2 with ``use_clip`` limits the trust ratio LARC-style, to min(trust / learning_rate, 1), so the
effective rate never exceeds ``learning_rate``; without it ``learning_rate`` is not needed.
"""

import tensorflow as tf

from npu_bridge.core.compute.tensors import as_dtype
from npu_bridge.core.runtime.errors import NpuArgumentError


def _trust(w, g, weight_decay, hyperpara, epsilon):
    w_norm = tf.norm(w)
    g_norm = tf.norm(g)
    ratio = hyperpara * w_norm / (g_norm + weight_decay * w_norm + epsilon)
    return tf.where(tf.logical_and(w_norm > 0, g_norm > 0), ratio, tf.ones_like(ratio))


def lars(inputs_w, inputs_g, weight_decay, hyperpara=0.001, epsilon=1e-5, name=None):
    """``npu_ops.LARS``: LARS-scaled gradients of a list of weights.

    Args:
      inputs_w: list of weight tensors.
      inputs_g: list of their gradients (same length and shapes).
      weight_decay: float or scalar tensor.
      hyperpara: the LARS coefficient (eta).
      epsilon: added to the denominator.
    Returns:
      A list of updated gradients.
    Raises:
      ValueError: the lists differ in length.
    """
    if len(inputs_w) != len(inputs_g):
        raise NpuArgumentError(f"LARS: inputs_w has {len(inputs_w)} tensors but inputs_g has {len(inputs_g)}")
    with tf.name_scope(name or "LARS"):
        result = []
        for w, g in zip(inputs_w, inputs_g):
            w = tf.convert_to_tensor(w)
            g = tf.convert_to_tensor(g, dtype=w.dtype)
            wd = as_dtype(weight_decay, w.dtype)
            result.append(_trust(w, g, wd, hyperpara, epsilon) * (g + wd * w))
        return result


def lars_v2(
    input_weight, input_grad, weight_decay, learning_rate, hyperpara=0.001, epsilon=1e-5, use_clip=False, name=None
):
    """``npu_ops.LARSV2``: the LARS-scaled gradient of one weight.

    Args:
      input_weight, input_grad: the weight and its gradient.
      weight_decay, learning_rate: floats or scalar tensors.
      hyperpara: the LARS coefficient.
      epsilon: added to the denominator.
      use_clip: clip the trust ratio to min(trust / learning_rate, 1).
    Returns:
      The updated gradient.
    """
    with tf.name_scope(name or "LARSV2"):
        w = tf.convert_to_tensor(input_weight)
        g = tf.convert_to_tensor(input_grad, dtype=w.dtype)
        wd = as_dtype(weight_decay, w.dtype)
        trust = _trust(w, g, wd, hyperpara, epsilon)
        if use_clip:
            trust = tf.minimum(trust / as_dtype(learning_rate, w.dtype), 1.0)
        return trust * (g + wd * w)
