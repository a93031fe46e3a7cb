"""The attention mechanisms of ``tf.contrib.seq2seq`` (TensorFlow 1.15), for the TF1 mode: Bahdanau (additive) and
Luong (multiplicative) attention over an encoder's memory, and ``hardmax``.

A mechanism holds the memory (the encoder outputs [batch, max_time, depth], zeroed beyond
``memory_sequence_length``) as ``values`` and their projection by ``memory_layer`` (a bias-free ``Dense`` named
"memory_layer") as ``keys``. Called with a query [batch, query_depth] and its previous state it returns the alignments
[batch, max_time] (``probability_fn`` of the scores, softmax by default, positions beyond the memory's length scored
``score_mask_value``, -inf by default) and its next state (the alignments again). Variables, as TensorFlow 1.15 named
them: ``memory_layer/kernel`` where the mechanism is built; ``bahdanau_attention/query_layer/kernel``,
``bahdanau_attention/attention_v`` (and ``attention_g``, ``attention_b`` with ``normalize``) or
``luong_attention/attention_g`` (with ``scale``) where it is called.
"""

import math

import numpy as np
import tensorflow as tf
from tensorflow.python.util import nest

from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError

__all__ = ["AttentionMechanism", "BahdanauAttention", "LuongAttention", "hardmax"]


class AttentionMechanism:
    """The base class of attention mechanisms (``tf.contrib.seq2seq.AttentionMechanism``)."""

    @property
    def alignments_size(self):
        raise NotImplementedError

    @property
    def state_size(self):
        raise NotImplementedError


def _masked_memory(memory, memory_sequence_length, check_inner_dims_defined):
    memory = nest.map_structure(lambda m: tf.convert_to_tensor(m, name="memory"), memory)
    if check_inner_dims_defined:
        for m in nest.flatten(memory):
            if not m.shape[2:].is_fully_defined():
                raise NpuArgumentError(
                    f"memory {m.name} must have fully defined inner dimensions (all but batch and time), got shape "
                    f"{m.shape}"
                )
    if memory_sequence_length is None:
        return memory
    first = nest.flatten(memory)[0]
    lengths = tf.convert_to_tensor(memory_sequence_length, name="memory_sequence_length")
    mask = tf.sequence_mask(lengths, maxlen=tf.shape(first)[1], dtype=first.dtype)

    def masked(m):
        rank = m.shape.rank if m.shape.rank is not None else tf.rank(m)
        trailing = tf.ones(rank - 2, dtype=tf.int32)
        return m * tf.reshape(mask, tf.concat((tf.shape(mask), trailing), 0))

    return nest.map_structure(masked, memory)


def _masked_score(score, memory_sequence_length, score_mask_value):
    if memory_sequence_length is None:
        return score
    message = "All values in memory_sequence_length must be greater than zero."
    with tf.control_dependencies([tf.compat.v1.assert_positive(memory_sequence_length, message=message)]):
        mask = tf.sequence_mask(memory_sequence_length, maxlen=tf.shape(score)[1])
    return tf.compat.v1.where(mask, score, score_mask_value * tf.ones_like(score))


class _BaseAttentionMechanism(AttentionMechanism):
    """Memory, keys, masking and the initial alignments (zeros) shared by the mechanisms.

    Args:
      query_layer: optional layer applied to the query.
      memory: [batch, max_time, ...] tensor.
      probability_fn: ``(score, previous_alignments) -> alignments``.
      memory_sequence_length: optional [batch] lengths of the memory.
      memory_layer: optional layer making the keys of the memory.
      check_inner_dims_defined: require the memory's inner dimensions to be known.
      score_mask_value: the score of positions beyond the memory's length (default -inf).
      custom_key_value_fn: optional ``(keys, values) -> (keys, values)``.
      name: name scope of the memory's ops.
    """

    def __init__(
        self,
        query_layer,
        memory,
        probability_fn,
        memory_sequence_length=None,
        memory_layer=None,
        check_inner_dims_defined=True,
        score_mask_value=None,
        custom_key_value_fn=None,
        name=None,
    ):
        for argument, layer in (("query_layer", query_layer), ("memory_layer", memory_layer)):
            if layer is not None and not callable(layer):
                raise NpuArgumentTypeError(f"{argument} must be a layer, got {type(layer).__name__}")
        if not callable(probability_fn):
            raise NpuArgumentTypeError(f"probability_fn must be callable, got {type(probability_fn).__name__}")
        self._query_layer = query_layer
        self._memory_layer = memory_layer
        self.dtype = memory_layer.dtype
        if score_mask_value is None:
            score_mask_value = tf.as_dtype(memory_layer.dtype).as_numpy_dtype(-np.inf)
        self._probability_fn = lambda score, previous: probability_fn(
            _masked_score(score, memory_sequence_length, score_mask_value), previous
        )
        with tf.name_scope(name or "BaseAttentionMechanismInit"):
            self._values = _masked_memory(memory, memory_sequence_length, check_inner_dims_defined)
            self._keys = self._memory_layer(self._values) if self._memory_layer else self._values
            if custom_key_value_fn is not None:
                self._keys, self._values = custom_key_value_fn(self._keys, self._values)
            self._batch_size = tf.compat.dimension_value(self._keys.shape[0]) or tf.shape(self._keys)[0]
            self._alignments_size = tf.compat.dimension_value(self._keys.shape[1]) or tf.shape(self._keys)[1]

    @property
    def memory_layer(self):
        return self._memory_layer

    @property
    def query_layer(self):
        return self._query_layer

    @property
    def values(self):
        """The (masked) memory."""
        return self._values

    @property
    def keys(self):
        """The memory after ``memory_layer``."""
        return self._keys

    @property
    def batch_size(self):
        return self._batch_size

    @property
    def alignments_size(self):
        return self._alignments_size

    @property
    def state_size(self):
        return self._alignments_size

    def initial_alignments(self, batch_size, dtype):
        """Zeros [batch_size, max_time]."""
        return tf.zeros(tf.stack([batch_size, self._alignments_size]), dtype=dtype)

    def initial_state(self, batch_size, dtype):
        """The initial attention state: the initial alignments."""
        return self.initial_alignments(batch_size, dtype)


