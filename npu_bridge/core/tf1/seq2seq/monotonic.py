"""Monotonic attention of ``tf.contrib.seq2seq`` (TensorFlow 1.15; Raffel et al., 2017, "Online and Linear-Time
Attention by Enforcing Monotonic Alignments"), for the TF1 mode.

At each output step the decoder scans the memory left to right from where it attended last; p_choose_i (the sigmoid of
the score, plus optional pre-sigmoid noise) is the probability of stopping at memory element i. The expected
alignment is a(i) = p(i) * q(i) with q(i) = (1 - p(i - 1)) * q(i - 1) + a_prev(i) (``monotonic_attention``).
"""

import functools

import numpy as np
import tensorflow as tf

from npu_bridge.core.runtime.errors import NpuArgumentError
from npu_bridge.core.tf1.seq2seq.attention import (
    _BahdanauScoredMechanism,
    _check_units,
    _LuongScoredMechanism,
    _ScoredAttentionMechanism,
)

__all__ = ["BahdanauMonotonicAttention", "LuongMonotonicAttention", "monotonic_attention", "safe_cumprod"]

_MODES = ("recursive", "parallel", "hard")


def safe_cumprod(x, *args, **kwargs):
    """``tf.math.cumprod(x, ...)`` computed as exp(cumsum(log(x))) with x clipped to [tiny, 1], which keeps the
    product and its gradient finite for tiny factors (``tf.contrib.seq2seq.safe_cumprod``). Takes cumprod's
    arguments (``axis``, ``exclusive``, ``reverse``)."""
    with tf.name_scope("SafeCumprod"):
        x = tf.convert_to_tensor(x, name="x")
        tiny = np.finfo(x.dtype.as_numpy_dtype).tiny
        return tf.exp(tf.cumsum(tf.math.log(tf.clip_by_value(x, tiny, 1)), *args, **kwargs))


def monotonic_attention(p_choose_i, previous_attention, mode):
    """The expected monotonic alignment (``tf.contrib.seq2seq.monotonic_attention``).

    Args:
      p_choose_i: [batch, max_time] probabilities of stopping at each memory element.
      previous_attention: [batch, max_time] alignment of the previous output step ([1, 0, ..., 0] at the first).
      mode: "recursive" (the recurrence, exact, with ``tf.scan``), "parallel" (closed form with cumulative sums and
        products, clipped against division by zero) or "hard" (p_choose_i all 0 or 1: exact and fast).

    Returns:
      [batch, max_time] alignments.

    Raises:
      NpuArgumentError: ``mode`` is none of the three.
    """
    p_choose_i = tf.convert_to_tensor(p_choose_i, name="p_choose_i")
    previous_attention = tf.convert_to_tensor(previous_attention, name="previous_attention")
    if mode == "recursive":
        batch_size = tf.compat.dimension_value(p_choose_i.shape[0]) or tf.shape(p_choose_i)[0]
        shifted_1mp = tf.concat([tf.ones((batch_size, 1)), 1 - p_choose_i[:, :-1]], 1)
        q = tf.scan(
            lambda carry, factors: tf.reshape(factors[0] * carry + factors[1], (batch_size,)),
            [tf.transpose(shifted_1mp), tf.transpose(previous_attention)],
            tf.zeros((batch_size,)),
        )
        return p_choose_i * tf.transpose(q)
    if mode == "parallel":
        cumprod_1mp = safe_cumprod(1 - p_choose_i, axis=1, exclusive=True)
        return (
            p_choose_i * cumprod_1mp * tf.cumsum(previous_attention / tf.clip_by_value(cumprod_1mp, 1e-10, 1.0), axis=1)
        )
    if mode == "hard":
        p_choose_i *= tf.cumsum(previous_attention, axis=1)
        return p_choose_i * tf.math.cumprod(1 - p_choose_i, axis=1, exclusive=True)
    raise NpuArgumentError(f"monotonic_attention: mode must be one of {', '.join(_MODES)}, got {mode!r}")


def _monotonic_probability(score, previous_alignments, sigmoid_noise, mode, seed=None):
    if sigmoid_noise > 0:
        score += sigmoid_noise * tf.random.normal(tf.shape(score), dtype=score.dtype, seed=seed)
    p_choose_i = tf.cast(score > 0, score.dtype) if mode == "hard" else tf.sigmoid(score)
    return monotonic_attention(p_choose_i, previous_alignments, mode)


