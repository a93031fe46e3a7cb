"""The sequence-to-sequence models of TensorFlow 1.15's ``contrib.legacy_seq2seq``, for the TF1 mode: an encoder
(``static_rnn`` over lists of [batch] inputs) whose final state starts a decoder of ``decoders``.

``feed_previous`` may be a Python bool or a bool tensor; with a tensor both decoders are built (sharing variables)
and ``tf.cond`` picks one at run time, as in TensorFlow 1.15.
"""

import copy

import tensorflow as tf
from tensorflow.python.util import nest

from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError
from npu_bridge.core.tf1.legacy_seq2seq.decoders import (
    _check_projection,
    _extract_argmax_and_embed,
    embedding_attention_decoder,
    embedding_rnn_decoder,
    rnn_decoder,
)
from npu_bridge.core.tf1.legacy_seq2seq.wrappers import EmbeddingWrapper, OutputProjectionWrapper

__all__ = [
    "basic_rnn_seq2seq",
    "embedding_attention_seq2seq",
    "embedding_rnn_seq2seq",
    "embedding_tied_rnn_seq2seq",
    "one2many_rnn_seq2seq",
    "tied_rnn_seq2seq",
]


def basic_rnn_seq2seq(encoder_inputs, decoder_inputs, cell, dtype=tf.float32, scope=None):
    """An encoder (a copy of ``cell``) and an ``rnn_decoder`` (``cell``), in scope "basic_rnn_seq2seq".

    Args:
      encoder_inputs, decoder_inputs: lists of [batch, input_size] tensors.
      cell: an RNN cell.
      dtype: dtype of the encoder's initial state.
      scope: variable scope.

    Returns:
      ``(outputs, state)`` of the decoder.
    """
    with tf.compat.v1.variable_scope(scope or "basic_rnn_seq2seq"):
        _, encoder_state = tf.compat.v1.nn.static_rnn(copy.deepcopy(cell), encoder_inputs, dtype=dtype)
        return rnn_decoder(decoder_inputs, encoder_state, cell)


def tied_rnn_seq2seq(encoder_inputs, decoder_inputs, cell, loop_function=None, dtype=tf.float32, scope=None):
    """Encoder and decoder share ``cell`` and its variables (scope "combined_tied_rnn_seq2seq/<scope>", scope
    default "tied_rnn_seq2seq").

    Returns:
      ``(outputs, state)`` of the decoder.
    """
    with tf.compat.v1.variable_scope("combined_tied_rnn_seq2seq"):
        scope = scope or "tied_rnn_seq2seq"
        _, encoder_state = tf.compat.v1.nn.static_rnn(cell, encoder_inputs, dtype=dtype, scope=scope)
        tf.compat.v1.get_variable_scope().reuse_variables()
        return rnn_decoder(decoder_inputs, encoder_state, cell, loop_function=loop_function, scope=scope)


def _pick_decoder(feed_previous, build, decoder_inputs, structure):
    """Builds the decoder for both values of a bool tensor ``feed_previous`` and returns the one it selects.

    ``build(feed_previous_bool)`` returns ``(outputs, state)``; the fed-back branch is built first and creates the
    variables, the other reuses them.
    """

    def branch(feed_previous_bool):
        with tf.compat.v1.variable_scope(tf.compat.v1.get_variable_scope(), reuse=None if feed_previous_bool else True):
            outputs, state = build(feed_previous_bool)
        return outputs + (nest.flatten(state) if nest.is_nested(state) else [state])

    both = tf.compat.v1.cond(feed_previous, lambda: branch(True), lambda: branch(False))
    count = len(decoder_inputs)
    state_list = both[count:]
    state = state_list[0]
    if nest.is_nested(structure):
        state = nest.pack_sequence_as(structure=structure, flat_sequence=state_list)
    return both[:count], state


def _embedding_encoder(cell, encoder_inputs, num_encoder_symbols, embedding_size, dtype):
    """``static_rnn`` of ``cell`` on ``embedding_size``-deep embeddings of the encoder's ids; returns
    ``(outputs, state)``."""
    encoder_cell = EmbeddingWrapper(cell, embedding_classes=num_encoder_symbols, embedding_size=embedding_size)
    return tf.compat.v1.nn.static_rnn(encoder_cell, encoder_inputs, dtype=dtype)


def _decode(build, feed_previous, decoder_inputs, structure):
    """``build(feed_previous)`` for a Python bool; for a bool tensor, the ``_pick_decoder`` of the two decoders
    ``build(feed_previous_bool, False)`` (their fed-back ids do not update the embedding)."""
    if isinstance(feed_previous, bool):
        return build(feed_previous)
    return _pick_decoder(feed_previous, lambda fp: build(fp, False), decoder_inputs, structure)


