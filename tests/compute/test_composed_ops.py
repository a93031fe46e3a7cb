"""Ops built from many TensorFlow ops (DynamicRNN, DynamicGRUV2, DynamicAUGRU, basic_lstm_cell) are one op in
dumps, overflow records and profiles, with Ascend's op type; their time loops do not appear."""

import collections

import numpy as np
import pytest
import tensorflow as tf
from helpers.dump import artifacts, dump_config, training_model
from helpers.profiling import end_profiles, profiled_config, read_csv, the_profile

from npu_bridge.core.compute import composite
from npu_bridge.core.dump import dump_file, overflow_records
from npu_bridge.estimator import npu_ops
from npu_bridge.estimator.npu import npu_dynamic_rnn

v1 = tf.compat.v1
T, B, F, H = 100, 4, 8, 16


def rnn_model(layer="DynamicRNN", nan_input=False):
    """A 100-step time-major RNN layer trained on a squared loss; returns (graph, feed, fetches)."""
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [T, B, F], name="x")
        if layer == "DynamicRNN":
            outputs = npu_dynamic_rnn.DynamicRNN(H, tf.float32, name="lstm")(x)
        elif layer == "DynamicGRUV2":
            outputs = npu_dynamic_rnn.DynamicGRUV2(H, tf.float32, name="gru")(x)
        else:
            outputs = npu_dynamic_rnn.DynamicAUGRU(H, tf.float32, name="augru")(x, tf.ones([T, B]))
        loss = tf.reduce_mean(tf.square(outputs[0]), name="loss")
        train = v1.train.GradientDescentOptimizer(0.1).minimize(loss)
        init = v1.global_variables_initializer()
    values = np.random.RandomState(0).uniform(-1, 1, (T, B, F)).astype(np.float32)
    if nan_input:
        values[3, 0, 0] = np.nan  # sigmoid and tanh would saturate an inf
    return graph, {x: values}, {"y": outputs[0], "loss": loss, "train": train, "init": init}


def train_one_step(graph, feed, fetches, config):
    with v1.Session(graph=graph, config=config) as sess:
        sess.run(fetches["init"])
        return sess.run({"y": fetches["y"], "loss": fetches["loss"], "train": fetches["train"]}, feed)


@pytest.mark.parametrize("layer", ["DynamicRNN", "DynamicGRUV2", "DynamicAUGRU"])
def test_layer_is_one_stamped_call(layer):
    graph, _, _ = rnn_model(layer)
    forward, backward = [op for op in graph.get_operations() if composite.is_call(op.type)]
    assert forward.get_attr("_npu_op_type").decode() == layer
    assert forward.get_attr("_npu_op_outputs") == {"DynamicRNN": 8, "DynamicGRUV2": 6, "DynamicAUGRU": 7}[layer]
    assert backward.name == f"gradients/{forward.name}_grad/PartitionedCall"  # the passes call it {layer}Grad
    assert not [op for op in graph.get_operations() if op.type in ("While", "StatelessWhile", "Enter")]


def test_one_step_dump_of_a_100_step_dynamic_rnn_is_a_few_files(tmp_path):
    graph, feed, fetches = rnn_model()
    result = train_one_step(graph, feed, fetches, dump_config(tmp_path, dump_mode="all", dump_step="0"))
    model = training_model(tmp_path, "lstm/PartitionedCall")
    dumps = [found for found in artifacts(tmp_path) if found.model == model]
    assert 0 < len(dumps) < 200
    by_type = collections.defaultdict(list)
    for found in dumps:
        by_type[found.name.op_type].append(found)
    assert set(by_type) >= {"DynamicRNN", "DynamicRNNGrad"}
    assert not set(by_type) & {"While", "MatMul", "Sigmoid", "TensorListPushBack"}
    (forward,) = by_type["DynamicRNN"]
    loaded = dump_file.load(forward.path)
    assert len(loaded.outputs) == 8  # y, output_h, output_c, i, j, f, o, tanhc: not the backward's intermediates
    assert [tuple(o.shape) for o in loaded.outputs] == [(T, B, H)] * 8
    assert [tuple(i.shape) for i in loaded.inputs] == [(T, B, F), (F + H, 4 * H), (4 * H,)]  # x, weight, bias
    np.testing.assert_array_equal(loaded.outputs[0].array(), result["y"])


def test_overflow_inside_the_loop_is_reported_as_the_composed_op(tmp_path):
    graph, feed, fetches = rnn_model(nan_input=True)
    train_one_step(graph, feed, fetches, dump_config(tmp_path, enable_dump=False, enable_dump_debug=True))
    entries = overflow_records.find(tmp_path)
    assert entries and entries[0].op_type == "DynamicRNN" and entries[0].op_name == "lstm/PartitionedCall"
    assert "DynamicRNNGrad" in {e.op_type for e in entries}
    assert not [e for e in entries if "npu_op." in e.op_name or e.op_type in ("MatMul", "Sigmoid", "Tanh")]


def test_profile_shows_the_rnn_as_one_op_per_direction(tmp_path):
    graph, feed, fetches = rnn_model("DynamicGRUV2")
    try:
        train_one_step(graph, feed, fetches, profiled_config(tmp_path, training_trace="on", task_time="on"))
    finally:
        end_profiles()
    _, ops = read_csv(the_profile(tmp_path), "op_summary")
    types = collections.Counter(op["OP Type"] for op in ops)
    assert types["DynamicGRUV2"] == 1 and types["DynamicGRUV2Grad"] == 1
    assert len(ops) < 60, types  # the loop ran 100 steps forward and back: hundreds of ops per step when unfolded
    assert not types.keys() & {"MatMul", "Sigmoid", "Tanh", "TensorListPushBack", "PartitionedCall"}


def test_basic_lstm_cell_is_one_op_and_keeps_its_values(tmp_path):
    rng = np.random.RandomState(1)
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [B, F])
        h, c = tf.zeros([B, H]), tf.zeros([B, H])
        w = tf.Variable(rng.normal(size=(F + H, 4 * H)).astype(np.float32))
        b = tf.Variable(np.zeros(4 * H, np.float32))
        ct, ht = npu_ops.basic_lstm_cell(x, h, c, w, b)[:2]
        train = v1.train.GradientDescentOptimizer(0.1).minimize(tf.reduce_sum(ht))
        init = v1.global_variables_initializer()
    with v1.Session(graph=graph, config=dump_config(tmp_path, dump_step="0")) as sess:
        sess.run(init)
        sess.run(train, {x: rng.normal(size=(B, F))})
    types = {a.name.op_type for a in artifacts(tmp_path)}
    assert {"BasicLSTMCell", "BasicLSTMCellGrad"} <= types
    assert not types & {"MatMul", "Sigmoid", "Tanh"}
