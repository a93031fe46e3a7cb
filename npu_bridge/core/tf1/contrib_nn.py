"""``tf.contrib.nn`` of TensorFlow 1.15, written here on TensorFlow 2.21's ops.

``conv1d_transpose`` and ``nth_element`` are TensorFlow's own (1.15's contrib.nn re-exported them from ``nn_ops``,
with the same signatures); ``alpha_dropout``, the argument-flipped cross entropies, the sampled softmax losses and
``scaled_softplus`` are written from 1.15's documented math.
"""

import numbers

import tensorflow as tf
from tensorflow.python.ops import embedding_ops, nn_impl, nn_ops

from npu_bridge.core.runtime.errors import NpuArgumentError

conv1d_transpose = nn_ops.conv1d_transpose
nth_element = nn_ops.nth_element

_v1 = tf.compat.v1
# the value alpha dropout sets dropped units to: -scale * alpha of SELU (Klambauer et al., 2017)
_SELU_SATURATION = -1.7580993408473766

__all__ = [
    "alpha_dropout",
    "conv1d_transpose",
    "deprecated_flipped_sigmoid_cross_entropy_with_logits",
    "deprecated_flipped_softmax_cross_entropy_with_logits",
    "deprecated_flipped_sparse_softmax_cross_entropy_with_logits",
    "nth_element",
    "rank_sampled_softmax_loss",
    "sampled_sparse_softmax_loss",
    "scaled_softplus",
]


def alpha_dropout(x, keep_prob, noise_shape=None, seed=None, name=None):
    """Alpha dropout: dropout that keeps the mean and variance of a zero-mean, unit-variance input (SELU networks).

    A dropped unit becomes ``alpha' = -1.7580993408473766``; then every unit is mapped to ``a * x + b`` with
    ``a = (p + p * (1 - p) * alpha'**2) ** -0.5`` and ``b = -a * alpha' * (1 - p)``, ``p = keep_prob``.

    Args:
      x: a float tensor.
      keep_prob: the probability to keep a unit: a float in (0, 1] or a scalar tensor.
      noise_shape: the shape of the random keep / drop flags (default: the shape of ``x``).
      seed: an operation seed.
      name: a name scope.
    Returns:
      A tensor of the shape of ``x`` (``x`` itself when ``keep_prob`` is 1).
    Raises:
      NpuArgumentError: ``keep_prob`` is a number outside (0, 1].
    """
    with _v1.name_scope(name, "alpha_dropout", [x]):
        x = tf.convert_to_tensor(x, name="x")
        if isinstance(keep_prob, numbers.Real) and not 0 < keep_prob <= 1:
            raise NpuArgumentError(f"alpha_dropout: keep_prob must be in (0, 1], given {keep_prob}")
        keep_prob = tf.convert_to_tensor(keep_prob, dtype=x.dtype, name="keep_prob")
        keep_prob.get_shape().assert_has_rank(0)
        if tf.get_static_value(keep_prob) == 1:
            return x
        noise_shape = noise_shape if noise_shape is not None else tf.shape(x)
        uniform = _v1.random_uniform(noise_shape, seed=seed, dtype=x.dtype)
        kept = tf.cast(uniform >= 1 - keep_prob, x.dtype)
        masked = x * kept + _SELU_SATURATION * (1 - kept)
        scale = (keep_prob + keep_prob * (1 - keep_prob) * _SELU_SATURATION**2) ** -0.5
        shift = -scale * _SELU_SATURATION * (1 - keep_prob)
        return scale * masked + shift


def deprecated_flipped_softmax_cross_entropy_with_logits(logits, labels, dim=-1, name=None):
    """``tf.nn.softmax_cross_entropy_with_logits`` with ``logits`` first (TensorFlow 0.x's argument order)."""
    return _v1.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits, dim=dim, name=name)


def deprecated_flipped_sparse_softmax_cross_entropy_with_logits(logits, labels, name=None):
    """``tf.nn.sparse_softmax_cross_entropy_with_logits`` with ``logits`` first."""
    return _v1.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits, name=name)


def deprecated_flipped_sigmoid_cross_entropy_with_logits(logits, targets, name=None):
    """``tf.nn.sigmoid_cross_entropy_with_logits`` with ``logits`` first and the labels named ``targets``."""
    return _v1.nn.sigmoid_cross_entropy_with_logits(labels=targets, logits=logits, name=name)


def sampled_sparse_softmax_loss(
    weights,
    biases,
    labels,
    inputs,
    num_sampled,
    num_classes,
    sampled_values=None,
    remove_accidental_hits=True,
    partition_strategy="mod",
    name="sampled_sparse_softmax_loss",
):
    """The sampled softmax training loss with one true class per example given as an index.

    Args:
      weights: ``[num_classes, dim]`` class embeddings (a tensor, a list of shards or a partitioned variable).
      biases: ``[num_classes]`` class biases.
      labels: ``[batch_size, 1]`` int64 true classes.
      inputs: ``[batch_size, dim]`` activations.
      num_sampled: the number of classes sampled per batch.
      num_classes: the number of classes.
      sampled_values: ``(sampled_candidates, true_expected_count, sampled_expected_count)``, or None to draw them
        with ``tf.nn.log_uniform_candidate_sampler``.
      remove_accidental_hits: whether a sampled class equal to the true one is masked out.
      partition_strategy: "mod" or "div" (for sharded ``weights``).
      name: a name scope.
    Returns:
      ``[batch_size]`` losses: the sparse softmax cross entropy of the true logit (index 0) against the sampled
      ones, each corrected by the log of its expected count.
    """
    logits, _ = nn_impl._compute_sampled_logits(
        weights=weights,
        biases=biases,
        labels=labels,
        inputs=inputs,
        num_sampled=num_sampled,
        num_classes=num_classes,
        num_true=1,
        sampled_values=sampled_values,
        subtract_log_q=True,
        remove_accidental_hits=remove_accidental_hits,
        partition_strategy=partition_strategy,
        name=name,
    )
    true_index = tf.zeros([tf.shape(logits)[0]], dtype=tf.int64)  # the true logit comes first
    return _v1.nn.sparse_softmax_cross_entropy_with_logits(labels=true_index, logits=logits)


