"""NPU RNN ops against numpy recurrences: basic_lstm_cell, DynamicRNN, DynamicGRUV2, DynamicAUGRU, npu_dynamic_rnn."""

import numpy as np
import pytest
import tensorflow as tf

from npu_bridge.estimator import npu_ops
from npu_bridge.estimator.npu import npu_dynamic_rnn, npu_rnn

v1 = tf.compat.v1
RNG = np.random.RandomState(4)
T, B, F, H = 5, 3, 4, 6


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def np_lstm_step(x, h, c, w, b, forget_bias):
    i, j, f, o = np.split(np.concatenate([x, h], 1) @ w + b, 4, axis=1)
    it, jt, ft, ot = sigmoid(i), np.tanh(j), sigmoid(f + forget_bias), sigmoid(o)
    c = ft * c + it * jt
    return ot * np.tanh(c), c, (it, jt, ft, ot, np.tanh(c))


def run(build):
    graph = tf.Graph()
    with graph.as_default():
        fetches = build()
        with v1.Session(graph=graph) as sess:
            sess.run(v1.global_variables_initializer())
            return sess.run(fetches)


def test_basic_lstm_cell_matches_numpy():
    x, h, c = RNG.randn(B, F), RNG.randn(B, H), RNG.randn(B, H)
    w, b = RNG.randn(F + H, 4 * H), RNG.randn(4 * H)
    ct, ht, it, jt, ft, ot, tanhct = run(lambda: npu_ops.basic_lstm_cell(x, h, c, w, b, 1.0, 1.0, True, "tanh"))
    h_ref, c_ref, gates = np_lstm_step(x, h, c, w, b, 1.0)
    np.testing.assert_allclose(ct, c_ref)
    np.testing.assert_allclose(ht, h_ref)
    for got, want in zip((it, jt, ft, ot, tanhct), gates):
        np.testing.assert_allclose(got, want)
    with tf.Graph().as_default(), pytest.raises(ValueError, match="activation must be 'tanh'"):
        npu_ops.basic_lstm_cell(x, h, c, w, b, 1.0, 1.0, True, "relu")


def np_dynamic_rnn(x, w, b, seq_length, forget_bias, reverse=False):
    steps = range(T - 1, -1, -1) if reverse else range(T)
    h, c = np.zeros((B, H)), np.zeros((B, H))
    outputs = np.zeros((8, T, B, H))
    for t in steps:
        h_new, c_new, gates = np_lstm_step(x[t], h, c, w, b, forget_bias)
        valid = (t < seq_length)[:, None]
        h, c = np.where(valid, h_new, h), np.where(valid, c_new, c)
        outputs[:, t] = [np.where(valid, h_new, 0), h, c] + [np.where(valid, g, 0) for g in gates]
    return outputs


@pytest.mark.parametrize("direction", ["UNIDIRECTIONAL", "REDIRECTIONAL"])
def test_dynamic_rnn_outputs_and_sequence_lengths(direction):
    x = RNG.randn(T, B, F)
    seq_length = np.array([5, 3, 1])

    def build():
        layer = npu_dynamic_rnn.DynamicRNN(H, tf.float64, direction=direction, forget_bias=1.0)
        outputs = layer(tf.constant(x), seq_length=tf.constant(seq_length))
        return outputs, layer.weight, layer.bias, tf.gradients(tf.reduce_sum(outputs[0]), layer.weight)[0]

    outputs, w, b, grad = run(build)
    expected = np_dynamic_rnn(x, w, b, seq_length, 1.0, reverse=direction == "REDIRECTIONAL")
    assert len(outputs) == 8
    for got, want in zip(outputs, expected):
        np.testing.assert_allclose(got, want, atol=1e-12)
    assert grad.shape == w.shape and np.all(np.isfinite(grad))


