"""NPU dropout: a mask is generated from (shape, keep probability, seeds) only, then applied.

As on Ascend, ``DropOutGenMask`` makes the mask and ``DropOutDoMask`` scales the kept elements by
1 / keep_prob; the gradient reuses the forward mask. The mask here holds one uint8 (0 or 1) per element;
Ascend packs bits, a layout internal to the two ops. A new mask is drawn on every run; ``seed`` (with the graph
seed) fixes the sequence as with TensorFlow's random ops.
"""

import numbers

import tensorflow as tf

from npu_bridge.core.runtime.errors import NpuArgumentError


def _check_x(x):
    x = tf.convert_to_tensor(x, name="x")
    if not x.dtype.is_floating:
        raise NpuArgumentError(
            f"x has to be a floating point tensor since it's going to be scaled. Got a {x.dtype.name} tensor instead."
        )
    return x


def _keep_prob(keep_prob, dtype):
    """Validates keep_prob (a number in (0, 1] or a scalar tensor); returns it as a rank-0 tensor of ``dtype``.

    A tensor of unknown rank (``placeholder(tf.float32)`` without a shape, ``1 - placeholder``) is reshaped to
    a scalar, so the mask and the output keep x's static shape; feeding it a non-scalar fails at run time.
    """
    if isinstance(keep_prob, numbers.Real) and not isinstance(keep_prob, bool):
        if not 0 < keep_prob <= 1:
            raise NpuArgumentError(
                f"keep_prob must be a scalar tensor or a float in the range (0, 1], got {keep_prob:g}"
            )
    keep_prob = tf.convert_to_tensor(keep_prob, dtype=dtype, name="keep_prob")
    keep_prob.shape.assert_has_rank(0)
    if keep_prob.shape.rank is None:
        keep_prob = tf.reshape(keep_prob, [], name="keep_prob_scalar")
    return keep_prob


def _noise_shape(x, noise_shape):
    return tf.shape(x) if noise_shape is None else tf.convert_to_tensor(noise_shape, dtype=tf.int32)


def gen_mask(shape, prob, seed=0, seed2=0, mask_dtype=tf.uint8, name=None):
    """DropOutGenMask: draws a dropout mask, 1 with probability ``prob``, else 0.

    Args:
      shape: 1-D int tensor, the mask's shape.
      prob: scalar float tensor, the keep probability.
      seed, seed2: the random op's seeds (both 0: a nondeterministic sequence), as upstream's op takes them.
      mask_dtype: dtype of the mask (uint8 or bool).
      name: op name scope (default "DropOutGenMask").
    Returns:
      The mask.
    """
    with tf.name_scope(name or "DropOutGenMask"):
        uniform = tf.raw_ops.RandomUniform(shape=shape, dtype=tf.float32, seed=seed, seed2=seed2)
        return tf.cast(uniform < tf.cast(prob, tf.float32), mask_dtype)


def do_mask(x, mask, keep_prob, name=None):
    """Applies a dropout mask: ``x * mask / keep_prob`` (the mask broadcasts against ``x``).

    No gradient flows to ``mask`` or ``keep_prob``, as upstream.

    Args:
      x: float tensor.
      mask: a mask from ``gen_mask``.
      keep_prob: scalar tensor of x's dtype.
      name: op name scope (default "DropOutDoMask").
    Returns:
      A tensor like ``x``.
    """
    with tf.name_scope(name or "DropOutDoMask"):
        scale = tf.stop_gradient(tf.math.reciprocal(keep_prob))
        return x * tf.cast(mask, x.dtype) * scale


def _dropout(x, keep_prob, noise_shape, seed, name, default_name, mask_dtype=tf.uint8):
    with tf.name_scope(name or default_name):
        x = _check_x(x)
        if isinstance(keep_prob, numbers.Real) and not isinstance(keep_prob, bool) and keep_prob == 1:
            _keep_prob(keep_prob, x.dtype)
            return x
        keep = _keep_prob(keep_prob, x.dtype)
        seed, seed2 = tf.compat.v1.get_seed(seed)  # the graph seed and this op's seed, as random ops use them
        mask = gen_mask(_noise_shape(x, noise_shape), keep, seed or 0, seed2 or 0, mask_dtype=mask_dtype)
        y = do_mask(x, mask, keep)
        y.set_shape(x.shape)  # as DropOutDoMask: the output has x's shape, whatever is known of the mask's
        return y


def dropout(x, keep_prob, noise_shape=None, seed=None, name=None):
    """``npu_ops.dropout``: keeps each element with probability ``keep_prob``, scaled by 1 / keep_prob.

    Args:
      x: a floating-point tensor.
      keep_prob: a float in (0, 1] or a scalar tensor (e.g. a placeholder); 1 returns ``x`` unchanged.
      noise_shape: shape of the mask (broadcast against x); default x's shape.
      seed: op seed.
      name: name scope.
    Returns:
      A tensor like ``x``.
    Raises:
      ValueError: x is not floating point, keep_prob is a number outside (0, 1] or a tensor of rank > 0.
    """
    return _dropout(x, keep_prob, noise_shape, seed, name, "dropout")


def dropout_v3(x, keep_prob, noise_shape=None, seed=None, name=None):
    """``npu_aicore_ops.dropout_v3`` (DropOutGenMaskV3 / DropOutDoMaskV3): same semantics as ``dropout``."""
    return _dropout(x, keep_prob, noise_shape, seed, name, "dropout_v3")


def dropout_v4(x, keep_prob, noise_shape=None, seed=None, output_dtype=tf.bool, name=None):
    """``npu_aicore_ops.dropout_v4`` (DropOutGenMaskV4 with a bool or uint8 mask / DropOutDoMaskV3).

    Args:
      output_dtype: dtype of the generated mask, tf.bool or tf.uint8.
      Others: as ``dropout``.
    Raises:
      ValueError: as ``dropout``, or output_dtype is not bool / uint8.
    """
    output_dtype = tf.as_dtype(output_dtype)
    if output_dtype not in (tf.bool, tf.uint8):
        raise NpuArgumentError(f"output_dtype must be tf.bool or tf.uint8, got {output_dtype.name}")
    return _dropout(x, keep_prob, noise_shape, seed, name, "dropout_v4", mask_dtype=output_dtype)