def embedding_rnn_seq2seq(
    encoder_inputs,
    decoder_inputs,
    cell,
    num_encoder_symbols,
    num_decoder_symbols,
    embedding_size,
    output_projection=None,
    feed_previous=False,
    dtype=None,
    scope=None,
):
    """An embedding encoder and an ``embedding_rnn_decoder`` (scope "embedding_rnn_seq2seq"); without
    ``output_projection`` the decoder cell is wrapped in an ``OutputProjectionWrapper`` to ``num_decoder_symbols``.

    Args:
      encoder_inputs, decoder_inputs: lists of [batch] int tensors.
      cell: an RNN cell (the encoder gets a copy).
      num_encoder_symbols, num_decoder_symbols, embedding_size: vocabulary sizes and embedding depth.
      output_projection: optional (W, b) the outputs still need (then the outputs are the cell's).
      feed_previous: bool or bool tensor (as ``embedding_rnn_decoder``).
      dtype: dtype of the initial state and variables.
      scope: variable scope.

    Returns:
      ``(outputs, state)``.
    """
    with tf.compat.v1.variable_scope(scope or "embedding_rnn_seq2seq") as scope:
        if dtype is not None:
            scope.set_dtype(dtype)
        else:
            dtype = scope.dtype
        _, encoder_state = _embedding_encoder(
            copy.deepcopy(cell), encoder_inputs, num_encoder_symbols, embedding_size, dtype
        )
        if output_projection is None:
            cell = OutputProjectionWrapper(cell, num_decoder_symbols)

        def build(feed_previous_bool, update_embedding=True):
            return embedding_rnn_decoder(
                decoder_inputs,
                encoder_state,
                cell,
                num_decoder_symbols,
                embedding_size,
                output_projection=output_projection,
                feed_previous=feed_previous_bool,
                update_embedding_for_previous=update_embedding,
            )

        return _decode(build, feed_previous, decoder_inputs, encoder_state)


def embedding_tied_rnn_seq2seq(
    encoder_inputs,
    decoder_inputs,
    cell,
    num_symbols,
    embedding_size,
    num_decoder_symbols=None,
    output_projection=None,
    feed_previous=False,
    dtype=None,
    scope=None,
):
    """``tied_rnn_seq2seq`` on embeddings of one shared ``embedding`` [num_symbols, embedding_size] (scope
    "embedding_tied_rnn_seq2seq"); outputs are projected to ``num_decoder_symbols`` (default ``num_symbols``) unless
    ``output_projection`` is given.

    Returns:
      ``(outputs, state)``.
    """
    with tf.compat.v1.variable_scope(scope or "embedding_tied_rnn_seq2seq", dtype=dtype) as scope:
        dtype = scope.dtype
        if output_projection is not None:
            _check_projection(output_projection, num_symbols, dtype)
        embedding = tf.compat.v1.get_variable("embedding", [num_symbols, embedding_size], dtype=dtype)
        embedded_encoder = [tf.compat.v1.nn.embedding_lookup(embedding, x) for x in encoder_inputs]
        embedded_decoder = [tf.compat.v1.nn.embedding_lookup(embedding, x) for x in decoder_inputs]
        if output_projection is None:
            cell = OutputProjectionWrapper(cell, num_decoder_symbols or num_symbols)

        def build(feed_previous_bool, update_embedding=True):
            loop_function = (
                _extract_argmax_and_embed(embedding, output_projection, update_embedding)
                if feed_previous_bool
                else None
            )
            return tied_rnn_seq2seq(embedded_encoder, embedded_decoder, cell, loop_function=loop_function, dtype=dtype)

        if isinstance(feed_previous, bool):
            return build(feed_previous)
        static_batch = encoder_inputs[0].shape[0]
        for inp in encoder_inputs[1:]:
            static_batch = (
                static_batch.merge_with(inp.shape[0]) if hasattr(static_batch, "merge_with") else static_batch
            )
        batch_size = tf.compat.dimension_value(static_batch)
        if batch_size is None:
            batch_size = tf.shape(encoder_inputs[0])[0]
        return _pick_decoder(
            feed_previous, lambda fp: build(fp, False), decoder_inputs, cell.zero_state(batch_size, dtype)
        )


