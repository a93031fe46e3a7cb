"""NPU normalization ops: LayerNorm (returning mean and variance) and Centralization."""

import tensorflow as tf

from npu_bridge.core.compute.tensors import as_dtype
from npu_bridge.core.plan.pass_contract import IMPL_NAME_ATTR, IMPL_OP_ATTR  # read by the impl_mode pass
from npu_bridge.core.runtime.errors import NpuArgumentError


def _axes(rank, begin, what):
    if not -rank <= begin < rank:
        raise NpuArgumentError(f"layer_norm: {what}={begin} is out of range for a tensor of rank {rank}")
    return list(range(begin % rank, rank))


def _marked_rsqrt(value, op_name):
    """rsqrt(value), marked so the simulated Ascend backend applies LayerNorm's implementation mode."""
    if tf.executing_eagerly():
        return tf.math.rsqrt(value)
    attrs = {
        IMPL_OP_ATTR: tf.compat.v1.AttrValue(s=b"LayerNorm"),
        IMPL_NAME_ATTR: tf.compat.v1.AttrValue(s=op_name.encode("utf-8")),
    }
    with tf.compat.v1.get_default_graph()._attr_scope(attrs):
        return tf.math.rsqrt(value)


def layer_norm(x, gamma, beta, begin_norm_axis=0, begin_params_axis=0, epsilon=1e-7, name=None):
    """LayerNorm: normalizes ``x`` over the dimensions from ``begin_norm_axis`` on.

    Args:
      x: float tensor of known rank.
      gamma, beta: scale and offset, shaped like x's dimensions from ``begin_params_axis`` on.
      begin_norm_axis: first normalized dimension (negative counts from the end).
      begin_params_axis: first dimension gamma and beta cover.
      epsilon: added to the variance.
      name: op name (default "LayerNorm"); op_precision_mode's [ByNodeName] refers to it.
    Returns:
      (y, mean, variance); mean and variance keep the normalized dimensions with size 1.
    Raises:
      ValueError: x's rank is unknown or an axis is out of range.
    """
    with tf.name_scope(name or "LayerNorm") as scope:
        x = tf.convert_to_tensor(x)
        rank = x.shape.rank
        if rank is None:
            raise NpuArgumentError("layer_norm: x must have a known rank")
        axes = _axes(rank, begin_norm_axis, "begin_norm_axis")
        _axes(rank, begin_params_axis, "begin_params_axis")
        mean = tf.reduce_mean(x, axis=axes, keepdims=True)
        centered = x - mean
        variance = tf.reduce_mean(tf.square(centered), axis=axes, keepdims=True)
        rstd = _marked_rsqrt(variance + as_dtype(epsilon, x.dtype), scope.rstrip("/"))
        y = centered * rstd * as_dtype(gamma, x.dtype) + as_dtype(beta, x.dtype)
        return y, mean, variance


def centralization(x, axes, name=None):
    """Centralization: ``x - mean(x, axes)`` (gradient centralization).

    Args:
      x: float tensor.
      axes: int or list of ints to average over.
    """
    with tf.name_scope(name or "Centralization"):
        x = tf.convert_to_tensor(x)
        return x - tf.reduce_mean(x, axis=axes, keepdims=True)