def _check_mode(owner, mode):
    if mode not in _MODES:
        raise NpuArgumentError(f"{owner}: mode must be one of {', '.join(_MODES)}, got {mode!r}")


class _BaseMonotonicAttentionMechanism(_ScoredAttentionMechanism):
    """The monotonic mechanisms: ``owner``'s arguments checked, the scores plus a learned scalar
    ``attention_score_bias`` (initialized to ``score_bias_init``) through ``_monotonic_probability``."""

    def __init__(
        self,
        owner,
        num_units,
        memory,
        memory_sequence_length,
        score_mask_value,
        sigmoid_noise,
        sigmoid_noise_seed,
        score_bias_init,
        mode,
        dtype,
        name,
        with_query_layer=False,
    ):
        _check_units(owner, num_units)
        _check_mode(owner, mode)
        super().__init__(
            num_units,
            memory,
            functools.partial(_monotonic_probability, sigmoid_noise=sigmoid_noise, mode=mode, seed=sigmoid_noise_seed),
            memory_sequence_length,
            score_mask_value,
            dtype,
            custom_key_value_fn=None,
            name=name,
            with_query_layer=with_query_layer,
        )
        self._score_bias_init = score_bias_init

    def _score(self, query):
        # The bias has the scores' dtype, which is the query's (the scores' ops take one dtype).
        score = super()._score(query)
        score += tf.compat.v1.get_variable("attention_score_bias", dtype=score.dtype, initializer=self._score_bias_init)
        return score

    def initial_alignments(self, batch_size, dtype):
        """[batch_size, max_time], all attention on the first memory element."""
        return tf.one_hot(tf.zeros((batch_size,), dtype=tf.int32), self._alignments_size, dtype=dtype)


class BahdanauMonotonicAttention(_BaseMonotonicAttentionMechanism, _BahdanauScoredMechanism):
    """Monotonic attention on Bahdanau scores plus a learned scalar ``attention_score_bias``
    (``tf.contrib.seq2seq.BahdanauMonotonicAttention``). Variables in ``bahdanau_monotonic_attention/``.

    Args:
      num_units, memory, memory_sequence_length, normalize, score_mask_value, dtype, name: as ``BahdanauAttention``.
      sigmoid_noise: standard deviation of the noise added to the scores before the sigmoid.
      sigmoid_noise_seed: its seed.
      score_bias_init: initial value of ``attention_score_bias``.
      mode: "parallel", "recursive" or "hard" (``monotonic_attention``).
    """

    _scope = "bahdanau_monotonic_attention"

    def __init__(
        self,
        num_units,
        memory,
        memory_sequence_length=None,
        normalize=False,
        score_mask_value=None,
        sigmoid_noise=0.0,
        sigmoid_noise_seed=None,
        score_bias_init=0.0,
        mode="parallel",
        dtype=None,
        name="BahdanauMonotonicAttention",
    ):
        super().__init__(
            "BahdanauMonotonicAttention",
            num_units,
            memory,
            memory_sequence_length,
            score_mask_value,
            sigmoid_noise,
            sigmoid_noise_seed,
            score_bias_init,
            mode,
            dtype,
            name,
            with_query_layer=True,
        )
        self._normalize = normalize


class LuongMonotonicAttention(_BaseMonotonicAttentionMechanism, _LuongScoredMechanism):
    """Monotonic attention on Luong scores plus a learned scalar ``attention_score_bias``
    (``tf.contrib.seq2seq.LuongMonotonicAttention``). Variables in ``luong_monotonic_attention/``.

    Args:
      num_units, memory, memory_sequence_length, scale, score_mask_value, dtype, name: as ``LuongAttention``.
      sigmoid_noise, sigmoid_noise_seed, score_bias_init, mode: as ``BahdanauMonotonicAttention``.
    """

    _scope = "luong_monotonic_attention"

    def __init__(
        self,
        num_units,
        memory,
        memory_sequence_length=None,
        scale=False,
        score_mask_value=None,
        sigmoid_noise=0.0,
        sigmoid_noise_seed=None,
        score_bias_init=0.0,
        mode="parallel",
        dtype=None,
        name="LuongMonotonicAttention",
    ):
        super().__init__(
            "LuongMonotonicAttention",
            num_units,
            memory,
            memory_sequence_length,
            score_mask_value,
            sigmoid_noise,
            sigmoid_noise_seed,
            score_bias_init,
            mode,
            dtype,
            name,
        )
        self._scale = scale
