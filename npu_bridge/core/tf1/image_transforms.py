"""``tf.contrib.image``'s projective transforms (TensorFlow 1.15 signatures) on TensorFlow 2.21, for the TF1 mode.

A transform is a vector [a0, ..., a7] that maps an OUTPUT point (x, y) to the INPUT point
((a0 x + a1 y + a2) / k, (a3 x + a4 y + a5) / k), k = a6 x + a7 y + 1; output points whose input point lies outside
the image are 0. TensorFlow's ``ImageProjectiveTransformV3`` op (constant fill, fill value 0) does the work.
"""

import types

import tensorflow as tf

from npu_bridge.core.runtime.errors import NotProvidedError, NpuArgumentError, NpuArgumentTypeError
from npu_bridge.core.tf1.matching import bipartite_match

__all__ = [
    "angles_to_projective_transforms",
    "bipartite_match",
    "compose_transforms",
    "flat_transforms_to_matrices",
    "matrices_to_flat_transforms",
    "rotate",
    "transform",
    "translate",
    "translations_to_projective_transforms",
]

_INTERPOLATIONS = ("NEAREST", "BILINEAR")
_IMAGE_DTYPES = (tf.uint8, tf.int32, tf.int64, tf.float16, tf.bfloat16, tf.float32, tf.float64)


def transform(images, transforms, interpolation="NEAREST", output_shape=None, name=None):
    """Applies projective transforms to images.

    Args:
      images: [height, width], [height, width, channels] or [batch, height, width, channels].
      transforms: [8] (one transform for all images) or [batch, 8]: output point -> input point (module docstring).
      interpolation: "NEAREST" or "BILINEAR" (any case, as TensorFlow 1.15 upper-cased it).
      output_shape: [new_height, new_width] (default: the images' height and width).
      name: name scope of the ops.

    Returns:
      The transformed images: the rank and dtype of ``images``.

    Raises:
      NpuArgumentError: bad ``interpolation``, ``transforms`` not 8 wide, ``output_shape`` not 2 values.
      NpuArgumentTypeError: ``images`` of another rank or dtype, ``transforms`` not of rank 1 or 2.
    """
    mode = _interpolation(interpolation)
    with tf.compat.v1.name_scope(name, "transform", [images, transforms]):
        images = tf.convert_to_tensor(images, name="images")
        batch, restore = _as_batch(images)
        transforms = _as_rows(transforms, "transforms", 8)
        if output_shape is None:
            output_shape = tf.shape(batch)[1:3]
        else:
            output_shape = _output_shape(output_shape)
        return restore(image_projective_transform_v2(batch, transforms, output_shape, mode))


def rotate(images, angles, interpolation="NEAREST", name=None):
    """Rotates images counter-clockwise about their centre.

    Args:
      images: [height, width], [height, width, channels] or [batch, height, width, channels].
      angles: radians; a scalar for all images or one per image ([batch]).
      interpolation: "NEAREST" or "BILINEAR".
      name: name scope of the ops.

    Returns:
      The rotated images (rank and dtype of ``images``); corners the rotation uncovers are 0.

    Raises:
      NpuArgumentError: bad ``interpolation``.
      NpuArgumentTypeError: ``images`` of another rank or dtype, ``angles`` not of rank 0 or 1.
    """
    _interpolation(interpolation)
    with tf.compat.v1.name_scope(name, "rotate", [images, angles]):
        images = tf.convert_to_tensor(images, name="images")
        batch, restore = _as_batch(images)
        shape = tf.cast(tf.shape(batch), tf.float32)
        transforms = angles_to_projective_transforms(angles, shape[1], shape[2])
        return restore(transform(batch, transforms, interpolation))


def translate(images, translations, interpolation="NEAREST", name=None):
    """Moves images by [dx, dy] pixels (positive: right and down).

    Args:
      images: [height, width], [height, width, channels] or [batch, height, width, channels].
      translations: [dx, dy] for all images, or [batch, 2].
      interpolation: "NEAREST" or "BILINEAR".
      name: name scope of the ops.

    Returns:
      The translated images (rank and dtype of ``images``).

    Raises:
      NpuArgumentError: bad ``interpolation``, ``translations`` not 2 wide.
      NpuArgumentTypeError: ``images`` of another rank or dtype, ``translations`` not of rank 1 or 2.
    """
    _interpolation(interpolation)
    with tf.compat.v1.name_scope(name, "translate", [images, translations]):
        return transform(images, translations_to_projective_transforms(translations), interpolation)


