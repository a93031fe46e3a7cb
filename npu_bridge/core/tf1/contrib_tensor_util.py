"""``tf.contrib.framework``'s ``tensor_util`` module of TensorFlow 1.15 for the TF1 mode
(``tensorflow.contrib.framework.python.framework.tensor_util``): shape assertions and small tensor helpers.

``with_shape`` / ``with_same_shape`` check a shape statically when both shapes are known (a mismatch is a
``ValueError`` at graph construction) and otherwise add an assertion that runs with the returned tensor; -1 in an
expected shape matches any size. ``is_tensor``, ``assert_same_float_dtype``, ``assert_scalar`` and
``convert_to_tensor_or_sparse_tensor`` are TensorFlow's, as 1.15 re-exported them.
"""

import numpy as np
import tensorflow as tf
from tensorflow.python.framework import tensor_util
from tensorflow.python.ops import check_ops

from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError

__all__ = [
    "assert_same_float_dtype",
    "assert_scalar",
    "assert_scalar_int",
    "convert_to_tensor_or_sparse_tensor",
    "is_tensor",
    "reduce_sum_n",
    "remove_squeezable_dimensions",
    "with_same_shape",
    "with_shape",
]

is_tensor = tensor_util.is_tensor
assert_same_float_dtype = check_ops.assert_same_float_dtype
assert_scalar = check_ops.assert_scalar
convert_to_tensor_or_sparse_tensor = tf.compat.v1.convert_to_tensor_or_sparse_tensor


def with_shape(expected_shape, tensor):
    """``tensor``, checked to have ``expected_shape``.

    Args:
      expected_shape: 1-D int list, NumPy array, int32 tensor or ``TensorShape``; -1 (``None`` in a
        ``TensorShape``) matches any size.
      tensor: the tensor to check (not a ``SparseTensor``).

    Returns:
      ``tensor`` itself when both shapes are known and match; a scalar reshape of it when ``expected_shape`` is
      empty and ``tensor`` has one element; otherwise ``tensor`` behind an assertion of its shape, with
      ``expected_shape`` set as its static shape when that is a list.

    Raises:
      NpuArgumentTypeError: ``tensor`` is a ``SparseTensor``.
      NpuArgumentError: an expected shape that is not 1-D int32 / int, or known shapes that differ.
    """
    if isinstance(tensor, tf.SparseTensor):
        raise NpuArgumentTypeError("with_shape's tensor must be a dense Tensor, got a SparseTensor")
    if isinstance(expected_shape, tf.TensorShape):  # a partly known shape: its unknown sizes match any size
        expected_shape = [-1 if d is None else d for d in expected_shape.as_list()]
    dynamic = is_tensor(expected_shape)
    if dynamic and expected_shape.dtype.base_dtype != tf.int32:
        raise NpuArgumentError(
            f"Invalid dtype {expected_shape.dtype.name} for expected_shape of {tensor.name}: it must be int32 "
            f"({expected_shape})"
        )
    if not dynamic:
        expected_shape = np.asarray(list(expected_shape) if isinstance(expected_shape, tuple) else expected_shape)
        if expected_shape.size == 0:
            expected_shape = expected_shape.astype(np.int32)
        if expected_shape.ndim > 1:
            raise NpuArgumentError(
                f"Invalid rank for expected_shape of {tensor.name}: it must be 1-D, got rank {expected_shape.ndim}: "
                f"{expected_shape}"
            )
        if not np.issubdtype(expected_shape.dtype, np.integer):
            raise NpuArgumentError(
                f"Invalid dtype {expected_shape.dtype} for expected_shape of {tensor.name}: it must hold ints: "
                f"{expected_shape}"
            )
        expected_shape = expected_shape.astype(np.int32)
    actual = tensor.get_shape()
    if not actual.is_fully_defined() or dynamic:
        with tf.compat.v1.name_scope(f"{tensor.op.name}/"):
            if not dynamic and expected_shape.size == 0:
                return tf.reshape(tensor, [])
            with tf.control_dependencies([_assert_shape(expected_shape, tensor)]):
                result = tf.identity(tensor)
            if not dynamic:
                result.set_shape([None if d == -1 else int(d) for d in expected_shape])
            return result
    static = [None if d == -1 else int(d) for d in expected_shape]
    if not actual.is_compatible_with(static):
        if not static and actual.is_compatible_with([1]):
            with tf.compat.v1.name_scope(f"{tensor.op.name}/"):
                return tf.reshape(tensor, [])
        raise NpuArgumentError(f"tensor {tensor.name} must have shape {static}, got {actual.as_list()}")
    return tensor