def _check_units(owner, num_units):
    if isinstance(num_units, bool) or not isinstance(num_units, (int, np.integer)) or num_units <= 0:
        raise NpuArgumentError(f"{owner}: num_units must be a positive int, got {num_units!r}")


def luong_score(query, keys, scale):
    """score[b, t] = scale * <query[b], keys[b, t]> (no scale when ``scale`` is None)."""
    depth, key_units = tf.compat.dimension_value(query.shape[-1]), tf.compat.dimension_value(keys.shape[-1])
    if depth is not None and key_units is not None and depth != key_units:
        raise NpuArgumentError(
            f"Luong attention: the query has {depth} units and the keys {key_units}: they must be equal (set num_units "
            f"to the query's depth, {depth})"
        )
    score = tf.squeeze(tf.matmul(tf.expand_dims(query, 1), keys, transpose_b=True), [1])
    return score if scale is None else scale * score


def bahdanau_score(processed_query, keys, attention_v, attention_g=None, attention_b=None):
    """score[b, t] = sum(v * tanh(keys[b, t] + query[b] (+ b))), v weight-normalized to g * v / |v| when g is given."""
    processed_query = tf.expand_dims(processed_query, 1)
    if attention_g is not None and attention_b is not None:
        normed_v = attention_g * attention_v * tf.math.rsqrt(tf.reduce_sum(tf.square(attention_v)))
        return tf.reduce_sum(normed_v * tf.tanh(keys + processed_query + attention_b), [2])
    return tf.reduce_sum(attention_v * tf.tanh(keys + processed_query), [2])


def bahdanau_variables(num_units, normalize, dtype):
    """``attention_v`` and, with ``normalize``, ``attention_g`` (sqrt(1 / num_units)) and ``attention_b`` (zeros)."""
    attention_v = tf.compat.v1.get_variable("attention_v", [num_units], dtype=dtype)
    if not normalize:
        return attention_v, None, None
    attention_g = tf.compat.v1.get_variable(
        "attention_g", dtype=dtype, initializer=tf.compat.v1.constant_initializer(math.sqrt(1.0 / num_units)), shape=()
    )
    attention_b = tf.compat.v1.get_variable(
        "attention_b", [num_units], dtype=dtype, initializer=tf.compat.v1.zeros_initializer()
    )
    return attention_v, attention_g, attention_b


def luong_scale(scale, dtype):
    """The ``attention_g`` scalar (initialized to 1) when ``scale``, else None."""
    if not scale:
        return None
    return tf.compat.v1.get_variable("attention_g", dtype=dtype, initializer=tf.compat.v1.ones_initializer, shape=())


def _dense(num_units, name, dtype):
    return tf.compat.v1.layers.Dense(num_units, name=name, use_bias=False, dtype=dtype)


def _scores_only(probability_fn):
    """``probability_fn`` of the scores (softmax by default) as a ``(score, previous_alignments)`` function."""
    probability_fn = probability_fn or tf.nn.softmax
    return lambda score, _: probability_fn(score)