def angles_to_projective_transforms(angles, image_height, image_width, name=None):
    """The transforms that rotate images of the given size counter-clockwise by ``angles`` about their centre.

    Args:
      angles: radians, a scalar or [n].
      image_height: the images' height (number or scalar tensor).
      image_width: the images' width.
      name: name scope of the ops.

    Returns:
      float32 [n, 8] (n = 1 for a scalar angle).

    Raises:
      NpuArgumentTypeError: ``angles`` is not of rank 0 or 1, or not numeric.
    """
    with tf.compat.v1.name_scope(name, "angles_to_projective_transforms", [angles]):
        angles = _float32(angles, "angles")
        if angles.shape.rank not in (0, 1):
            raise NpuArgumentTypeError(f"angles must have rank 0 or 1, got shape {angles.shape}")
        angles = tf.reshape(angles, [-1])
        height = tf.cast(image_height, tf.float32)
        width = tf.cast(image_width, tf.float32)
        cos, sin = tf.cos(angles), tf.sin(angles)
        # input = R (output - centre) + centre, centre = ((width - 1) / 2, (height - 1) / 2)
        x_offset = ((width - 1) - (cos * (width - 1) - sin * (height - 1))) / 2
        y_offset = ((height - 1) - (sin * (width - 1) + cos * (height - 1))) / 2
        zeros = tf.zeros_like(angles)
        return tf.stack([cos, -sin, x_offset, sin, cos, y_offset, zeros, zeros], axis=1)


def translations_to_projective_transforms(translations, name=None):
    """The transforms that move images by [dx, dy].

    Args:
      translations: [2] or [n, 2].
      name: name scope of the ops.

    Returns:
      float32 [n, 8] (n = 1 for one translation).

    Raises:
      NpuArgumentError: ``translations`` is not 2 wide.
      NpuArgumentTypeError: ``translations`` is not of rank 1 or 2, or not numeric.
    """
    with tf.compat.v1.name_scope(name, "translations_to_projective_transforms", [translations]):
        translations = _as_rows(translations, "translations", 2)
        dx, dy = translations[:, 0], translations[:, 1]
        ones, zeros = tf.ones_like(dx), tf.zeros_like(dx)
        return tf.stack([ones, zeros, -dx, zeros, ones, -dy, zeros, zeros], axis=1)


def compose_transforms(*transforms):
    """One transform equal to applying ``transforms`` one after another.

    Args:
      *transforms: transforms of the same shape, [8] or [n, 8] each; at least one.

    Returns:
      float32 [n, 8].

    Raises:
      NpuArgumentError: no transform given.
    """
    if not transforms:
        raise NpuArgumentError("compose_transforms needs at least one transform, got none")
    with tf.compat.v1.name_scope("compose_transforms"):
        composed = flat_transforms_to_matrices(transforms[0])
        for following in transforms[1:]:
            # output -> input maps chain from the right: applying A then B samples the input at A(B(p))
            composed = tf.matmul(composed, flat_transforms_to_matrices(following))
        return matrices_to_flat_transforms(composed)


def flat_transforms_to_matrices(transforms):
    """3x3 matrices of transforms (a8 = 1).

    Args:
      transforms: [8] or [n, 8].

    Returns:
      float32 [n, 3, 3].

    Raises:
      NpuArgumentError: ``transforms`` is not of rank 1 or 2.
    """
    transforms = _float32(transforms, "transforms")
    if transforms.shape.rank not in (1, 2):
        raise NpuArgumentError(f"transforms must have rank 1 or 2, got shape {transforms.shape}")
    rows = tf.reshape(transforms, [-1, 8])
    return tf.reshape(tf.concat([rows, tf.ones_like(rows[:, :1])], axis=1), [-1, 3, 3])


def matrices_to_flat_transforms(transform_matrices):
    """Transforms of 3x3 matrices, each divided by its bottom-right element.

    Args:
      transform_matrices: [3, 3] or [n, 3, 3].

    Returns:
      float32 [n, 8].

    Raises:
      NpuArgumentError: ``transform_matrices`` is not of rank 2 or 3.
    """
    matrices = _float32(transform_matrices, "transform_matrices")
    if matrices.shape.rank not in (2, 3):
        raise NpuArgumentError(f"transform_matrices must have rank 2 or 3, got shape {matrices.shape}")
    rows = tf.reshape(matrices, [-1, 9])
    return (rows / rows[:, 8:9])[:, :8]


