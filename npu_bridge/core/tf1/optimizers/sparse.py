"""Helpers for sparse gradients (the rows ``tf.gather`` gives an ``IndexedSlices`` for)."""

import tensorflow as tf


def dense_gradient(values, indices, var):
    """The full gradient of ``var`` from its rows: rows absent are zero, duplicate indices are summed.

    Args:
      values: the gradient rows, shape ``[n] + var.shape[1:]``.
      indices: the row of ``var`` each of ``values`` belongs to, shape ``[n]``.
      var: the variable the gradient is for.

    Returns:
      A tensor shaped like ``var``.
    """
    rows = tf.shape(var, out_type=indices.dtype)[0]
    return tf.math.unsorted_segment_sum(values, indices, rows)


def decay_rows(var, indices, factor, use_locking):
    """``var[i] -= factor * var[i]`` once for every distinct ``i`` of ``indices``.

    Args:
      var: a ref or resource variable.
      indices: the rows to change (duplicates are allowed and change a row once).
      factor: a scalar tensor of ``var``'s dtype.
      use_locking: passed to the scatter op.

    Returns:
      The scatter op.
    """
    rows, _ = tf.unique(indices)
    return tf.compat.v1.scatter_sub(var, rows, factor * tf.gather(var, rows), use_locking=use_locking)
