"""``BeamSearchDecoder`` and ``tile_batch`` of ``tf.contrib.seq2seq`` (TensorFlow 1.15), for the TF1 mode.

The decoder keeps ``beam_width`` hypotheses per batch entry. Each step runs the cell on all batch * beam entries,
adds the log softmax of the logits to each beam's log probability (a finished beam can only continue with
``end_token``, at no cost), scores every (beam, word) pair as log_prob / length_penalty (+ coverage penalty) with
length_penalty = ((5 + length) / 6) ** length_penalty_weight (Wu et al., 2016), keeps the ``beam_width`` best, and
gathers the cell states of the beams they continue. ``finalize`` follows the parents back (``gather_tree``).
``BeamSearchDecoderV2`` is 1.15's callable form: configured once, called with the embedding, start tokens, end
token and initial state, it decodes at once. This module is also upstream's
``contrib.seq2seq.python.ops.beam_search_decoder``.
"""

import collections

import numpy as np
import tensorflow as tf
from tensorflow.python.util import nest

from npu_bridge.core.runtime import log
from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError
from npu_bridge.core.tf1.seq2seq.attention_wrapper import AttentionWrapperState
from npu_bridge.core.tf1.seq2seq.basic_decoder import check_cell, check_layer, projected_output_size
from npu_bridge.core.tf1.seq2seq.beam_search_ops import gather_tree
from npu_bridge.core.tf1.seq2seq.beam_tiling import (
    _check_batch_beam,
    _check_rank_known,
    gather_tree_from_array,
    tile_batch,
)
from npu_bridge.core.tf1.seq2seq.decoder import Decoder, dynamic_decode

__all__ = [
    "BeamSearchDecoder",
    "BeamSearchDecoderOutput",
    "BeamSearchDecoderV2",
    "BeamSearchDecoderState",
    "FinalBeamSearchDecoderOutput",
    "gather_tree_from_array",
    "tile_batch",
]


class BeamSearchDecoderState(
    collections.namedtuple(
        "BeamSearchDecoderState", ("cell_state", "log_probs", "finished", "lengths", "accumulated_attention_probs")
    )
):
    """The loop state of a ``BeamSearchDecoder``: cell state [batch, beam, ...], log probabilities, finished flags
    and lengths [batch, beam], accumulated attention (coverage penalty only, else ``()``)."""


class BeamSearchDecoderOutput(
    collections.namedtuple("BeamSearchDecoderOutput", ("scores", "predicted_ids", "parent_ids"))
):
    """One step of a ``BeamSearchDecoder``: the scores, tokens and parent beams of the kept hypotheses."""


class FinalBeamSearchDecoderOutput(
    collections.namedtuple("FinalBeamDecoderOutput", ["predicted_ids", "beam_search_decoder_output"])
):
    """What ``dynamic_decode`` returns for a ``BeamSearchDecoder``: ``predicted_ids`` [batch, time, beam] (the full
    beams, best first) and the raw per-step ``BeamSearchDecoderOutput``."""


