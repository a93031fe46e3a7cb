"""``tf.contrib.recurrent`` of TensorFlow 1.15 for the TF1 mode: ``functional_rnn`` and
``bidirectional_functional_rnn``.

TensorFlow 1.15 ran them on its functional ``Recurrent`` loop (for TPUs), with the interface and the results of
``tf.compat.v1.nn.dynamic_rnn`` / ``bidirectional_dynamic_rnn``: outputs past a sequence's length are zeros and the
final state is the one at its last step. Here they run on ``dynamic_rnn`` itself, so the variables are the same as
1.15's (``<scope or "rnn">/<cell>/...``; ``bidirectional_rnn/fw``, ``.../bw``). ``use_tpu`` changes nothing.
"""

import tensorflow as tf
from tensorflow.python.util import nest

__all__ = ["bidirectional_functional_rnn", "functional_rnn"]


def functional_rnn(
    cell,
    inputs,
    sequence_length=None,
    initial_state=None,
    dtype=None,
    time_major=False,
    scope=None,
    use_tpu=False,
    reverse=False,
):
    """``tf.contrib.recurrent.functional_rnn``: ``tf.compat.v1.nn.dynamic_rnn``'s interface and results.

    Args:
      cell: a ``tf.compat.v1.nn.rnn_cell.RNNCell``.
      inputs: [batch, time, depth] ([time, batch, depth] with ``time_major``).
      sequence_length: None or int [batch].
      initial_state: None (the cell's zero state of ``dtype``) or the cell's state.
      dtype: dtype of the zero state.
      time_major: layout of ``inputs`` and of the outputs.
      scope: variable scope (default "rnn").
      use_tpu: ignored (TensorFlow 1.15 used it to pick its loop).
      reverse: run over the time-reversed inputs (TensorFlow 1.15's ``fast_reverse``): the outputs are reversed
        back, and with ``sequence_length`` the run starts at the longest sequence's last step (shorter sequences
        then see their padding first, as in 1.15).

    Returns:
      (outputs, final_state), as ``dynamic_rnn``.
    """
    del use_tpu
    if not reverse:
        return tf.compat.v1.nn.dynamic_rnn(
            cell,
            inputs,
            sequence_length=sequence_length,
            initial_state=initial_state,
            dtype=dtype,
            time_major=time_major,
            scope=scope or "rnn",
        )
    time_axis = 0 if time_major else 1
    flat = nest.flatten(inputs)
    total = tf.shape(flat[0])[time_axis]
    reversed_inputs = nest.map_structure(lambda t: tf.reverse(t, [time_axis]), inputs)
    if sequence_length is not None:
        start = total - tf.cast(tf.reduce_max(sequence_length), tf.int32)
        reversed_inputs = nest.map_structure(lambda t: t[start:] if time_major else t[:, start:], reversed_inputs)
    outputs, state = tf.compat.v1.nn.dynamic_rnn(
        cell, reversed_inputs, initial_state=initial_state, dtype=dtype, time_major=time_major, scope=scope or "rnn"
    )

    def restore(output):
        output = tf.reverse(output, [time_axis])
        if sequence_length is None:
            return output
        padding = [[0, 0]] * len(output.shape)
        padding[time_axis] = [0, start]
        output = tf.pad(output, padding)
        mask = tf.sequence_mask(sequence_length, total, dtype=output.dtype)  # [batch, time]
        if time_major:
            mask = tf.transpose(mask)
        return output * tf.reshape(mask, tf.concat([tf.shape(mask), tf.ones([tf.rank(output) - 2], tf.int32)], 0))

    return nest.map_structure(restore, outputs), state


def bidirectional_functional_rnn(
    cell_fw,
    cell_bw,
    inputs,
    initial_state_fw=None,
    initial_state_bw=None,
    dtype=None,
    sequence_length=None,
    time_major=False,
    use_tpu=False,
    fast_reverse=False,
    scope=None,
):
    """``tf.contrib.recurrent.bidirectional_functional_rnn``: ``tf.compat.v1.nn.bidirectional_dynamic_rnn``'s
    interface and results.

    Args:
      cell_fw, cell_bw: the forward and backward cells.
      inputs: [batch, time, depth] ([time, batch, depth] with ``time_major``).
      initial_state_fw, initial_state_bw: None (zero states of ``dtype``) or the cells' states.
      dtype: dtype of the zero states.
      sequence_length: None or int [batch]; the backward cell reads each sequence from its own last step.
      time_major: layout of ``inputs`` and of the outputs.
      use_tpu: ignored.
      fast_reverse: the backward cell reads the whole time-reversed inputs instead (``functional_rnn``'s
        ``reverse``), which TensorFlow 1.15 allowed when the lengths are equal or the cell ignores padding.
      scope: variable scope (default "bidirectional_rnn").

    Returns:
      ((output_fw, output_bw), (final_state_fw, final_state_bw)), as ``bidirectional_dynamic_rnn``.
    """
    del use_tpu
    time_axis, batch_axis = (0, 1) if time_major else (1, 0)

    def flip(value):
        if sequence_length is None:
            return nest.map_structure(lambda t: tf.reverse(t, [time_axis]), value)
        lengths = tf.cast(sequence_length, tf.int64)
        return nest.map_structure(
            lambda t: tf.reverse_sequence(t, lengths, seq_axis=time_axis, batch_axis=batch_axis), value
        )

    with tf.compat.v1.variable_scope(scope or "bidirectional_rnn"):
        with tf.compat.v1.variable_scope("fw") as fw_scope:
            output_fw, state_fw = functional_rnn(
                cell_fw, inputs, sequence_length, initial_state_fw, dtype, time_major, scope=fw_scope
            )
        with tf.compat.v1.variable_scope("bw") as bw_scope:
            output_bw, state_bw = functional_rnn(
                cell_bw,
                inputs if fast_reverse else flip(inputs),
                sequence_length,
                initial_state_bw,
                dtype,
                time_major,
                scope=bw_scope,
                reverse=fast_reverse,
            )
    if not fast_reverse:
        output_bw = flip(output_bw)
    return (output_fw, output_bw), (state_fw, state_bw)
