"""Conversion of op arguments that may be Python numbers or tensors."""

import tensorflow as tf


def as_dtype(value, dtype):
    """Returns ``value`` as a tensor of ``dtype``: tensors are cast, numbers and arrays converted exactly.

    (``tf.cast`` of a Python float goes through float32 first, which loses float64 precision.)
    """
    if tf.is_tensor(value) or isinstance(value, tf.Variable):
        return tf.cast(value, dtype)
    return tf.constant(value, dtype=dtype)
