"""Names of TensorFlow 1.15's ``tf.contrib.data`` that TensorFlow 2.21's ``tf.data`` no longer has.

Each returns a transformation for ``dataset.apply``, as in 1.15, written on today's ``Dataset`` methods:
``batch_and_drop_remainder(batch_size)`` is ``batch(batch_size, drop_remainder=True)``,
``padded_batch_and_drop_remainder(batch_size, padded_shapes, padding_values)`` is ``padded_batch(...,
drop_remainder=True)`` and ``sloppy_interleave(map_func, cycle_length, block_length)`` is
``tf.data.experimental.parallel_interleave(..., sloppy=True)``.
"""

import tensorflow as tf

__all__ = ["batch_and_drop_remainder", "padded_batch_and_drop_remainder", "sloppy_interleave"]


def batch_and_drop_remainder(batch_size):
    """Batches consecutive elements and drops a final batch smaller than ``batch_size``.

    Args:
      batch_size: int64 scalar, the number of elements in a batch.
    Returns:
      A function from a ``Dataset`` to a ``Dataset``, for ``Dataset.apply``.
    """

    def apply(dataset):
        return dataset.batch(batch_size, drop_remainder=True)

    return apply


def padded_batch_and_drop_remainder(batch_size, padded_shapes, padding_values=None):
    """Pads and batches consecutive elements and drops a final batch smaller than ``batch_size``.

    Args:
      batch_size: int64 scalar, the number of elements in a batch.
      padded_shapes: the shape each component is padded to, as for ``Dataset.padded_batch``.
      padding_values: the padding value of each component (default: 0, or "" for strings).
    Returns:
      A function from a ``Dataset`` to a ``Dataset``, for ``Dataset.apply``.
    """

    def apply(dataset):
        return dataset.padded_batch(
            batch_size, padded_shapes=padded_shapes, padding_values=padding_values, drop_remainder=True
        )

    return apply


def sloppy_interleave(map_func, cycle_length, block_length=1):
    """Interleaves the datasets ``map_func`` makes of the elements, taking whichever input has an element ready.

    Args:
      map_func: element -> ``Dataset``.
      cycle_length: how many input elements are interleaved at a time.
      block_length: consecutive elements taken from one dataset before moving on.
    Returns:
      A function from a ``Dataset`` to a ``Dataset``, for ``Dataset.apply``.
    """
    return tf.data.experimental.parallel_interleave(map_func, cycle_length, block_length, sloppy=True)
