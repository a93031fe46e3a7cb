"""NPU indexing ops: ScatterElements (ONNX semantics), NonZero and KMeansCentroids."""

import tensorflow as tf

from npu_bridge.core.compute.tensors import as_dtype
from npu_bridge.core.runtime.errors import NpuArgumentError


def scatter_elements(data, indices, updates, axis=0, name=None):
    """ScatterElements: a copy of ``data`` where ``out[... indices[p] ...] = updates[p]`` along ``axis``.

    For every position p of ``indices`` (same rank as ``data``), the element of ``data`` at p with its
    ``axis`` coordinate replaced by ``indices[p]`` (negative counts from the end) is replaced by
    ``updates[p]``. Differentiable in ``data`` and ``updates``.

    Args:
      data: tensor of rank r.
      indices: int32 / int64 tensor of rank r, shaped like ``updates``.
      updates: tensor of data's dtype.
      axis: the scattered dimension (negative counts from the end).
    Raises:
      ValueError: ranks differ, shapes of indices and updates differ, indices are not integers, or axis is
        out of range.
    """
    with tf.name_scope(name or "ScatterElements"):
        data = tf.convert_to_tensor(data)
        indices = tf.convert_to_tensor(indices)
        updates = tf.convert_to_tensor(updates, dtype=data.dtype)
        if indices.dtype not in (tf.int32, tf.int64):
            raise NpuArgumentError(f"scatter_elements: indices must be int32 or int64, got {indices.dtype.name}")
        rank = data.shape.rank
        if rank is None or indices.shape.rank != rank:
            raise NpuArgumentError(f"scatter_elements: indices {indices.shape} must have the rank of data {data.shape}")
        if not indices.shape.is_compatible_with(updates.shape):
            raise NpuArgumentError(
                f"scatter_elements: indices {indices.shape} and updates {updates.shape} must have the same shape"
            )
        if not -rank <= axis < rank:
            raise NpuArgumentError(f"scatter_elements: axis {axis} is out of range for rank {rank}")
        axis %= rank
        indices = tf.cast(indices, tf.int64)
        dim = tf.shape(data, out_type=tf.int64)[axis]
        indices = tf.where(indices < 0, indices + dim, indices)
        grids = tf.meshgrid(
            *[tf.range(n) for n in tf.unstack(tf.shape(indices, out_type=tf.int64), num=rank)], indexing="ij"
        )
        grids[axis] = indices
        return tf.tensor_scatter_nd_update(data, tf.stack(grids, axis=-1), updates)


def nonzero(x, transpose=False, output_type=tf.int64, name=None):
    """NonZero: coordinates of the non-zero elements of ``x``.

    Args:
      x: tensor.
      transpose: False -> [count, rank]; True -> [rank, count].
      output_type: tf.int32 or tf.int64.
    Raises:
      ValueError: output_type is not int32 / int64.
    """
    output_type = tf.as_dtype(output_type)
    if output_type not in (tf.int32, tf.int64):
        raise NpuArgumentError(f"nonzero: output_type must be tf.int32 or tf.int64, got {output_type.name}")
    with tf.name_scope(name or "NonZero"):
        x = tf.convert_to_tensor(x)
        coordinates = tf.cast(tf.where(tf.not_equal(x, tf.zeros([], x.dtype))), output_type)
        return tf.transpose(coordinates) if transpose else coordinates


def k_means_centroids(x, y, sum_square_y, sum_square_x=None, use_actual_distance=False, name=None):
    """KMeansCentroids: one k-means assignment step.

    Each sample of ``x`` [n, d] goes to its nearest centroid of ``y`` [k, d] (squared L2 distance, computed as
    ||x||^2 - 2 x.y + ||y||^2 from the given squared norms).

    Args:
      x: [n, d] samples; y: [k, d] centroids.
      sum_square_y: [1, k] squared norms of the centroids.
      sum_square_x: [n, 1] squared norms of the samples (needed with use_actual_distance).
      use_actual_distance: include ||x||^2 in the total distance (it does not change the assignment).
    Returns:
      (segment_sum [k, d]: sum of the samples of each centroid, segment_count [k, 1]: their number,
      kmean_total_sum [1]: the sum of the samples' distances to their centroid).
    Raises:
      ValueError: use_actual_distance without sum_square_x.
    """
    if use_actual_distance and sum_square_x is None:
        raise NpuArgumentError("k_means_centroids: use_actual_distance=True needs sum_square_x")
    with tf.name_scope(name or "KMeansCentroids"):
        x = tf.convert_to_tensor(x)
        y = tf.convert_to_tensor(y, dtype=x.dtype)
        distance = tf.reshape(as_dtype(sum_square_y, x.dtype), [1, -1]) - 2.0 * tf.matmul(x, y, transpose_b=True)
        if use_actual_distance:
            distance += tf.reshape(as_dtype(sum_square_x, x.dtype), [-1, 1])
        nearest = tf.argmin(distance, axis=1, output_type=tf.int32)
        k = tf.shape(y)[0]
        segment_sum = tf.math.unsorted_segment_sum(x, nearest, k)
        segment_count = tf.math.unsorted_segment_sum(tf.ones_like(x[:, :1]), nearest, k)
        total = tf.reshape(tf.reduce_sum(tf.reduce_min(distance, axis=1)), [1])
        return segment_sum, segment_count, total
