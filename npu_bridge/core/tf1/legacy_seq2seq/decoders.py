"""The decoders of TensorFlow 1.15's ``contrib.legacy_seq2seq``, for the TF1 mode: static (Python-unrolled) loops
over lists of [batch, ...] tensors, one per step.

``rnn_decoder`` runs a cell over the inputs (or, with ``loop_function``, over what it makes of the previous output);
``attention_decoder`` adds Bahdanau-style attention over ``attention_states`` with ``num_heads`` heads (Vinyals et
al., 2015, "Grammar as a Foreign Language"). Variable names are 1.15's: ``AttnW_<h>`` [1, 1, attn_size, attn_size]
and ``AttnV_<h>`` in the decoder's scope, ``Attention_<h>/kernel|bias`` for the query projections, ``kernel|bias``
for the input projection and ``AttnOutputProjection/kernel|bias``.
"""

import tensorflow as tf
from tensorflow.python.util import nest

from npu_bridge.core.runtime.errors import NpuArgumentError
from npu_bridge.core.tf1.rnn_linear import _Linear

__all__ = [
    "attention_decoder",
    "embedding_attention_decoder",
    "embedding_rnn_decoder",
    "rnn_decoder",
]


def _extract_argmax_and_embed(embedding, output_projection=None, update_embedding=True):
    """A ``loop_function``: the embedding of the argmax of the (projected) previous output; without
    ``update_embedding`` no gradient flows into the embedding through it."""

    def loop_function(prev, _):
        if output_projection is not None:
            prev = tf.compat.v1.nn.xw_plus_b(prev, output_projection[0], output_projection[1])
        embedded = tf.compat.v1.nn.embedding_lookup(embedding, tf.argmax(prev, 1))
        return embedded if update_embedding else tf.stop_gradient(embedded)

    return loop_function


def rnn_decoder(decoder_inputs, initial_state, cell, loop_function=None, scope=None):
    """Runs ``cell`` over ``decoder_inputs`` from ``initial_state``.

    Args:
      decoder_inputs: list of [batch, input_size] tensors.
      initial_state: the cell's initial state.
      cell: an RNN cell.
      loop_function: optional ``(prev_output, i) -> input``: from step 1 on the input is made from the previous
        output instead of ``decoder_inputs[i]`` (only the first input is read).
      scope: variable scope (default "rnn_decoder").

    Returns:
      ``(outputs, state)``: the list of outputs and the last state.
    """
    with tf.compat.v1.variable_scope(scope or "rnn_decoder"):
        state = initial_state
        outputs = []
        prev = None
        for i, inp in enumerate(decoder_inputs):
            if loop_function is not None and prev is not None:
                with tf.compat.v1.variable_scope("loop_function", reuse=True):
                    inp = loop_function(prev, i)
            if i > 0:
                tf.compat.v1.get_variable_scope().reuse_variables()
            output, state = cell(inp, state)
            outputs.append(output)
            if loop_function is not None:
                prev = output
    return outputs, state


def embedding_rnn_decoder(
    decoder_inputs,
    initial_state,
    cell,
    num_symbols,
    embedding_size,
    output_projection=None,
    feed_previous=False,
    update_embedding_for_previous=True,
    scope=None,
):
    """``rnn_decoder`` on the embeddings of integer inputs (``embedding`` [num_symbols, embedding_size] in the
    scope, default "embedding_rnn_decoder"); with ``feed_previous`` each step after the first reads the embedding
    of the argmax of the previous (projected) output.

    Args:
      decoder_inputs: list of [batch] int tensors.
      initial_state, cell: as ``rnn_decoder``.
      num_symbols, embedding_size: the embedding's shape.
      output_projection: optional (W [output_size, num_symbols], b [num_symbols]) applied before the argmax.
      feed_previous: feed back the previous output's argmax.
      update_embedding_for_previous: let gradients reach the embedding through the fed-back symbols.
      scope: variable scope.

    Returns:
      ``(outputs, state)``.
    """
    with tf.compat.v1.variable_scope(scope or "embedding_rnn_decoder") as scope:
        if output_projection is not None:
            _check_projection(output_projection, num_symbols, scope.dtype)
        embedding = tf.compat.v1.get_variable("embedding", [num_symbols, embedding_size])
        loop_function = (
            _extract_argmax_and_embed(embedding, output_projection, update_embedding_for_previous)
            if feed_previous
            else None
        )
        embedded = (tf.compat.v1.nn.embedding_lookup(embedding, i) for i in decoder_inputs)
        return rnn_decoder(embedded, initial_state, cell, loop_function=loop_function)


