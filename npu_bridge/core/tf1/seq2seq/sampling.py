"""The samplers of ``tf.contrib.seq2seq``'s helpers (TensorFlow 1.15): Bernoulli draws for scheduled sampling and
categorical draws of sample ids, each shaped ``sample_shape + batch shape``."""

import tensorflow as tf


def _sampled(sample_n, sample_shape):
    """Draws ``sample_n(n)`` [n, ...] for n = prod(sample_shape) and reshapes them to sample_shape + [...]."""
    sample_shape = tf.reshape(tf.convert_to_tensor(sample_shape, tf.int32, name="sample_shape"), [-1])
    samples = sample_n(tf.reduce_prod(sample_shape))
    return tf.reshape(samples, tf.concat([sample_shape, tf.shape(samples)[1:]], 0))


def bernoulli_sample(probs=None, logits=None, dtype=tf.int32, sample_shape=(), seed=None):
    """Draws of Bernoulli(probs) (or of sigmoid(logits)): 1 where a uniform draw is below the probability.

    Returns:
      sample_shape + probs.shape values of ``dtype``.
    """
    probs = tf.sigmoid(logits, name="probs") if probs is None else tf.convert_to_tensor(probs, name="probs")

    def sample_n(n):
        uniform = tf.random.uniform(tf.concat([[n], tf.shape(probs)], 0), seed=seed, dtype=probs.dtype)
        return tf.cast(uniform < probs, dtype)

    return _sampled(sample_n, sample_shape)


def categorical_sample(logits, dtype=tf.int32, sample_shape=(), seed=None):
    """Draws of the softmax of ``logits`` [..., classes] (one id per row).

    Returns:
      sample_shape + logits.shape[:-1] ids of ``dtype``.
    """
    logits = tf.convert_to_tensor(logits, name="logits")
    rows = tf.shape(logits)[:-1]

    def sample_n(n):
        flat = logits if logits.shape.rank == 2 else tf.reshape(logits, [-1, tf.shape(logits)[-1]])
        draws = tf.random.categorical(flat, n, seed=seed, dtype=tf.int64 if logits.dtype.size > 4 else tf.int32)
        return tf.cast(tf.reshape(tf.transpose(draws), tf.concat([[n], rows], 0)), dtype)

    return _sampled(sample_n, sample_shape)