class _ScoredAttentionMechanism(_BaseAttentionMechanism):
    """A mechanism of ``num_units`` whose keys come from a bias-free ``Dense`` named "memory_layer" (and, with
    ``with_query_layer``, whose queries go through one named "query_layer") in ``dtype`` (default float32); a call
    scores the query with ``_score`` in a variable scope named ``_scope`` and returns the alignments as the next
    state too."""

    _scope = None

    def __init__(
        self,
        num_units,
        memory,
        probability_fn,
        memory_sequence_length,
        score_mask_value,
        dtype,
        custom_key_value_fn,
        name,
        with_query_layer=False,
    ):
        dtype = dtype or tf.float32
        super().__init__(
            query_layer=_dense(num_units, "query_layer", dtype) if with_query_layer else None,
            memory_layer=_dense(num_units, "memory_layer", dtype),
            memory=memory,
            probability_fn=probability_fn,
            memory_sequence_length=memory_sequence_length,
            score_mask_value=score_mask_value,
            custom_key_value_fn=custom_key_value_fn,
            name=name,
        )
        self._num_units = num_units
        self._name = name

    def _score(self, query):
        """The [batch, max_time] scores of ``query``."""
        raise NotImplementedError

    def __call__(self, query, state):
        """Returns ``(alignments, next_state)`` for ``query`` [batch, query_depth]; ``state`` is the previous
        alignments."""
        with tf.compat.v1.variable_scope(None, self._scope, [query]):
            score = self._score(query)
        alignments = self._probability_fn(score, state)
        return alignments, alignments


class _LuongScoredMechanism(_ScoredAttentionMechanism):
    """Scores ``luong_score`` (times ``attention_g`` with ``_scale``)."""

    def _score(self, query):
        return luong_score(query, self._keys, luong_scale(self._scale, query.dtype))


class _BahdanauScoredMechanism(_ScoredAttentionMechanism):
    """Scores ``bahdanau_score`` of the query through ``query_layer`` (weight-normalized with ``_normalize``)."""

    def _score(self, query):
        processed_query = self.query_layer(query) if self.query_layer else query
        return bahdanau_score(
            processed_query, self._keys, *bahdanau_variables(self._num_units, self._normalize, query.dtype)
        )


class LuongAttention(_LuongScoredMechanism):
    """Multiplicative attention (Luong et al., 2015): score = query . keys, optionally times a learned scalar
    ``attention_g`` (``scale=True``) (``tf.contrib.seq2seq.LuongAttention``).

    Args:
      num_units: depth of the keys; must equal the query's depth.
      memory: [batch, max_time, depth] encoder outputs.
      memory_sequence_length: optional [batch] lengths.
      scale: learn a scalar factor of the scores.
      probability_fn: function of the scores (default softmax).
      score_mask_value: score beyond the memory's length (default -inf).
      dtype: dtype of the layers (default float32).
      custom_key_value_fn: optional ``(keys, values) -> (keys, values)``.
      name: name scope.
    """

    _scope = "luong_attention"

    def __init__(
        self,
        num_units,
        memory,
        memory_sequence_length=None,
        scale=False,
        probability_fn=None,
        score_mask_value=None,
        dtype=None,
        custom_key_value_fn=None,
        name="LuongAttention",
    ):
        _check_units("LuongAttention", num_units)
        super().__init__(
            num_units,
            memory,
            _scores_only(probability_fn),
            memory_sequence_length,
            score_mask_value,
            dtype,
            custom_key_value_fn,
            name,
        )
        self._scale = scale


class BahdanauAttention(_BahdanauScoredMechanism):
    """Additive attention (Bahdanau et al., 2015): score = v . tanh(keys + query_layer(query)), optionally
    weight-normalized (``normalize=True``, Salimans and Kingma, 2016) (``tf.contrib.seq2seq.BahdanauAttention``).

    Args:
      num_units: depth of the query and memory layers.
      memory: [batch, max_time, depth] encoder outputs.
      memory_sequence_length: optional [batch] lengths.
      normalize: weight normalization of ``attention_v``.
      probability_fn: function of the scores (default softmax).
      score_mask_value: score beyond the memory's length (default -inf).
      dtype: dtype of the layers (default float32).
      custom_key_value_fn: optional ``(keys, values) -> (keys, values)``.
      name: name scope.
    """

    _scope = "bahdanau_attention"

    def __init__(
        self,
        num_units,
        memory,
        memory_sequence_length=None,
        normalize=False,
        probability_fn=None,
        score_mask_value=None,
        dtype=None,
        custom_key_value_fn=None,
        name="BahdanauAttention",
    ):
        _check_units("BahdanauAttention", num_units)
        super().__init__(
            num_units,
            memory,
            _scores_only(probability_fn),
            memory_sequence_length,
            score_mask_value,
            dtype,
            custom_key_value_fn,
            name,
            with_query_layer=True,
        )
        self._normalize = normalize


def hardmax(logits, name=None):
    """One-hot of the argmax over the last axis, in the dtype of ``logits`` (``tf.contrib.seq2seq.hardmax``)."""
    with tf.name_scope(name or "Hardmax"):
        logits = tf.convert_to_tensor(logits, name="logits")
        depth = tf.compat.dimension_value(logits.shape[-1])
        if depth is None:
            depth = tf.shape(logits)[-1]
        return tf.one_hot(tf.argmax(logits, -1), depth, dtype=logits.dtype)