class BeamSearchDecoder(Decoder):
    """Beam search decoding (``tf.contrib.seq2seq.BeamSearchDecoder``).

    The memory of an attention cell and ``initial_state`` must be tiled to batch * beam_width (``tile_batch``).
    With ``dynamic_decode`` it returns ``FinalBeamSearchDecoderOutput``: ``predicted_ids`` [batch, time, beam]
    (beam 0 the best) and the per-step ``beam_search_decoder_output``.

    Args:
      cell: an RNN cell.
      embedding: a [vocab, depth] embedding or a function of ids.
      start_tokens: [batch_size] int32.
      end_token: int32 scalar.
      initial_state: the cell state for batch_size * beam_width entries.
      beam_width: int.
      output_layer: optional layer on the cell output (to the vocabulary).
      length_penalty_weight: float, 0 for none.
      coverage_penalty_weight: float, 0 for none (else the cell must be an ``AttentionWrapper``).
      reorder_tensor_arrays: reorder TensorArrays of the final cell state (alignment history) along the beams.

    Raises:
      NpuArgumentTypeError: ``cell`` or ``output_layer`` has the wrong type.
      NpuArgumentError: ``start_tokens`` is not a vector or ``end_token`` not a scalar.
    """

    def __init__(
        self,
        cell,
        embedding,
        start_tokens,
        end_token,
        initial_state,
        beam_width,
        output_layer=None,
        length_penalty_weight=0.0,
        coverage_penalty_weight=0.0,
        reorder_tensor_arrays=True,
    ):
        check_cell("BeamSearchDecoder", cell)
        check_layer("BeamSearchDecoder", output_layer)
        self._cell = cell
        self._output_layer = output_layer
        self._reorder_tensor_arrays = reorder_tensor_arrays
        self._beam_width = beam_width
        self._length_penalty_weight = length_penalty_weight
        self._coverage_penalty_weight = coverage_penalty_weight
        if callable(embedding):
            self._embedding_fn = embedding
        else:
            self._embedding_fn = lambda ids: tf.compat.v1.nn.embedding_lookup(embedding, ids)
        start_tokens = tf.convert_to_tensor(start_tokens, dtype=tf.int32, name="start_tokens")
        if start_tokens.shape.rank != 1:
            raise NpuArgumentError(
                f"BeamSearchDecoder: start_tokens must be a vector [batch_size], got shape {start_tokens.shape}"
            )
        self._end_token = tf.convert_to_tensor(end_token, dtype=tf.int32, name="end_token")
        if self._end_token.shape.rank != 0:
            raise NpuArgumentError(f"BeamSearchDecoder: end_token must be a scalar, got shape {self._end_token.shape}")
        self._batch_size = tf.size(start_tokens)
        self._initial_cell_state = nest.map_structure(self._maybe_split, initial_state, self._cell.state_size)
        self._start_tokens = tf.tile(tf.expand_dims(start_tokens, 1), [1, beam_width])
        self._start_inputs = self._embedding_fn(self._start_tokens)
        self._finished = tf.one_hot(
            tf.zeros([self._batch_size], dtype=tf.int32),
            depth=beam_width,
            on_value=False,
            off_value=True,
            dtype=tf.bool,
        )

    @property
    def batch_size(self):
        return self._batch_size

    @property
    def tracks_own_finished(self):
        """True: beams are reordered every step, so the decoder keeps the finished flags itself."""
        return True

    @property
    def output_size(self):
        shape = tf.TensorShape([self._beam_width])
        return BeamSearchDecoderOutput(scores=shape, predicted_ids=shape, parent_ids=shape)

    @property
    def output_dtype(self):
        dtype = nest.flatten(self._initial_cell_state)[0].dtype
        return BeamSearchDecoderOutput(
            scores=nest.map_structure(lambda _: dtype, projected_output_size(self._cell, self._output_layer)),
            predicted_ids=tf.int32,
            parent_ids=tf.int32,
        )

    def initialize(self, name=None):
        """Returns ``(finished, start_inputs, initial BeamSearchDecoderState)``: only beam 0 is live (log
        probability 0, the others -inf), so the first step does not pick the same word beam_width times."""
        dtype = nest.flatten(self._initial_cell_state)[0].dtype
        log_probs = tf.one_hot(
            tf.zeros([self._batch_size], dtype=tf.int32),
            depth=self._beam_width,
            on_value=tf.convert_to_tensor(0.0, dtype=dtype),
            off_value=tf.convert_to_tensor(-np.inf, dtype=dtype),
            dtype=dtype,
        )
        attention = _attention_probs(self._initial_cell_state, self._coverage_penalty_weight)
        state = BeamSearchDecoderState(
            cell_state=self._initial_cell_state,
            log_probs=log_probs,
            finished=self._finished,
            lengths=tf.zeros([self._batch_size, self._beam_width], dtype=tf.int64),
            accumulated_attention_probs=() if attention is None else attention,
        )
        return self._finished, self._start_inputs, state

    def finalize(self, outputs, final_state, sequence_lengths):
        """Follows the parents back: ``FinalBeamSearchDecoderOutput`` and the state with reordered TensorArrays."""
        del sequence_lengths
        max_lengths = tf.cast(tf.reduce_max(final_state.lengths, axis=1), tf.int32)
        predicted_ids = gather_tree(outputs.predicted_ids, outputs.parent_ids, max_lengths, self._end_token)
        if self._reorder_tensor_arrays:
            final_state = final_state._replace(
                cell_state=nest.map_structure(
                    lambda t: self._maybe_sort_array_beams(t, outputs.parent_ids, final_state.lengths),
                    final_state.cell_state,
                )
            )
        return FinalBeamSearchDecoderOutput(
            beam_search_decoder_output=outputs, predicted_ids=predicted_ids
        ), final_state

    def _merge(self, t, s):
        """[batch, beam, ...] -> [batch * beam, ...]."""
        s = tf.TensorShape(tf.get_static_value(s)) if isinstance(s, tf.Tensor) else tf.TensorShape(s)
        static_batch = tf.get_static_value(self._batch_size)
        merged = tf.reshape(t, tf.concat(([self._batch_size * self._beam_width], tf.shape(t)[2:]), 0))
        merged.set_shape(
            tf.TensorShape([None if static_batch is None else static_batch * self._beam_width]).concatenate(s)
        )
        return merged

    def _split(self, t, s):
        """[batch * beam, ...] -> [batch, beam, ...]."""
        s = tf.TensorShape(tf.get_static_value(s)) if isinstance(s, tf.Tensor) else tf.TensorShape(s)
        split = tf.reshape(t, tf.concat(([self._batch_size, self._beam_width], tf.shape(t)[1:]), 0))
        expected = tf.TensorShape([tf.get_static_value(self._batch_size), self._beam_width]).concatenate(s)
        if not split.shape.is_compatible_with(expected):
            raise NpuArgumentError(
                f"BeamSearchDecoder: a state of shape {split.shape} does not reshape to (batch_size, beam_width, "
                f"depth) == {expected}; did you create the zero_state with batch_size=encoder_batch_size * "
                "beam_width?"
            )
        split.set_shape(expected)
        return split

    def _maybe_split(self, t, s):
        if isinstance(t, tf.TensorArray):
            return t
        _check_rank_known(t)
        return self._split(t, s) if t.shape.rank >= 1 else t

    def _maybe_merge(self, t, s):
        if isinstance(t, tf.TensorArray):
            return t
        _check_rank_known(t)
        return self._merge(t, s) if t.shape.rank >= 2 else t

    def _maybe_sort_array_beams(self, t, parent_ids, sequence_length):
        if not isinstance(t, tf.TensorArray):
            return t
        shape = t.element_shape
        if shape.rank is None or shape.rank < 1:
            log.logger.warning(
                "The TensorArray %s in the cell state is not amenable to sorting based on the beam search result "
                "(its elements need a known shape of rank 1 or more, saw %s)",
                t.handle.name,
                shape,
            )
            return t
        static_batch = tf.get_static_value(self._batch_size)
        dims = [tf.compat.dimension_value(d) for d in shape]
        if (
            static_batch is not None
            and dims[0] is not None
            and (
                dims[0] != static_batch * self._beam_width
                or (len(dims) >= 2 and dims[1] is not None and (dims[0] != static_batch or dims[1] != self._beam_width))
            )
        ):
            log.logger.warning(
                "TensorArray reordering expects elements to be reshapable to [batch_size, beam_width, -1], which is "
                "incompatible with the shape %s; set reorder_tensor_arrays=False to disable it",
                shape,
            )
            return t
        stacked = t.stack()
        with tf.control_dependencies([_check_batch_beam(stacked, self._batch_size, self._beam_width)]):
            return gather_tree_from_array(stacked, parent_ids, sequence_length)

    def step(self, time, inputs, state, name=None):
        """One beam search step: ``(BeamSearchDecoderOutput, BeamSearchDecoderState, next_inputs, finished)``."""
        with tf.name_scope(name or "BeamSearchDecoderStep"):
            inputs = nest.map_structure(lambda inp: self._merge(inp, inp.shape[2:]), inputs)
            cell_state = nest.map_structure(self._maybe_merge, state.cell_state, self._cell.state_size)
            cell_outputs, next_cell_state = self._cell(inputs, cell_state)
            cell_outputs = nest.map_structure(lambda out: self._split(out, out.shape[1:]), cell_outputs)
            next_cell_state = nest.map_structure(self._maybe_split, next_cell_state, self._cell.state_size)
            if self._output_layer is not None:
                cell_outputs = self._output_layer(cell_outputs)
            output, next_state = _beam_search_step(
                time=time,
                logits=cell_outputs,
                next_cell_state=next_cell_state,
                beam_state=state,
                batch_size=self._batch_size,
                beam_width=self._beam_width,
                end_token=self._end_token,
                length_penalty_weight=self._length_penalty_weight,
                coverage_penalty_weight=self._coverage_penalty_weight,
            )
            finished = next_state.finished
            sample_ids = output.predicted_ids
            next_inputs = tf.compat.v1.cond(
                tf.reduce_all(finished), lambda: self._start_inputs, lambda: self._embedding_fn(sample_ids)
            )
        return output, next_state, next_inputs, finished


