"""``AttentionWrapper`` of ``tf.contrib.seq2seq`` (TensorFlow 1.15), for the TF1 mode: an RNN cell that attends.

One step of ``AttentionWrapper(cell, mechanism)`` on inputs x and state s:

1. cell_inputs = cell_input_fn(x, s.attention) (default: their concatenation);
2. cell_output, cell_state = cell(cell_inputs, s.cell_state);
3. for each mechanism: alignments = mechanism(cell_output, its previous state); context = alignments @ values;
   attention = attention_layer([cell_output, context]) (a bias-free ``Dense`` named "attention_layer" when
   ``attention_layer_size`` is given) or the context itself;
4. the output is the concatenated attention (``output_attention``, the default) or cell_output.

This module is also upstream's ``contrib.seq2seq.python.ops.attention_wrapper``: it exports the mechanisms too.
"""

import collections

import tensorflow as tf
from tensorflow.python.util import nest

from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError
from npu_bridge.core.tf1.seq2seq.attention import (
    AttentionMechanism,
    BahdanauAttention,
    LuongAttention,
    _BaseAttentionMechanism,
    hardmax,
)
from npu_bridge.core.tf1.seq2seq.basic_decoder import check_cell
from npu_bridge.core.tf1.seq2seq.monotonic import (
    BahdanauMonotonicAttention,
    LuongMonotonicAttention,
    monotonic_attention,
    safe_cumprod,
)

__all__ = [
    "AttentionMechanism",
    "AttentionWrapper",
    "AttentionWrapperState",
    "BahdanauAttention",
    "BahdanauMonotonicAttention",
    "LuongAttention",
    "LuongMonotonicAttention",
    "_BaseAttentionMechanism",
    "hardmax",
    "monotonic_attention",
    "safe_cumprod",
]


class AttentionWrapperState(
    collections.namedtuple(
        "AttentionWrapperState",
        ("cell_state", "attention", "time", "alignments", "alignment_history", "attention_state"),
    )
):
    """The state of an ``AttentionWrapper`` (``tf.contrib.seq2seq.AttentionWrapperState``).

    Fields: ``cell_state`` (the wrapped cell's), ``attention`` [batch, attention size] (the last output attention),
    ``time`` (int32 step), ``alignments`` (one [batch, max_time] per mechanism), ``alignment_history`` (a
    TensorArray of alignments per mechanism with ``alignment_history=True``, else ``()``), ``attention_state`` (each
    mechanism's state). With several mechanisms the per-mechanism fields are tuples.
    """

    def clone(self, **kwargs):
        """A copy with some fields replaced (``state.clone(cell_state=encoder_state)``); a replaced tensor keeps
        the static shape of the one it replaces."""

        def same_shape(old, new):
            if isinstance(old, tf.Tensor) and isinstance(new, tf.Tensor):
                if not old.shape.is_compatible_with(new.shape):
                    raise NpuArgumentError(
                        f"AttentionWrapperState.clone: a new value of shape {new.shape} replaces one of shape "
                        f"{old.shape}; the shapes must be the same"
                    )
                if not tf.executing_eagerly():
                    new.set_shape(old.shape)
            return new

        return nest.map_structure(same_shape, self, super()._replace(**kwargs))


def _compute_attention(attention_mechanism, cell_output, attention_state, attention_layer):
    """Returns ``(attention, alignments, next_attention_state)`` of one mechanism for ``cell_output``."""
    alignments, next_attention_state = attention_mechanism(cell_output, state=attention_state)
    context = tf.squeeze(tf.matmul(tf.expand_dims(alignments, 1), attention_mechanism.values), [1])
    if attention_layer is not None:
        attention = attention_layer(tf.concat([cell_output, context], 1))
    else:
        attention = context
    return attention, alignments, next_attention_state


def _zeros(size, batch_size, dtype):
    shape = tf.TensorShape(size)
    value = tf.zeros(tf.concat([[batch_size], shape.as_list()], 0) if shape.rank else tf.stack([batch_size]), dtype)
    value.set_shape(tf.TensorShape([tf.get_static_value(batch_size)]).concatenate(shape))
    return value


