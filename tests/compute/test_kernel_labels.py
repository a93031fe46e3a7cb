"""Kernel labels real scripts select: ``_kernel_label_map({"Unique": "parallel"})`` around ``tf.unique``."""

import numpy as np
import pytest
import tensorflow as tf
from helpers.config import npu_config

v1 = tf.compat.v1


@pytest.mark.parametrize("dtype", [tf.int32, tf.int64])
@pytest.mark.parametrize("out_idx", [tf.int32, tf.int64])
def test_unique_under_the_parallel_label_runs_as_tensorflow_unique(dtype, out_idx):
    values = np.array([7, 3, 7, -2, 3, 9, 7, 0], dtype.as_numpy_dtype)
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(dtype, [None])
        with graph._kernel_label_map({"Unique": "parallel"}):
            labelled = tf.unique(x, out_idx=out_idx)
        plain = tf.unique(x, out_idx=out_idx)
    assert labelled.y.op.get_attr("_kernel") == b"parallel"
    with v1.Session(graph=graph, config=npu_config()) as sess:
        (y, idx), (plain_y, plain_idx) = sess.run([labelled, plain], {x: values})
        empty_y, empty_idx = sess.run(labelled, {x: values[:0]})
    np.testing.assert_array_equal(y, [7, 3, -2, 9, 0])
    np.testing.assert_array_equal(idx, [0, 1, 0, 2, 1, 3, 0, 4])
    np.testing.assert_array_equal(y, plain_y)
    np.testing.assert_array_equal(idx, plain_idx)
    assert idx.dtype == out_idx.as_numpy_dtype and y.dtype == dtype.as_numpy_dtype
    assert empty_y.shape == (0,) and empty_idx.shape == (0,)


def test_unique_under_the_parallel_label_rejects_a_matrix():
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.int64)
        with graph._kernel_label_map({"Unique": "parallel"}):
            y, _ = tf.unique(x)
    with v1.Session(graph=graph, config=npu_config()) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="x must be a vector"):
            sess.run(y, {x: np.zeros([2, 2], np.int64)})
