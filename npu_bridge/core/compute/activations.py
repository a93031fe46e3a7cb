"""NPU activations: Gelu (tanh form), FastGelu, FastGeluV2 and PRelu, with their gradient formulas."""

import math

import tensorflow as tf

from npu_bridge.core.runtime.errors import NpuArgumentError

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_GELU_CUBIC = 0.044715
_FAST_GELU = 1.702
# FastGeluV2: the polynomial erf approximation erf(z) ~ sgn(z) * (a * (min(|z|, -b) + b)^2 + 1) at z = x / sqrt(2)
# (a = -0.2888, b = -1.769), written as x * (sgn(x) * (a/2 * (...)^2 + 0.5) + 0.5).
_FAST_GELU_V2_A = -0.1444
_FAST_GELU_V2_B = -1.769


def gelu(x, name=None):
    """Gelu as Ascend computes it: ``0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))``."""
    with tf.name_scope(name or "Gelu"):
        x = tf.convert_to_tensor(x)
        inner = _SQRT_2_OVER_PI * (x + _GELU_CUBIC * x * x * x)
        return 0.5 * x * (1.0 + tf.tanh(inner))


def gelu_grad(dy, x, y=None, name=None):
    """GeluGrad: ``dy * d gelu(x) / dx`` (``y``, the forward output, is accepted as upstream's op takes it)."""
    del y
    with tf.name_scope(name or "GeluGrad"):
        x = tf.convert_to_tensor(x)
        inner = _SQRT_2_OVER_PI * (x + _GELU_CUBIC * x * x * x)
        tanh = tf.tanh(inner)
        d_inner = _SQRT_2_OVER_PI * (1.0 + 3.0 * _GELU_CUBIC * x * x)
        return dy * (0.5 * (1.0 + tanh) + 0.5 * x * (1.0 - tanh * tanh) * d_inner)


def fast_gelu(x, name=None):
    """FastGelu: ``x / (1 + exp(-1.702 |x|)) * exp(0.851 (x - |x|))`` (= x * sigmoid(1.702 x), overflow-free)."""
    with tf.name_scope(name or "FastGelu"):
        x = tf.convert_to_tensor(x)
        abs_x = tf.abs(x)
        return x / (1.0 + tf.exp(-_FAST_GELU * abs_x)) * tf.exp(0.5 * _FAST_GELU * (x - abs_x))


def fast_gelu_grad(dy, x, name=None):
    """FastGeluGrad: ``dy * d fast_gelu(x) / dx``."""
    with tf.name_scope(name or "FastGeluGrad"):
        x = tf.convert_to_tensor(x)
        s = tf.sigmoid(_FAST_GELU * x)
        return dy * (s + _FAST_GELU * x * s * (1.0 - s))


def fast_gelu_v2(x, name=None):
    """FastGeluV2: ``x * (sgn(x) * (-0.1444 * (min(|x|/sqrt(2), 1.769) - 1.769)^2 + 0.5) + 0.5)``."""
    with tf.name_scope(name or "FastGeluV2"):
        x = tf.convert_to_tensor(x)
        shifted = x + 1e-12
        sign = shifted / tf.abs(shifted)
        clipped = tf.minimum(tf.abs(x) * (1.0 / math.sqrt(2.0)), -_FAST_GELU_V2_B) + _FAST_GELU_V2_B
        return x * (sign * (_FAST_GELU_V2_A * clipped * clipped + 0.5) + 0.5)


def prelu(x, weight, name=None):
    """PRelu: ``x`` where positive, ``weight * x`` elsewhere; ``weight`` has one value or one per channel (dim 1).

    Args:
      x: float tensor, channels in dimension 1 (NCHW or [N, C, ...]).
      weight: 1-D tensor of size 1 or C.
    Raises:
      ValueError: weight is not 1-D, or its size is neither 1 nor x's dimension 1.
    """
    with tf.name_scope(name or "PRelu"):
        x = tf.convert_to_tensor(x)
        weight = tf.convert_to_tensor(weight, dtype=x.dtype)
        weight.shape.assert_has_rank(1)
        size = weight.shape[0]
        if size is not None and size != 1:
            if x.shape.rank is not None and (x.shape.rank < 2 or x.shape[1] not in (None, size)):
                raise NpuArgumentError(
                    f"prelu: weight has {size} values but x {x.shape} has no channel dimension 1 of "
                    f"that size (weight must have 1 value or one per channel)"
                )
            weight = tf.reshape(weight, [1, -1] + [1] * (x.shape.rank - 2))
        return tf.where(x > 0, x, weight * x)
