"""``tf.contrib.image.bipartite_match``: greedy matching of the rows and columns of a distance matrix.

TensorFlow 1.15 had a C++ op for it; here the greedy loop runs in NumPy inside the graph (``tf.numpy_function``):
take the smallest distance whose row and column are both still free, match them, repeat (until ``top_k`` matches
when it is positive). Equal distances go to the lower row, then the lower column.
"""

import numbers

import numpy as np
import tensorflow as tf

from npu_bridge.core.runtime.errors import NpuArgumentError


def _greedy(distances, num_valid_rows, top_k):
    rows, columns = distances.shape
    wanted = float(np.reshape(num_valid_rows, [-1])[0])
    valid = rows if wanted < 0 else int(wanted + 0.1)
    if valid > rows:
        raise NpuArgumentError(
            f"bipartite_match: num_valid_rows is {valid}, but distance_mat has only {rows} rows; it must be at most "
            f"{rows} (or negative: all rows)"
        )
    limit = top_k if top_k > 0 else valid * columns
    row_match = np.full(rows, -1, np.int32)
    column_match = np.full(columns, -1, np.int32)
    # row-major order, then a stable sort by distance: ties keep the lower row, then the lower column
    order = np.argsort(distances[:valid].reshape(-1), kind="stable")
    matched = 0
    for flat in order:
        row, column = divmod(int(flat), columns)
        if row_match[row] == -1 and column_match[column] == -1:
            row_match[row], column_match[column] = column, row
            matched += 1
            if matched >= limit:
                break
    return row_match, column_match


def bipartite_match(distance_mat, num_valid_rows, top_k=-1, name="bipartite_match"):
    """Greedy bipartite matching: the pairs (row, column) of smallest distance, each row and column used once.

    Args:
      distance_mat: [num_rows, num_columns] float32 distances (smaller: more alike).
      num_valid_rows: a scalar or one-element float tensor: only the first ``num_valid_rows`` rows take part
        (negative: all of them).
      top_k: the number of matches to make (0 or negative: as many as there can be).
      name: the name of the op.

    Returns:
      (row_to_col_match_indices [num_rows], col_to_row_match_indices [num_columns]), int32: the column matched to
      each row and the row matched to each column, -1 where there is none.

    Raises:
      NpuArgumentError: ``distance_mat`` is not a matrix, ``num_valid_rows`` holds more than one value or, as a
        number, exceeds the rows (when it is a tensor, the op raises that when it runs), or ``top_k`` is not an int.
    """
    if isinstance(top_k, bool) or not isinstance(top_k, numbers.Integral):
        raise NpuArgumentError(f"bipartite_match: top_k must be an int (<= 0: no limit), got {top_k!r}")
    with tf.name_scope(name):
        distances = tf.convert_to_tensor(distance_mat, tf.float32, name="distance_mat")
        if distances.shape.rank not in (None, 2):
            raise NpuArgumentError(
                f"bipartite_match: distance_mat has shape {distances.shape}; it must be [num_rows, num_columns]"
            )
        valid = tf.convert_to_tensor(num_valid_rows, tf.float32, name="num_valid_rows")
        if valid.shape.num_elements() not in (None, 1):
            raise NpuArgumentError(
                f"bipartite_match: num_valid_rows has shape {valid.shape}; it must hold one value (a scalar or [1])"
            )
        rows = distances.shape[0]
        if isinstance(num_valid_rows, numbers.Real) and rows is not None and int(num_valid_rows + 0.1) > rows >= 0:
            raise NpuArgumentError(
                f"bipartite_match: num_valid_rows is {num_valid_rows}, but distance_mat has only {rows} rows; it must "
                f"be at most {rows} (or negative: all rows)"
            )
        row_match, column_match = tf.numpy_function(
            lambda d, n: _greedy(d, n, int(top_k)), [distances, valid], [tf.int32, tf.int32], stateful=False
        )
        row_match.set_shape(distances.shape[:1])
        column_match.set_shape(distances.shape[1:2])
        return row_match, column_match