def _check_projection(output_projection, num_symbols, dtype):
    weights = tf.convert_to_tensor(output_projection[0], dtype=dtype)
    weights.shape.assert_is_compatible_with([None, num_symbols])
    biases = tf.convert_to_tensor(output_projection[1], dtype=dtype)
    biases.shape.assert_is_compatible_with([num_symbols])


def attention_decoder(
    decoder_inputs,
    initial_state,
    attention_states,
    cell,
    output_size=None,
    num_heads=1,
    loop_function=None,
    dtype=None,
    scope=None,
    initial_state_attention=False,
):
    """An RNN decoder with attention over ``attention_states``.

    Each step: x = Linear([input] + attention reads), (cell_output, state) = cell(x, state); each head h reads
    d_h = sum_t a_t * hidden_t with a = softmax(v_h . tanh(W_h hidden_t + Linear_h(state))); the output is
    Linear([cell_output] + reads) of ``output_size``.

    Args:
      decoder_inputs: non-empty list of [batch, input_size] tensors.
      initial_state: the cell's initial state.
      attention_states: [batch, attn_length, attn_size] tensor, attn_size known.
      cell: an RNN cell.
      output_size: size of the outputs (default the cell's).
      num_heads: number of attention heads, at least 1.
      loop_function: as ``rnn_decoder``.
      dtype: dtype of the variables (default the scope's, float32).
      scope: variable scope (default "attention_decoder").
      initial_state_attention: compute the first step's attention reads from ``initial_state`` (else zeros).

    Returns:
      ``(outputs, state)``: the list of [batch, output_size] outputs and the last state.

    Raises:
      NpuArgumentError: ``decoder_inputs`` is empty, ``num_heads`` < 1, or attn_size / an input size is unknown.
    """
    if not decoder_inputs:
        raise NpuArgumentError("attention_decoder: decoder_inputs must hold at least 1 input, got an empty list")
    if num_heads < 1:
        raise NpuArgumentError(
            f"attention_decoder: num_heads must be at least 1 (use rnn_decoder without attention), got {num_heads}"
        )
    attn_size = tf.compat.dimension_value(attention_states.shape[2])
    if attn_size is None:
        raise NpuArgumentError(
            f"attention_decoder: the last dimension of attention_states must be known, got shape "
            f"{attention_states.shape}"
        )
    if output_size is None:
        output_size = cell.output_size
    with tf.compat.v1.variable_scope(scope or "attention_decoder", dtype=dtype) as scope:
        dtype = scope.dtype
        batch_size = tf.shape(decoder_inputs[0])[0]
        attn_length = tf.compat.dimension_value(attention_states.shape[1])
        if attn_length is None:
            attn_length = tf.shape(attention_states)[1]
        hidden = tf.reshape(attention_states, [-1, attn_length, 1, attn_size])
        hidden_features, v = [], []
        for head in range(num_heads):
            k = tf.compat.v1.get_variable(f"AttnW_{head}", [1, 1, attn_size, attn_size], dtype=dtype)
            hidden_features.append(tf.compat.v1.nn.conv2d(hidden, k, [1, 1, 1, 1], "SAME"))
            v.append(tf.compat.v1.get_variable(f"AttnV_{head}", [attn_size], dtype=dtype))

        def attention(query):
            reads = []
            if nest.is_nested(query):
                parts = nest.flatten(query)
                for part in parts:
                    if part.shape.rank and part.shape.rank != 2:
                        raise NpuArgumentError(
                            f"attention_decoder: every part of the state must be 2-D, got shape {part.shape}"
                        )
                query = tf.concat(parts, 1)
            for head in range(num_heads):
                with tf.compat.v1.variable_scope(f"Attention_{head}"):
                    y = tf.cast(tf.reshape(_Linear(query, attn_size, True)(query), [-1, 1, 1, attn_size]), dtype)
                    s = tf.reduce_sum(v[head] * tf.tanh(hidden_features[head] + y), [2, 3])
                    a = tf.cast(tf.nn.softmax(tf.cast(s, tf.float32)), dtype)
                    d = tf.reduce_sum(tf.reshape(a, [-1, attn_length, 1, 1]) * hidden, [1, 2])
                    reads.append(tf.reshape(d, [-1, attn_size]))
            return reads

        outputs = []
        prev = None
        attns = [tf.zeros(tf.stack([batch_size, attn_size]), dtype=dtype) for _ in range(num_heads)]
        for a in attns:
            a.set_shape([None, attn_size])
        if initial_state_attention:
            attns = attention(initial_state)
        state = initial_state
        for i, inp in enumerate(decoder_inputs):
            if i > 0:
                tf.compat.v1.get_variable_scope().reuse_variables()
            if loop_function is not None and prev is not None:
                with tf.compat.v1.variable_scope("loop_function", reuse=True):
                    inp = loop_function(prev, i)
            input_size = tf.compat.dimension_value(inp.shape.with_rank(2)[1])
            if input_size is None:
                raise NpuArgumentError(f"attention_decoder: the size of input {inp.name} must be known")
            inputs = [tf.cast(e, dtype) for e in [inp] + attns]
            x = _Linear(inputs, input_size, True)(inputs)
            cell_output, state = cell(x, state)
            if i == 0 and initial_state_attention:
                with tf.compat.v1.variable_scope(tf.compat.v1.get_variable_scope(), reuse=True):
                    attns = attention(state)
            else:
                attns = attention(state)
            with tf.compat.v1.variable_scope("AttnOutputProjection"):
                inputs = [tf.cast(cell_output, dtype)] + attns
                output = _Linear(inputs, output_size, True)(inputs)
            if loop_function is not None:
                prev = output
            outputs.append(output)
    return outputs, state