class BeamSearchDecoderV2:
    """Beam search configured first and run when called (TensorFlow 1.15's ``BeamSearchDecoderV2``).

    ``decoder(embedding, start_tokens, end_token, initial_state)`` builds a ``BeamSearchDecoder`` of this
    configuration and runs ``dynamic_decode`` on it, returning ``(FinalBeamSearchDecoderOutput,
    BeamSearchDecoderState, sequence lengths)``.

    Args:
      cell, beam_width, output_layer, length_penalty_weight, coverage_penalty_weight, reorder_tensor_arrays: as
        for ``BeamSearchDecoder``.
      embedding_fn: a function of ids; when given, the ``embedding`` of the call is ignored.
      output_time_major, impute_finished, maximum_iterations, parallel_iterations, swap_memory: passed to
        ``dynamic_decode``.
      **kwargs: the Keras layer arguments 1.15 took (``name``, ``dtype``, ...); unused.

    Raises:
      NpuArgumentTypeError: ``cell`` or ``output_layer`` has the wrong type.
    """

    def __init__(
        self,
        cell,
        beam_width,
        embedding_fn=None,
        output_layer=None,
        length_penalty_weight=0.0,
        coverage_penalty_weight=0.0,
        reorder_tensor_arrays=True,
        output_time_major=False,
        impute_finished=False,
        maximum_iterations=None,
        parallel_iterations=32,
        swap_memory=False,
        **kwargs,
    ):
        del kwargs
        check_cell("BeamSearchDecoderV2", cell)
        check_layer("BeamSearchDecoderV2", output_layer)
        if embedding_fn is not None and not callable(embedding_fn):
            raise NpuArgumentTypeError(f"BeamSearchDecoderV2: embedding_fn must be callable, got {embedding_fn!r}")
        self.cell = cell
        self._embedding_fn = embedding_fn
        self._decoder_arguments = {
            "beam_width": beam_width,
            "output_layer": output_layer,
            "length_penalty_weight": length_penalty_weight,
            "coverage_penalty_weight": coverage_penalty_weight,
            "reorder_tensor_arrays": reorder_tensor_arrays,
        }
        self._decode_arguments = {
            "output_time_major": output_time_major,
            "impute_finished": impute_finished,
            "maximum_iterations": maximum_iterations,
            "parallel_iterations": parallel_iterations,
            "swap_memory": swap_memory,
        }

    def __call__(self, embedding, start_tokens, end_token, initial_state, training=None, **kwargs):
        """Decodes: ``(final_outputs, final_state, final_sequence_lengths)`` as ``dynamic_decode`` returns them."""
        del training, kwargs
        decoder = BeamSearchDecoder(
            self.cell,
            self._embedding_fn if self._embedding_fn is not None else embedding,
            start_tokens,
            end_token,
            initial_state,
            **self._decoder_arguments,
        )
        return dynamic_decode(decoder, **self._decode_arguments)