def embedding_attention_seq2seq(
    encoder_inputs,
    decoder_inputs,
    cell,
    num_encoder_symbols,
    num_decoder_symbols,
    embedding_size,
    num_heads=1,
    output_projection=None,
    feed_previous=False,
    dtype=None,
    scope=None,
    initial_state_attention=False,
):
    """An embedding encoder whose outputs the ``embedding_attention_decoder`` attends to (scope
    "embedding_attention_seq2seq"); without ``output_projection`` the decoder cell projects to
    ``num_decoder_symbols``.

    Args:
      encoder_inputs, decoder_inputs: lists of [batch] int tensors.
      cell: an RNN cell (the encoder gets a copy).
      num_encoder_symbols, num_decoder_symbols, embedding_size: vocabulary sizes and embedding depth.
      num_heads: attention heads.
      output_projection: optional (W, b).
      feed_previous: bool or bool tensor.
      dtype: dtype of the initial state and variables.
      scope: variable scope.
      initial_state_attention: as ``attention_decoder``.

    Returns:
      ``(outputs, state)``.
    """
    with tf.compat.v1.variable_scope(scope or "embedding_attention_seq2seq", dtype=dtype) as scope:
        dtype = scope.dtype
        encoder_outputs, encoder_state = _embedding_encoder(
            copy.deepcopy(cell), encoder_inputs, num_encoder_symbols, embedding_size, dtype
        )
        attention_states = tf.concat([tf.reshape(e, [-1, 1, cell.output_size]) for e in encoder_outputs], 1)
        output_size = None
        if output_projection is None:
            cell = OutputProjectionWrapper(cell, num_decoder_symbols)
            output_size = num_decoder_symbols

        def build(feed_previous_bool, update_embedding=True):
            return embedding_attention_decoder(
                decoder_inputs,
                encoder_state,
                attention_states,
                cell,
                num_decoder_symbols,
                embedding_size,
                num_heads=num_heads,
                output_size=output_size,
                output_projection=output_projection,
                feed_previous=feed_previous_bool,
                update_embedding_for_previous=update_embedding,
                initial_state_attention=initial_state_attention,
            )

        return _decode(build, feed_previous, decoder_inputs, encoder_state)


def one2many_rnn_seq2seq(
    encoder_inputs,
    decoder_inputs_dict,
    enc_cell,
    dec_cells_dict,
    num_encoder_symbols,
    num_decoder_symbols_dict,
    embedding_size,
    feed_previous=False,
    dtype=None,
    scope=None,
):
    """One embedding encoder, several embedding decoders (one per key of ``decoder_inputs_dict``, each in scope
    "one2many_decoder_<key>" with its cell projected to its vocabulary), all in scope "one2many_rnn_seq2seq".

    Returns:
      ``(outputs_dict, state_dict)``.

    Raises:
      NpuArgumentTypeError: a cell is not an RNN cell.
      NpuArgumentError: the keys of the cells and of the inputs differ.
    """
    if not _is_cell(enc_cell):
        raise NpuArgumentTypeError(f"one2many_rnn_seq2seq: enc_cell must be an RNN cell, got {type(enc_cell).__name__}")
    if set(dec_cells_dict) != set(decoder_inputs_dict):
        raise NpuArgumentError(
            f"one2many_rnn_seq2seq: the keys of dec_cells_dict ({sorted(map(str, dec_cells_dict))}) must be those of "
            f"decoder_inputs_dict ({sorted(map(str, decoder_inputs_dict))})"
        )
    for dec_cell in dec_cells_dict.values():
        if not _is_cell(dec_cell):
            raise NpuArgumentTypeError(
                f"one2many_rnn_seq2seq: the cells of dec_cells_dict must be RNN cells, got {type(dec_cell).__name__}"
            )
    outputs_dict, state_dict = {}, {}
    with tf.compat.v1.variable_scope(scope or "one2many_rnn_seq2seq", dtype=dtype) as scope:
        dtype = scope.dtype
        _, encoder_state = _embedding_encoder(enc_cell, encoder_inputs, num_encoder_symbols, embedding_size, dtype)
        for name, decoder_inputs in decoder_inputs_dict.items():
            num_decoder_symbols = num_decoder_symbols_dict[name]
            with tf.compat.v1.variable_scope(f"one2many_decoder_{name}"):
                dec_cell = OutputProjectionWrapper(dec_cells_dict[name], num_decoder_symbols)

                def build(feed_previous_bool, inputs=decoder_inputs, cell=dec_cell, symbols=num_decoder_symbols):
                    return embedding_rnn_decoder(
                        inputs, encoder_state, cell, symbols, embedding_size, feed_previous=feed_previous_bool
                    )

                if isinstance(feed_previous, bool):
                    outputs, state = build(feed_previous)
                else:
                    outputs, state = _pick_decoder(feed_previous, build, decoder_inputs, encoder_state)
            outputs_dict[name] = outputs
            state_dict[name] = state
    return outputs_dict, state_dict


def _is_cell(cell):
    return callable(cell) and hasattr(cell, "output_size") and hasattr(cell, "state_size")
