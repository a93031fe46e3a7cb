"""``npu_cpu_ops.randomchoicewithmask``: distinct true positions drawn at random, zero rows and a False mask after
them, seeded draws that repeat, unseeded ones that do not, and clear errors for bad arguments."""

import numpy as np
import pytest
import tensorflow as tf

from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError
from npu_bridge.npu_cpu import npu_cpu_ops


def _draw(x, count, **seeds):
    with tf.Graph().as_default(), tf.compat.v1.Session() as session:
        return session.run(npu_cpu_ops.randomchoicewithmask(x=x, count=count, **seeds))


def test_fewer_true_elements_than_count_gives_every_one_then_zero_rows_with_a_false_mask():
    x = np.zeros([4, 5, 2], bool)
    trues = [(0, 1, 0), (2, 3, 1), (3, 0, 1)]
    for position in trues:
        x[position] = True
    y, mask = _draw(x, 5)
    assert y.dtype == np.int32 and y.shape == (5, 3) and mask.tolist() == [True, True, True, False, False]
    assert sorted(map(tuple, y[:3].tolist())) == trues
    assert y[3:].tolist() == [[0, 0, 0], [0, 0, 0]]


def test_more_true_elements_than_count_gives_count_distinct_ones():
    x = np.random.RandomState(0).rand(50) > 0.3
    y, mask = _draw(x, 8)
    drawn = y[:, 0].tolist()
    assert mask.all() and len(set(drawn)) == 8 and all(x[i] for i in drawn)


def test_seeded_draws_repeat_and_unseeded_ones_differ():
    x = np.ones([30], bool)
    graph = tf.Graph()
    with graph.as_default():
        seeded = npu_cpu_ops.randomchoicewithmask(x, 4, seed=3, seed2=4)[0]
        unseeded = npu_cpu_ops.randomchoicewithmask(x, 4)[0]
    runs = []
    for _ in range(2):  # a new session starts the seeded op's generator afresh
        with tf.compat.v1.Session(graph=graph) as session:
            runs.append([session.run([seeded, unseeded]) for _ in range(3)])
    assert [r[0].tolist() for r in runs[0]] == [r[0].tolist() for r in runs[1]]
    unseeded_draws = {tuple(r[1].ravel()) for session in runs for r in session}
    assert len(unseeded_draws) > 1  # six draws of 4 of 30 positions: all equal by chance with p < 1e-25


def test_shapes_are_known_in_a_graph_with_an_unknown_number_of_elements():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.bool, [None, None])
        y, mask = npu_cpu_ops.randomchoicewithmask(x, 3)
        assert y.shape.as_list() == [3, 2] and mask.shape.as_list() == [3]
        with tf.compat.v1.Session() as session:
            y_value, mask_value = session.run([y, mask], {x: [[False, True], [False, False]]})
    assert y_value.tolist() == [[0, 1], [0, 0], [0, 0]] and mask_value.tolist() == [True, False, False]


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"count": 0}, NpuArgumentError, r"count must be in \[1, 2\*\*63 - 1\], got 0"),
        ({"count": "3"}, NpuArgumentTypeError, "count must be an int, got '3'"),
        ({"count": True}, NpuArgumentTypeError, "count must be an int, got True"),
        ({"count": 2, "seed": -1}, NpuArgumentError, r"seed must be in \[0, 2\*\*63 - 1\], got -1"),
        ({"count": 2, "seed2": 2.5}, NpuArgumentTypeError, "seed2 must be an int, got 2.5"),
        ({"count": 2, "x": np.ones([3], np.float32)}, NpuArgumentTypeError, "x must be a bool tensor, got float32"),
        ({"count": 2, "x": True}, NpuArgumentError, r"x must have rank 1 to 5, got shape \(\)"),
        ({"count": 2, "x": np.ones([1] * 6, bool)}, NpuArgumentError, "x must have rank 1 to 5"),
    ],
)
def test_bad_arguments_are_named(kwargs, error, message):
    kwargs = {"x": np.ones([3], bool), **kwargs}
    with pytest.raises(error, match="randomchoicewithmask: " + message):
        npu_cpu_ops.randomchoicewithmask(**kwargs)


def test_a_numpy_integer_count_is_a_count():
    y, mask = _draw(np.ones([6], bool), np.int64(2))
    assert y.shape == (2, 1) and mask.all()