def _beam_search_step(
    time,
    logits,
    next_cell_state,
    beam_state,
    batch_size,
    beam_width,
    end_token,
    length_penalty_weight,
    coverage_penalty_weight,
):
    static_batch = tf.get_static_value(batch_size)
    previously_finished = beam_state.finished
    not_finished = tf.logical_not(previously_finished)
    step_log_probs = _mask_probs(tf.nn.log_softmax(logits), end_token, previously_finished)
    total_probs = tf.expand_dims(beam_state.log_probs, 2) + step_log_probs
    vocab_size = tf.compat.dimension_value(logits.shape[-1]) or tf.shape(logits)[-1]
    # every word but end_token adds 1 to the length of a live beam
    lengths_to_add = tf.one_hot(
        tf.fill([batch_size, beam_width], end_token),
        depth=vocab_size,
        on_value=tf.constant(0, tf.int64),
        off_value=tf.constant(1, tf.int64),
        dtype=tf.int64,
    ) * tf.expand_dims(tf.cast(not_finished, tf.int64), 2)
    new_lengths = lengths_to_add + tf.expand_dims(beam_state.lengths, 2)
    accumulated = None
    attention = _attention_probs(next_cell_state, coverage_penalty_weight)
    if attention is not None:
        attention *= tf.expand_dims(tf.cast(not_finished, tf.float32), 2)
        accumulated = beam_state.accumulated_attention_probs + attention
    scores = _scores(
        total_probs, new_lengths, length_penalty_weight, coverage_penalty_weight, previously_finished, accumulated
    )
    scores_flat = tf.reshape(scores, [batch_size, -1])
    next_scores, word_indices = tf.nn.top_k(scores_flat, k=tf.convert_to_tensor(beam_width, tf.int32))
    next_scores.set_shape([static_batch, beam_width])
    word_indices.set_shape([static_batch, beam_width])
    next_log_probs = _gather_beams(
        word_indices, total_probs, batch_size, beam_width * vocab_size, [-1], name="next_beam_probs"
    )
    next_word_ids = tf.cast(tf.math.floormod(word_indices, vocab_size, name="next_beam_word_ids"), tf.int32)
    next_beam_ids = tf.cast(word_indices / vocab_size, tf.int32, name="next_beam_parent_ids")
    previously_finished = _gather_beams(next_beam_ids, previously_finished, batch_size, beam_width, [-1])
    next_finished = tf.logical_or(previously_finished, tf.equal(next_word_ids, end_token), name="next_beam_finished")
    next_lengths = _gather_beams(next_beam_ids, beam_state.lengths, batch_size, beam_width, [-1]) + tf.cast(
        tf.logical_not(previously_finished), tf.int64
    )
    next_accumulated = ()
    if accumulated is not None:
        next_accumulated = _gather_beams(
            next_beam_ids,
            accumulated,
            batch_size,
            beam_width,
            [batch_size * beam_width, -1],
            name="next_accumulated_attention_probs",
        )
    next_cell_state = nest.map_structure(
        lambda t: _maybe_gather_beams(next_beam_ids, t, batch_size, beam_width, [batch_size * beam_width, -1]),
        next_cell_state,
    )
    state = BeamSearchDecoderState(
        cell_state=next_cell_state,
        log_probs=next_log_probs,
        lengths=next_lengths,
        finished=next_finished,
        accumulated_attention_probs=next_accumulated,
    )
    output = BeamSearchDecoderOutput(scores=next_scores, predicted_ids=next_word_ids, parent_ids=next_beam_ids)
    return output, state