def with_same_shape(expected_tensor, tensor):
    """``tensor``, checked to have the shape of ``expected_tensor`` (``with_shape`` with its shape: the static one
    when fully known, else ``tf.shape(expected_tensor)``).

    Args:
      expected_tensor: the tensor whose shape is expected.
      tensor: the tensor to check.

    Returns:
      ``tensor``, perhaps behind an assertion.

    Raises:
      NpuArgumentError: known shapes that differ.
    """
    with tf.compat.v1.name_scope(f"{tensor.op.name}/", values=[expected_tensor, tensor]):
        shape = expected_tensor.get_shape()
        expected = shape.as_list() if shape.is_fully_defined() else tf.shape(expected_tensor, name="expected_shape")
        return with_shape(expected, tensor)


def assert_scalar_int(tensor, name=None):
    """``tensor``, asserted to be a 0-D integer tensor.

    Raises:
      NpuArgumentError: ``tensor`` is not of an integer dtype.
      ValueError: its static rank is not 0 (``tf.debugging.assert_scalar``).
    """
    with tf.compat.v1.name_scope(name, "assert_scalar_int", [tensor]) as scope:
        tensor = tf.convert_to_tensor(tensor)
        if not tensor.dtype.base_dtype.is_integer:
            raise NpuArgumentError(f"Expected integer type for {tensor.name}, got {tensor.dtype.name}")
        return check_ops.assert_scalar(tensor, name=scope)


def reduce_sum_n(tensors, name=None):
    """The sum of the elements of every tensor of the list, a scalar.

    Raises:
      NpuArgumentError: ``tensors`` is empty.
    """
    if not tensors:
        raise NpuArgumentError("reduce_sum_n needs at least one tensor, got none")
    with tf.compat.v1.name_scope(name, "reduce_sum_n", tensors) as scope:
        sums = [tf.reduce_sum(t, name=f"reduce_{i}") for i, t in enumerate(tensors)]
        if len(sums) == 1:
            return sums[0]
        return tf.add_n(sums, name=scope)


def remove_squeezable_dimensions(predictions, labels, name=None):
    """``(predictions, labels)`` with the last dimension of size 1 squeezed from the one whose rank is one more than
    the other's (decided statically when both ranks are known, else at run time).
    """
    with tf.compat.v1.name_scope(name, "remove_squeezable_dimensions", [predictions, labels]):
        predictions = tf.convert_to_tensor(predictions)
        labels = tf.convert_to_tensor(labels)
        p_rank, l_rank = predictions.shape.rank, labels.shape.rank
        if p_rank is not None and l_rank is not None:
            if p_rank - l_rank == -1:
                labels = tf.squeeze(labels, [-1])
            elif p_rank - l_rank == 1:
                predictions = tf.squeeze(predictions, [-1])
            return predictions, labels
        difference = tf.rank(predictions) - tf.rank(labels)
        if predictions.shape.rank is None or predictions.shape[-1] in (None, 1):
            predictions = tf.cond(tf.equal(difference, 1), lambda: tf.squeeze(predictions, [-1]), lambda: predictions)
        if labels.shape.rank is None or labels.shape[-1] in (None, 1):
            labels = tf.cond(tf.equal(difference, -1), lambda: tf.squeeze(labels, [-1]), lambda: labels)
        return predictions, labels


def _assert_shape(expected_shape, tensor):
    with tf.compat.v1.name_scope("assert_shape") as scope:
        actual = tf.shape(tensor, name="actual")
        expected = tf.convert_to_tensor(expected_shape, dtype=tf.int32, name="expected")
        same_rank = tf.equal(tf.size(expected), tf.rank(tensor))

        def sizes_match():
            return tf.reduce_all(tf.logical_or(tf.equal(expected, -1), tf.equal(expected, actual)))

        matches = tf.cond(same_rank, sizes_match, lambda: tf.constant(False))
        return tf.debugging.Assert(
            matches, [f"Wrong shape for {tensor.name} [expected] [actual].", expected, actual], name=scope
        )
