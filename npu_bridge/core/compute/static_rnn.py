"""``npu_rnn.npu_dynamic_rnn``: a time-major RNN as upstream builds it, with ``tf.nn.static_rnn``."""

import tensorflow as tf

from npu_bridge.core.runtime.errors import NpuArgumentError


def npu_dynamic_rnn(cell, inputs, initial_state=None, dtype=None, sequence_length=None, scope=None):
    """Runs ``cell`` over time-major ``inputs`` [time, batch, features] (static time length).

    Args:
      cell: a ``tf.compat.v1.nn.rnn_cell`` cell.
      inputs: [time, batch, features] tensor with a known time dimension.
      initial_state, dtype, sequence_length, scope: as ``tf.compat.v1.nn.static_rnn``.
    Returns:
      (outputs [time, batch, cell output size], final state).
    Raises:
      ValueError: the time dimension is unknown.
    """
    inputs = tf.convert_to_tensor(inputs)
    if inputs.shape.rank is None or inputs.shape[0] is None:
        raise NpuArgumentError(
            f"npu_dynamic_rnn: inputs must be time-major with a known time dimension, got {inputs.shape}"
        )
    outputs, state = tf.compat.v1.nn.static_rnn(
        cell,
        tf.unstack(inputs, axis=0),
        initial_state=initial_state,
        dtype=dtype,
        sequence_length=sequence_length,
        scope=scope,
    )
    return tf.stack(outputs, axis=0), state