def _attention_probs(cell_state, coverage_penalty_weight):
    """The alignments of the attention cells in ``cell_state`` (averaged over cells and mechanisms), or None
    without a coverage penalty."""
    if coverage_penalty_weight == 0.0:
        return None
    per_cell = []
    if isinstance(cell_state, AttentionWrapperState):
        per_cell = [_alignments_of(cell_state)]
    elif isinstance(cell_state, tuple):
        per_cell = [_alignments_of(s) for s in cell_state if isinstance(s, AttentionWrapperState)]
    if not per_cell:
        raise NpuArgumentError(
            f"BeamSearchDecoder: coverage_penalty_weight is {coverage_penalty_weight}, but no cell is an "
            "AttentionWrapper: it must be 0.0"
        )
    if len(per_cell) == 1:
        return per_cell[0]
    return tf.reduce_mean(tf.concat([tf.expand_dims(p, -1) for p in per_cell], -1), -1)


def _alignments_of(attention_state):
    alignments = attention_state.alignments
    if isinstance(alignments, tuple):
        alignments = tf.reduce_mean(tf.concat([tf.expand_dims(a, -1) for a in alignments], -1), -1)
    return alignments


def _scores(log_probs, lengths, length_penalty_weight, coverage_penalty_weight, finished, accumulated):
    scores = log_probs / tf.cast(_length_penalty(lengths, length_penalty_weight), log_probs.dtype)
    coverage_penalty_weight = tf.convert_to_tensor(coverage_penalty_weight, name="coverage_penalty_weight")
    if coverage_penalty_weight.shape.rank != 0:
        raise NpuArgumentError(
            f"BeamSearchDecoder: coverage_penalty_weight must be a scalar, got shape {coverage_penalty_weight.shape}"
        )
    if tf.get_static_value(coverage_penalty_weight) == 0.0:
        return scores
    accumulated = tf.where(tf.equal(accumulated, 0.0), tf.ones_like(accumulated), accumulated)
    coverage = tf.reduce_sum(tf.math.log(tf.minimum(accumulated, 1.0)), 2) * tf.cast(finished, tf.float32)
    return scores + tf.expand_dims(coverage * coverage_penalty_weight, 2)