def test_dynamic_rnn_gradient_is_numerically_right():
    x = RNG.randn(3, 2, F)
    weights = RNG.randn(3, 2, H)  # the checked scalar is sum(y * weights)
    graph = tf.Graph()
    with graph.as_default():
        inputs = v1.placeholder(tf.float64, x.shape)
        objective = tf.reduce_sum(npu_dynamic_rnn.DynamicRNN(H, tf.float64)(inputs)[0] * weights)
        (grad,) = tf.gradients(objective, inputs)
        with v1.Session(graph=graph) as sess:
            sess.run(v1.global_variables_initializer())
            analytic = sess.run(grad, {inputs: x})
            numeric = np.zeros_like(x)
            for index in np.ndindex(*x.shape):
                step = np.zeros_like(x)
                step[index] = 1e-6
                numeric[index] = (
                    sess.run(objective, {inputs: x + step}) - sess.run(objective, {inputs: x - step})
                ) / 2e-6
    np.testing.assert_allclose(analytic, numeric, atol=1e-7)


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"direction": "BIDIRECTIONAL"}, "direction='BIDIRECTIONAL' is not supported"),
        ({"cell_depth": 2}, "cell_depth=2 is not supported"),
        ({"use_peephole": True}, "use_peephole=True is not supported"),
        ({"cell_type": "GRU"}, "cell_type='GRU' is not supported"),
    ],
)
def test_dynamic_rnn_rejects_what_the_npu_op_does_not_do(kwargs, error):
    with pytest.raises(ValueError, match=error):
        npu_dynamic_rnn.DynamicRNN(H, tf.float32, **kwargs)


def np_gru(x, wi, wh, bi, bh, gate_order, reset_after, attention=None):
    h = np.zeros((B, H))
    out = []
    for t in range(T):
        gx = np.split(x[t] @ wi + bi, 3, axis=1)
        whs, bhs = np.split(wh, 3, axis=1), np.split(bh, 3)
        index = {name: i for i, name in enumerate(gate_order)}
        z = sigmoid(gx[index["z"]] + h @ whs[index["z"]] + bhs[index["z"]])
        r = sigmoid(gx[index["r"]] + h @ whs[index["r"]] + bhs[index["r"]])
        if reset_after:
            hidden_new = h @ whs[index["h"]] + bhs[index["h"]]
            n = np.tanh(gx[index["h"]] + r * hidden_new)
        else:
            hidden_new = (r * h) @ whs[index["h"]] + bhs[index["h"]]
            n = np.tanh(gx[index["h"]] + hidden_new)
        if attention is None:
            h = z * h + (1 - z) * n
            out.append((h, h, z, r, n, hidden_new))
        else:
            update_att = attention[t][:, None] * z
            h = (1 - update_att) * h + update_att * n
            out.append((h, h, z, update_att, r, n, hidden_new))
    return [np.stack(values) for values in zip(*out)]


@pytest.mark.parametrize("gate_order, reset_after", [("zrh", True), ("rzh", False)])
def test_dynamic_gru_v2(gate_order, reset_after):
    x = RNG.randn(T, B, F)

    def build():
        layer = npu_dynamic_rnn.DynamicGRUV2(H, tf.float64, gate_order=gate_order, reset_after=reset_after)
        outputs = layer(tf.constant(x))
        return outputs, [layer.weight_input, layer.weight_hidden, layer.bias_input, layer.bias_hidden]

    outputs, weights = run(build)
    assert len(outputs) == 6
    for got, want in zip(outputs, np_gru(x, *weights, gate_order, reset_after)):
        np.testing.assert_allclose(got, want, atol=1e-12)


def test_dynamic_augru_scales_the_update_by_attention():
    x, attention = RNG.randn(T, B, F), RNG.rand(T, B)

    def build():
        layer = npu_dynamic_rnn.DynamicAUGRU(H, tf.float64)
        outputs = layer(tf.constant(x), tf.constant(attention))
        return outputs, [layer.weight_input, layer.weight_hidden, layer.bias_input, layer.bias_hidden]

    outputs, weights = run(build)
    assert len(outputs) == 7
    for got, want in zip(outputs, np_gru(x, *weights, "zrh", True, attention=attention)):
        np.testing.assert_allclose(got, want, atol=1e-12)


@pytest.mark.filterwarnings("ignore:`tf.nn.rnn_cell.BasicRNNCell` is deprecated")
def test_npu_dynamic_rnn_is_a_time_major_static_rnn():
    x = RNG.randn(T, B, F).astype(np.float32)

    def build():
        cell = v1.nn.rnn_cell.BasicRNNCell(H)
        outputs, state = npu_rnn.npu_dynamic_rnn(cell, tf.constant(x), dtype=tf.float32)
        reference, _ = v1.nn.dynamic_rnn(cell, tf.constant(x), dtype=tf.float32, time_major=True)
        return outputs, state, reference

    outputs, state, reference = run(build)
    assert outputs.shape == (T, B, H)
    np.testing.assert_allclose(outputs, reference, rtol=1e-6)
    np.testing.assert_allclose(state, outputs[-1], rtol=1e-6)
