"""``tf.contrib.image``'s ``distort_image_ops`` of TensorFlow 1.15: hue, saturation and value changes in YIQ space.

TensorFlow 1.15 did this in a kernel of its own (``AdjustHsvInYiq``); here it is the same linear map on TensorFlow's
ops: an RGB pixel ``p`` becomes ``T @ p`` with ``T = YIQ^-1 @ H @ YIQ``, where ``YIQ`` is the RGB -> YIQ projection
TensorFlow 1.15 used and ``H`` scales Y by ``scale_value`` and rotates (I, Q) by ``delta_hue`` radians, scaled by
``scale_value * scale_saturation``.
"""

import numbers

import numpy as np
import tensorflow as tf

from npu_bridge.core.runtime.errors import NpuArgumentError

_v1 = tf.compat.v1

# RGB -> YIQ and back, the numbers of TensorFlow 1.15's kernel
RGB_TO_YIQ = np.array([[0.299, 0.587, 0.114], [0.596, -0.274, -0.322], [0.211, -0.523, 0.312]], np.float32)
YIQ_TO_RGB = np.array(
    [[1, 0.95617069, 0.62143257], [1, -0.2726886, -0.64681324], [1, -1.103744, 1.70062309]], np.float32
)

__all__ = ["adjust_hsv_in_yiq", "random_hsv_in_yiq"]


def adjust_hsv_in_yiq(image, delta_hue=0, scale_saturation=1, scale_value=1, name=None):
    """Rotates the hue, scales the saturation and the value of RGB images in YIQ space.

    Args:
      image: RGB images, rank >= 3 with a last dimension of 3 (``[H, W, 3]``, ``[N, H, W, 3]``).
      delta_hue: the rotation of (I, Q) around Y, in radians (a float or a scalar tensor).
      scale_saturation: the factor of the chrominance (I, Q).
      scale_value: the factor of every channel (Y, I, Q).
      name: a name scope.
    Returns:
      The images, of the shape and dtype of ``image`` (computed in float32, converted back as
      ``tf.image.convert_image_dtype`` does).
    Raises:
      NpuArgumentError: ``image`` has a known rank below 3 or a last dimension other than 3.
    """
    with _v1.name_scope(name, "adjust_hsv_in_yiq", [image]):
        image = tf.convert_to_tensor(image, name="image")
        shape = image.shape
        if shape.rank is not None and (shape.rank < 3 or shape[-1] not in (None, 3)):
            # the leading phrases are TensorFlow 1.15's (its op's shape function and kernel)
            problem = (
                "Shape must be at least rank 3"
                if shape.rank < 3
                else f"input must have 3 channels but instead has {shape[-1]} channels"
            )
            raise NpuArgumentError(
                f"adjust_hsv_in_yiq: {problem}: image must have rank >= 3 and 3 channels last (RGB), given shape "
                f"{shape}"
            )
        original_dtype = image.dtype
        pixels = tf.image.convert_image_dtype(image, tf.float32)
        transform = _transform(delta_hue, scale_saturation, scale_value)
        flat = tf.reshape(pixels, [-1, 3])
        altered = tf.reshape(tf.matmul(flat, transform, transpose_b=True), tf.shape(pixels))
        altered.set_shape(pixels.shape)
        return tf.image.convert_image_dtype(altered, original_dtype)


def random_hsv_in_yiq(
    image, max_delta_hue=0, lower_saturation=1, upper_saturation=1, lower_value=1, upper_value=1, seed=None
):
    """``adjust_hsv_in_yiq`` with a hue delta drawn from ``[-max_delta_hue, max_delta_hue]``, a saturation factor
    from ``[lower_saturation, upper_saturation]`` and a value factor from ``[lower_value, upper_value]`` (a
    bound pair that is equal, or a zero ``max_delta_hue``, draws nothing).

    Args:
      image: RGB images (as ``adjust_hsv_in_yiq``).
      max_delta_hue, lower_saturation, upper_saturation, lower_value, upper_value: floats, all >= 0, each lower
        bound at most its upper one.
      seed: an operation seed.
    Returns:
      The images, of the shape and dtype of ``image``.
    Raises:
      NpuArgumentError: a bound is negative or a lower bound exceeds its upper one.
    """
    bounds = {
        "max_delta_hue": max_delta_hue,
        "lower_saturation": lower_saturation,
        "upper_saturation": upper_saturation,
        "lower_value": lower_value,
        "upper_value": upper_value,
    }
    for argument, value in bounds.items():
        if not isinstance(value, numbers.Real) or value < 0:
            raise NpuArgumentError(f"random_hsv_in_yiq: {argument} must be a number >= 0, given {value!r}")
    for lower, upper in (("lower_saturation", "upper_saturation"), ("lower_value", "upper_value")):
        if bounds[lower] > bounds[upper]:
            raise NpuArgumentError(
                f"random_hsv_in_yiq: {lower} ({bounds[lower]}) must be at most {upper} ({bounds[upper]})"
            )
    delta_hue = _uniform(-max_delta_hue, max_delta_hue, seed) if max_delta_hue else 0
    scale_saturation = _uniform(lower_saturation, upper_saturation, seed)
    scale_value = _uniform(lower_value, upper_value, seed)
    return adjust_hsv_in_yiq(image, delta_hue, scale_saturation, scale_value)


def _uniform(low, high, seed):
    return low if low == high else _v1.random_uniform([], low, high, seed=seed)


def _transform(delta_hue, scale_saturation, scale_value):
    """``YIQ^-1 @ H @ YIQ`` as a float32 tensor (the arguments may be tensors)."""
    hue = tf.cast(delta_hue, tf.float32)
    saturation = tf.cast(scale_saturation, tf.float32)
    value = tf.cast(scale_value, tf.float32)
    vsu = value * saturation * tf.cos(hue)
    vsw = value * saturation * tf.sin(hue)
    zero = tf.zeros([], tf.float32)
    hsv = tf.stack([tf.stack([value, zero, zero]), tf.stack([zero, vsu, -vsw]), tf.stack([zero, vsw, vsu])])
    return tf.matmul(tf.matmul(YIQ_TO_RGB, hsv), RGB_TO_YIQ)
