"""Exception dump (enable_exception_dump=1): when an op fails at run time its inputs are dumped, and the error
says where."""

import os

import numpy as np
import pytest
import tensorflow as tf
from conftest import npu_config

from npu_bridge.core import dump

v1 = tf.compat.v1


def lookup_graph():
    graph = tf.Graph()
    with graph.as_default():
        params = v1.placeholder(tf.float32, [3, 2], name="params")
        indices = v1.placeholder(tf.int32, [2], name="indices")
        looked_up = tf.gather(tf.sin(params, name="features"), indices, name="lookup")
        total = tf.reduce_sum(looked_up, name="total")
    return graph, params, indices, total


def test_a_failing_op_has_its_inputs_dumped_and_the_error_says_where(tmp_path, monkeypatch):
    monkeypatch.setenv("ASCEND_WORK_PATH", str(tmp_path))
    graph, params, indices, total = lookup_graph()
    values = np.arange(6, dtype=np.float32).reshape(3, 2)
    with v1.Session(graph=graph, config=npu_config(enable_exception_dump=1)) as sess:
        features = sess.run("features:0", {params: values})
        with pytest.raises(tf.errors.InvalidArgumentError) as raised:
            sess.run(total, {params: values, indices: [0, 5]})
    message = str(raised.value)
    assert "indices[1] = 5 is not in [0, 3)" in message  # TensorFlow's own message is kept
    directory = os.path.join(tmp_path, "extra-info", "data-dump", "0")
    (name,) = os.listdir(directory)
    path = os.path.join(directory, name)
    assert name.startswith("GatherV2.lookup.") and f"were written to {path}" in message
    assert "the 3 inputs of GatherV2 lookup" in message
    inputs = [tensor.array() for tensor in dump.load(path).inputs]
    np.testing.assert_array_equal(inputs[0], features)
    assert inputs[1].tolist() == [0, 5] and inputs[2].tolist() == 0  # params, indices, axis


def test_the_default_lite_mode_leaves_the_error_as_tensorflow_raises_it(tmp_path, monkeypatch):
    monkeypatch.setenv("ASCEND_WORK_PATH", str(tmp_path))
    graph, params, indices, total = lookup_graph()
    with v1.Session(graph=graph, config=npu_config()) as sess:
        assert "run" not in vars(sess)  # nothing is instrumented or hooked
        with pytest.raises(tf.errors.InvalidArgumentError) as raised:
            sess.run(total, {params: np.zeros((3, 2), np.float32), indices: [7, 0]})
    assert "exception dump" not in str(raised.value) and not os.path.exists(tmp_path / "extra-info")