def image_projective_transform_v2(images, transforms, output_shape, interpolation, name=None):
    """TensorFlow 1.15's ``ImageProjectiveTransformV2`` op: ``ImageProjectiveTransformV3`` with fill value 0.

    Args:
      images: [batch, height, width, channels].
      transforms: [1, 8] or [batch, 8].
      output_shape: int32 [new_height, new_width].
      interpolation: "NEAREST" or "BILINEAR".
      name: name of the op.

    Returns:
      [batch, new_height, new_width, channels], the dtype of ``images``.
    """
    return tf.raw_ops.ImageProjectiveTransformV3(
        images=images,
        transforms=transforms,
        output_shape=output_shape,
        fill_value=tf.constant(0.0, tf.float32),
        interpolation=interpolation,
        fill_mode="CONSTANT",
        name=name,
    )


def image_projective_transform(images, transforms, interpolation, name=None):
    """TensorFlow 1.15's first ``ImageProjectiveTransform`` op: the V2 op with the output the size of the input.

    Args:
      images: [batch, height, width, channels].
      transforms: [1, 8] or [batch, 8].
      interpolation: "NEAREST" or "BILINEAR".
      name: name of the op.

    Returns:
      [batch, height, width, channels], the dtype of ``images``.
    """
    images = tf.convert_to_tensor(images, name="images")
    return image_projective_transform_v2(images, transforms, tf.shape(images)[1:3], interpolation, name=name)


# tf.contrib.image.ops.gen_image_ops (contrib's generated op module), which scripts take the ops from
gen_image_ops = types.SimpleNamespace(
    image_projective_transform=image_projective_transform, image_projective_transform_v2=image_projective_transform_v2
)
ops = types.SimpleNamespace(gen_image_ops=gen_image_ops)


def __getattr__(name):  # PEP 562: the module stands for contrib's image_ops module, so name what it lacks
    raise NotProvidedError(
        f"tf.contrib.image.{name} is not provided by npu_bridge's TF1 mode (it provides transform, rotate, "
        "translate, the transform helpers and bipartite_match); see docs/tf1_mode.md"
    )


def _interpolation(interpolation):
    if not isinstance(interpolation, str):
        raise NpuArgumentTypeError(
            f"interpolation must be a string, one of {_INTERPOLATIONS}, got {interpolation!r} "
            f"({type(interpolation).__name__})"
        )
    if interpolation.upper() not in _INTERPOLATIONS:
        raise NpuArgumentError(f"interpolation has invalid value {interpolation!r}; allowed: {_INTERPOLATIONS}")
    return interpolation.upper()


def _as_batch(images):
    """(images as [batch, height, width, channels], function giving a result the rank of ``images`` back)."""
    if images.dtype not in _IMAGE_DTYPES:
        names = ", ".join(d.name for d in _IMAGE_DTYPES)
        raise NpuArgumentTypeError(f"images has dtype {images.dtype.name}; allowed: {names}")
    rank = images.shape.rank
    if rank == 2:
        return images[None, :, :, None], lambda batch: batch[0, :, :, 0]
    if rank == 3:
        return images[None], lambda batch: batch[0]
    if rank == 4:
        return images, lambda batch: batch
    raise NpuArgumentTypeError(f"images must have rank 2 (HW), 3 (HWC) or 4 (NHWC), got shape {images.shape}")


def _as_rows(value, argument, width):
    """``value`` ([width] or [n, width]) as float32 [n, width]."""
    value = _float32(value, argument)
    if value.shape.rank not in (1, 2):
        raise NpuArgumentTypeError(f"{argument} must have rank 1 or 2, got shape {value.shape}")
    if value.shape[-1] is not None and value.shape[-1] != width:
        raise NpuArgumentError(f"{argument} must have {width} values per row, got shape {value.shape}")
    return tf.reshape(value, [-1, width])


def _output_shape(output_shape):
    output_shape = tf.convert_to_tensor(output_shape, dtype=tf.int32, name="output_shape")
    shape = output_shape.shape
    if shape.rank is not None and (shape.rank != 1 or shape[0] not in (None, 2)):
        raise NpuArgumentError(
            f"output_shape must be a 1-D tensor of 2 values [new_height, new_width], got shape {shape}"
        )
    return output_shape


def _float32(value, argument):
    value = tf.convert_to_tensor(value, name=argument)
    if not (value.dtype.is_floating or value.dtype.is_integer):
        raise NpuArgumentTypeError(f"{argument} must be numeric, got dtype {value.dtype.name}")
    return tf.cast(value, tf.float32)