class AttentionWrapper(tf.compat.v1.nn.rnn_cell.RNNCell):
    """An RNN cell with attention over one or more mechanisms (``tf.contrib.seq2seq.AttentionWrapper``).

    Args:
      cell: the RNN cell to wrap.
      attention_mechanism: an ``AttentionMechanism`` or a list of them.
      attention_layer_size: optional int (or one per mechanism): size of the bias-free "attention_layer" applied to
        [cell_output, context]; without it (and without ``attention_layer``) the attention is the context.
      alignment_history: keep every step's alignments in a TensorArray of the state.
      cell_input_fn: ``(inputs, attention) -> cell inputs`` (default: concatenation on the last axis).
      output_attention: output the attention (Luong style, default) or the cell output (Bahdanau style).
      initial_cell_state: the cell state ``zero_state`` starts from (default the cell's zero state).
      name: the cell's name (variable scope).
      attention_layer: optional layer (or one per mechanism) instead of ``attention_layer_size``.
      attention_fn: optional ``(mechanism, cell_output, attention_state, attention_layer) -> (attention,
        alignments, next_attention_state)``.
      dtype: the cell's dtype.

    Raises:
      NpuArgumentTypeError: a mechanism or ``cell_input_fn`` has the wrong type.
      NpuArgumentError: ``attention_layer_size`` and ``attention_layer`` are both given, or their count is not the
        number of mechanisms.
    """

    def __init__(
        self,
        cell,
        attention_mechanism,
        attention_layer_size=None,
        alignment_history=False,
        cell_input_fn=None,
        output_attention=True,
        initial_cell_state=None,
        name=None,
        attention_layer=None,
        attention_fn=None,
        dtype=None,
    ):
        super().__init__(name=name, dtype=dtype)
        check_cell("AttentionWrapper", cell)
        self._is_multi = isinstance(attention_mechanism, (list, tuple))
        mechanisms = tuple(attention_mechanism) if self._is_multi else (attention_mechanism,)
        for mechanism in mechanisms:
            if not isinstance(mechanism, AttentionMechanism):
                raise NpuArgumentTypeError(
                    "AttentionWrapper: attention_mechanism must be an AttentionMechanism or a list of them, got "
                    f"{type(mechanism).__name__}"
                )
        if cell_input_fn is None:
            cell_input_fn = lambda inputs, attention: tf.concat([inputs, attention], -1)  # noqa: E731
        elif not callable(cell_input_fn):
            raise NpuArgumentTypeError(
                f"AttentionWrapper: cell_input_fn must be callable, got {type(cell_input_fn).__name__}"
            )
        if attention_layer_size is not None and attention_layer is not None:
            raise NpuArgumentError(
                "AttentionWrapper: give attention_layer_size or attention_layer, not both "
                f"(got {attention_layer_size!r} and {attention_layer!r})"
            )
        if attention_layer_size is not None:
            sizes = (
                tuple(attention_layer_size)
                if isinstance(attention_layer_size, (list, tuple))
                else (attention_layer_size,)
            )
            _check_count("attention_layer_size", sizes, mechanisms)
            self._attention_layers = tuple(
                tf.compat.v1.layers.Dense(size, name="attention_layer", use_bias=False, dtype=mechanisms[i].dtype)
                for i, size in enumerate(sizes)
            )
            self._attention_layer_size = sum(sizes)
        elif attention_layer is not None:
            layers = tuple(attention_layer) if isinstance(attention_layer, (list, tuple)) else (attention_layer,)
            _check_count("attention_layer", layers, mechanisms)
            self._attention_layers = layers
            self._attention_layer_size = sum(
                tf.compat.dimension_value(
                    layer.compute_output_shape(
                        [None, cell.output_size + tf.compat.dimension_value(mechanism.values.shape[-1])]
                    )[-1]
                )
                for layer, mechanism in zip(layers, mechanisms)
            )
        else:
            self._attention_layers = None
            self._attention_layer_size = sum(tf.compat.dimension_value(m.values.shape[-1]) for m in mechanisms)
        self._attention_fn = attention_fn or _compute_attention
        self._cell = cell
        self._attention_mechanisms = mechanisms
        self._cell_input_fn = cell_input_fn
        self._output_attention = output_attention
        self._alignment_history = alignment_history
        with tf.name_scope(name or "AttentionWrapperInit"):
            if initial_cell_state is None:
                self._initial_cell_state = None
            else:
                last = nest.flatten(initial_cell_state)[-1]
                state_batch = tf.compat.dimension_value(last.shape[0]) or tf.shape(last)[0]
                message = (
                    f"When constructing AttentionWrapper {self._base_name}: Non-matching batch sizes between the "
                    "memory (encoder output) and initial_cell_state.  Are you using the BeamSearchDecoder?  You may "
                    "need to tile your initial state via the tf.contrib.seq2seq.tile_batch function with argument "
                    "multiple=beam_width."
                )
                with tf.control_dependencies(self._batch_size_checks(state_batch, message)):
                    self._initial_cell_state = nest.map_structure(
                        lambda s: tf.identity(s, name="check_initial_cell_state"), initial_cell_state
                    )

    def _batch_size_checks(self, batch_size, message):
        return [
            tf.compat.v1.assert_equal(batch_size, mechanism.batch_size, message=message)
            for mechanism in self._attention_mechanisms
        ]

    def _item_or_tuple(self, seq):
        items = tuple(seq)
        return items if self._is_multi else items[0]

    @property
    def output_size(self):
        return self._attention_layer_size if self._output_attention else self._cell.output_size

    @property
    def state_size(self):
        """An ``AttentionWrapperState`` of sizes (``alignment_history`` holds ``()`` when off)."""
        mechanisms = self._attention_mechanisms
        return AttentionWrapperState(
            cell_state=self._cell.state_size,
            time=tf.TensorShape([]),
            attention=self._attention_layer_size,
            alignments=self._item_or_tuple(m.alignments_size for m in mechanisms),
            attention_state=self._item_or_tuple(m.state_size for m in mechanisms),
            alignment_history=self._item_or_tuple(
                m.alignments_size if self._alignment_history else () for m in mechanisms
            ),
        )

    def zero_state(self, batch_size, dtype):
        """The initial ``AttentionWrapperState``: the cell's zero state (or ``initial_cell_state``), zero attention,
        each mechanism's initial alignments and state, time 0, empty histories.

        ``batch_size`` must be the memory's batch size (the check runs with the graph: use ``tile_batch`` on the
        memory and ``batch_size * beam_width`` with a ``BeamSearchDecoder``).
        """
        with tf.name_scope(type(self).__name__ + "ZeroState"):
            if self._initial_cell_state is not None:
                cell_state = self._initial_cell_state
            else:
                cell_state = self._cell.get_initial_state(batch_size=batch_size, dtype=dtype)
            message = (
                f"When calling zero_state of AttentionWrapper {self._base_name}: Non-matching batch sizes between "
                "the memory (encoder output) and the requested batch size.  Are you using the BeamSearchDecoder?  If "
                "so, make sure your encoder output has been tiled to beam_width via tf.contrib.seq2seq.tile_batch, "
                "and the batch_size= argument passed to zero_state is batch_size * beam_width."
            )
            with tf.control_dependencies(self._batch_size_checks(batch_size, message)):
                cell_state = nest.map_structure(lambda s: tf.identity(s, name="checked_cell_state"), cell_state)
            alignments = [m.initial_alignments(batch_size, dtype) for m in self._attention_mechanisms]
            return AttentionWrapperState(
                cell_state=cell_state,
                time=tf.zeros([], dtype=tf.int32),
                attention=_zeros(self._attention_layer_size, batch_size, dtype),
                alignments=self._item_or_tuple(alignments),
                attention_state=self._item_or_tuple(
                    m.initial_state(batch_size, dtype) for m in self._attention_mechanisms
                ),
                alignment_history=self._item_or_tuple(
                    tf.TensorArray(dtype, size=0, dynamic_size=True, element_shape=a.shape)
                    if self._alignment_history
                    else ()
                    for a in alignments
                ),
            )

    def call(self, inputs, state):
        """One step; returns ``(output, next AttentionWrapperState)``.

        Raises:
          NpuArgumentTypeError: ``state`` is not an ``AttentionWrapperState``.
        """
        if not isinstance(state, AttentionWrapperState):
            raise NpuArgumentTypeError(
                f"AttentionWrapper: state must be an AttentionWrapperState, got {type(state).__name__}"
            )
        cell_inputs = self._cell_input_fn(inputs, state.attention)
        cell_output, next_cell_state = self._cell(cell_inputs, state.cell_state)
        cell_batch = tf.compat.dimension_value(cell_output.shape[0]) or tf.shape(cell_output)[0]
        message = (
            f"When applying AttentionWrapper {self.name}: Non-matching batch sizes between the memory (encoder "
            "output) and the query (decoder output).  Are you using the BeamSearchDecoder?  You may need to tile "
            "your memory input via the tf.contrib.seq2seq.tile_batch function with argument multiple=beam_width."
        )
        with tf.control_dependencies(self._batch_size_checks(cell_batch, message)):
            cell_output = tf.identity(cell_output, name="checked_cell_output")
        if self._is_multi:
            previous_states, previous_histories = state.attention_state, state.alignment_history
        else:
            previous_states, previous_histories = [state.attention_state], [state.alignment_history]
        attentions, all_alignments, attention_states, histories = [], [], [], []
        for i, mechanism in enumerate(self._attention_mechanisms):
            attention, alignments, next_attention_state = self._attention_fn(
                mechanism,
                cell_output,
                previous_states[i],
                self._attention_layers[i] if self._attention_layers else None,
            )
            histories.append(previous_histories[i].write(state.time, alignments) if self._alignment_history else ())
            attention_states.append(next_attention_state)
            all_alignments.append(alignments)
            attentions.append(attention)
        attention = tf.concat(attentions, 1)
        next_state = AttentionWrapperState(
            time=state.time + 1,
            cell_state=next_cell_state,
            attention=attention,
            attention_state=self._item_or_tuple(attention_states),
            alignments=self._item_or_tuple(all_alignments),
            alignment_history=self._item_or_tuple(histories),
        )
        return (attention if self._output_attention else cell_output), next_state


def _check_count(argument, items, mechanisms):
    if len(items) != len(mechanisms):
        raise NpuArgumentError(
            f"AttentionWrapper: {argument} must hold exactly one entry per attention mechanism: got {len(items)} for "
            f"{len(mechanisms)} mechanisms"
        )