def rank_sampled_softmax_loss(
    weights,
    biases,
    labels,
    inputs,
    num_sampled,
    num_resampled,
    num_classes,
    num_true,
    sampled_values,
    resampling_temperature,
    remove_accidental_hits,
    partition_strategy,
    name=None,
):
    """Sampled softmax loss with rank-based adaptive resampling (TAPAS, arXiv:1707.03073).

    ``num_sampled`` classes are sampled (``sampled_values``, or ``tf.nn.learned_unigram_candidate_sampler``); of
    those, the ``num_resampled`` with the largest ``logsumexp_j((w_i . x_j + b_i) / resampling_temperature)`` over
    the batch are kept, and ``tf.nn.sampled_softmax_loss`` runs on them.

    Returns:
      ``[batch_size]`` losses.
    Raises:
      NpuArgumentError: ``num_sampled`` > ``num_classes``, ``num_resampled`` >= ``num_sampled``, or a
        ``partition_strategy`` other than "div" / "mod".
    """
    if num_sampled > num_classes:
        raise NpuArgumentError(
            f"rank_sampled_softmax_loss: num_sampled ({num_sampled}) cannot be greater than num_classes ({num_classes})"
        )
    if num_sampled <= num_resampled:
        raise NpuArgumentError(
            f"rank_sampled_softmax_loss: num_resampled ({num_resampled}) must be less than num_sampled ({num_sampled})"
        )
    if partition_strategy not in ("div", "mod"):
        raise NpuArgumentError(
            f"rank_sampled_softmax_loss: unsupported partition_strategy ({partition_strategy}): partition_strategy "
            f"must be 'div' or 'mod', given {partition_strategy!r}"
        )
    with _v1.name_scope(
        name, "rank_sampled_softmax_loss", [weights, biases, labels, inputs, sampled_values, resampling_temperature]
    ) as scope:
        if not sampled_values:
            sampled_values = _v1.nn.learned_unigram_candidate_sampler(
                true_classes=labels, num_true=num_true, num_sampled=num_sampled, unique=True, range_max=num_classes
            )
        resampled = _rank_resample(
            weights, biases, inputs, sampled_values, num_resampled, resampling_temperature, partition_strategy
        )
        return _v1.nn.sampled_softmax_loss(
            weights=weights,
            biases=biases,
            labels=labels,
            inputs=inputs,
            num_sampled=num_resampled,
            num_classes=num_classes,
            num_true=num_true,
            sampled_values=resampled,
            remove_accidental_hits=remove_accidental_hits,
            partition_strategy=partition_strategy,
            name=scope,
        )


def _rank_resample(weights, biases, inputs, sampled_values, num_resampled, temperature, partition_strategy):
    """Keeps the ``num_resampled`` sampled classes of largest batch logsumexp of their tempered logits."""
    sampled, true_expected, sampled_expected = (tf.stop_gradient(value) for value in sampled_values)
    sampled = tf.cast(sampled, tf.int64)
    tempered = inputs / temperature

    def logsumexp_logits(embeddings):  # computed next to the (possibly sharded) class embeddings
        return tf.reduce_logsumexp(tf.matmul(embeddings, tempered, transpose_b=True), axis=1)

    logits = embedding_ops._embedding_lookup_and_transform(
        weights, sampled, partition_strategy, transform_fn=logsumexp_logits
    )
    logits += tf.reshape(_v1.nn.embedding_lookup(biases, sampled, partition_strategy), [-1]) / temperature
    _, kept = tf.nn.top_k(logits, k=num_resampled, sorted=False)
    return tf.gather(sampled, kept), true_expected, tf.gather(sampled_expected, kept)


def scaled_softplus(x, alpha, clip=None, name=None):
    """``y = alpha * log(1 + exp(x / alpha))``, or ``min(y, clip)``: a smooth ReLU (ReLU6 with ``clip=6``).

    Args:
      x: a float tensor.
      alpha: the smoothness, a tensor > 0 broadcastable to ``x``.
      clip: None, or the upper bound of the output.
      name: a name scope.
    Returns:
      The tensor of the broadcast shape; its gradients with respect to ``x``, ``alpha`` and ``clip`` are the
      derivatives of this formula.
    """
    clipping = clip is not None
    with _v1.name_scope(name, "scaled_softplus", [x, alpha] + ([clip] if clipping else [])):
        x = tf.convert_to_tensor(x, name="x")
        alpha = tf.convert_to_tensor(alpha, dtype=x.dtype, name="alpha")
        y = alpha * tf.nn.softplus(x / alpha)
        if clipping:
            y = tf.minimum(y, tf.convert_to_tensor(clip, dtype=x.dtype, name="clip"))
        return y
