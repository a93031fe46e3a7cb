"""``tensorflow.python.ops.gradients_impl._AggregateIndexedSlicesGradients`` of TensorFlow 1.x up to 1.14 (1.15 has
it as ``eager.backprop.aggregate_indexed_slices_gradients``, which TensorFlow 2.21 dropped too), which multi-tower
training scripts (tf_cnn_benchmarks' ``allreduce.py``) call to sum a variable's sparse gradients over towers;
``aliases`` adds this one back.
"""

import tensorflow as tf
from tensorflow.python.ops import math_ops

__all__ = ["_AggregateIndexedSlicesGradients"]


def _AggregateIndexedSlicesGradients(grads):  # noqa: N802 - TensorFlow 1.x's name
    """Sums gradients by concatenating them as ``IndexedSlices`` (a row that appears twice is summed when the
    result is applied or made dense).

    Args:
      grads: list of ``IndexedSlices``, tensors or None (skipped) of one variable.

    Returns:
      None for an empty list; the only entry of a one-entry list, as it is; otherwise ``IndexedSlices`` whose
      values and indices are those of every entry (a tensor counts as all its rows), in order, with the first
      entry's ``dense_shape``.
    """
    if not grads:
        return None
    if len(grads) == 1:
        return grads[0]
    slices = math_ops._as_indexed_slices_list([g for g in grads if g is not None])
    slices = [_flat(s) for s in slices]
    return tf.IndexedSlices(
        tf.concat([s.values for s in slices], axis=0),
        tf.concat([s.indices for s in slices], axis=0),
        slices[0].dense_shape,
    )


def _flat(value):
    """IndexedSlices whose values are IndexedSlices (a gradient of a gather of a gather) as one level."""
    if not isinstance(value.values, tf.IndexedSlices):
        return value
    inner = _flat(value.values)
    return tf.IndexedSlices(inner.values, tf.gather(value.indices, inner.indices), value.dense_shape)