def _length_penalty(lengths, penalty_factor):
    penalty_factor = tf.convert_to_tensor(penalty_factor, name="penalty_factor")
    penalty_factor.set_shape(())
    static = tf.get_static_value(penalty_factor)
    if static is not None and static == 0:
        return 1.0
    return tf.math.divide((5.0 + tf.cast(lengths, tf.float32)) ** penalty_factor, (5.0 + 1.0) ** penalty_factor)


def _mask_probs(probs, end_token, finished):
    """A finished beam's step log probabilities: 0 for end_token, the dtype's minimum for every other word."""
    vocab_size = tf.shape(probs)[2]
    finished_row = tf.one_hot(
        end_token,
        vocab_size,
        dtype=probs.dtype,
        on_value=tf.convert_to_tensor(0.0, dtype=probs.dtype),
        off_value=probs.dtype.min,
    )
    finished_probs = tf.tile(tf.reshape(finished_row, [1, 1, -1]), tf.concat([tf.shape(finished), [1]], 0))
    finished_mask = tf.tile(tf.expand_dims(finished, 2), [1, 1, vocab_size])
    return tf.where(finished_mask, finished_probs, probs)


def _maybe_gather_beams(indices, t, batch_size, range_size, gather_shape):
    if isinstance(t, tf.TensorArray):
        return t
    _check_rank_known(t)
    if t.shape.rank >= len(gather_shape):
        return _gather_beams(indices, t, batch_size, range_size, gather_shape)
    return t


def _gather_beams(indices, t, batch_size, range_size, gather_shape, name=None):
    """t's rows at ``indices`` [batch, beam] (offsets within each batch entry's ``range_size`` rows)."""
    with tf.name_scope(name or "tensor_gather_helper"):
        offsets = tf.expand_dims(tf.range(batch_size) * range_size, 1)
        flat_indices = tf.reshape(indices + offsets, [-1])
        output = tf.gather(tf.reshape(t, gather_shape), flat_indices)
        final_shape = tf.shape(t)[: 1 + len(gather_shape)]
        static_shape = tf.TensorShape([tf.get_static_value(batch_size)]).concatenate(t.shape[1 : 1 + len(gather_shape)])
        output = tf.reshape(output, final_shape, name="output")
        output.set_shape(static_shape)
        return output
