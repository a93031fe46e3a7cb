"""``npu_ops.basic_lstm_cell``: one step of an LSTM cell with all gate values returned.

gates = [x, h] @ w + b, split into i, j, f, o (TensorFlow's BasicLSTMCell order);
  it = sigmoid(i), jt = tanh(j), ft = sigmoid(f + forget_bias), ot = sigmoid(o)
  ct = ft * c + it * jt, tanhct = tanh(ct), ht = ot * tanhct
With keep_prob < 1 the cell input x goes through NPU dropout first. The step is one function call node that
dumps and profiles show as one BasicLSTMCell op (``composite``).
"""

import numbers

import tensorflow as tf

from npu_bridge.core.compute import composite, dropout
from npu_bridge.core.runtime.errors import NpuArgumentError


def basic_lstm_cell(x, h, c, w, b, keep_prob=1.0, forget_bias=1.0, state_is_tuple=True, activation="tanh", name=None):
    """One LSTM step.

    Args:
      x: [batch, input_size] input.
      h, c: [batch, hidden] previous output and cell state.
      w: [input_size + hidden, 4 * hidden] weights; b: [4 * hidden] bias.
      keep_prob: dropout keep probability of x, in (0, 1].
      forget_bias: added to the forget gate.
      state_is_tuple: accepted (the state is always returned as separate tensors).
      activation: "tanh" (the only activation of Ascend's op).
    Returns:
      (ct, ht, it, jt, ft, ot, tanhct).
    Raises:
      ValueError: activation is not "tanh", or keep_prob is invalid.
    """
    del state_is_tuple
    if activation not in ("tanh", tf.tanh, tf.nn.tanh):
        raise NpuArgumentError(
            "basic_lstm_cell: activation must be 'tanh' (Ascend's BasicLSTMCell supports only "
            f"tanh), got {activation!r}"
        )
    with tf.name_scope(name or "BasicLSTMCell"):
        x = tf.convert_to_tensor(x)
        if not (isinstance(keep_prob, numbers.Real) and keep_prob == 1):
            x = dropout.dropout(x, keep_prob)

        def step(x, h, c, w, b):
            gates = tf.matmul(tf.concat([x, h], axis=1), w) + b
            i, j, f, o = tf.split(gates, 4, axis=1)
            it, jt = tf.sigmoid(i), tf.tanh(j)
            ft, ot = tf.sigmoid(f + forget_bias), tf.sigmoid(o)
            ct = ft * c + it * jt
            tanhct = tf.tanh(ct)
            return ct, ot * tanhct, it, jt, ft, ot, tanhct

        return composite.call("BasicLSTMCell", step, [x, h, c, w, b])