def embedding_attention_decoder(
    decoder_inputs,
    initial_state,
    attention_states,
    cell,
    num_symbols,
    embedding_size,
    num_heads=1,
    output_size=None,
    output_projection=None,
    feed_previous=False,
    update_embedding_for_previous=True,
    dtype=None,
    scope=None,
    initial_state_attention=False,
):
    """``attention_decoder`` on the embeddings of integer inputs (``embedding`` in the scope, default
    "embedding_attention_decoder"), optionally feeding back the argmax of the previous output.

    Args:
      decoder_inputs: list of [batch] int tensors.
      initial_state, attention_states, cell, num_heads, output_size, initial_state_attention: as
        ``attention_decoder``.
      num_symbols, embedding_size: the embedding's shape.
      output_projection, feed_previous, update_embedding_for_previous: as ``embedding_rnn_decoder``.
      dtype: dtype of the variables.
      scope: variable scope.

    Returns:
      ``(outputs, state)``.
    """
    if output_size is None:
        output_size = cell.output_size
    if output_projection is not None:
        biases = tf.convert_to_tensor(output_projection[1], dtype=dtype)
        biases.shape.assert_is_compatible_with([num_symbols])
    with tf.compat.v1.variable_scope(scope or "embedding_attention_decoder", dtype=dtype):
        embedding = tf.compat.v1.get_variable("embedding", [num_symbols, embedding_size])
        loop_function = (
            _extract_argmax_and_embed(embedding, output_projection, update_embedding_for_previous)
            if feed_previous
            else None
        )
        embedded = [tf.compat.v1.nn.embedding_lookup(embedding, i) for i in decoder_inputs]
        return attention_decoder(
            embedded,
            initial_state,
            attention_states,
            cell,
            output_size=output_size,
            num_heads=num_heads,
            loop_function=loop_function,
            initial_state_attention=initial_state_attention,
        )
