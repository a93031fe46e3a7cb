"""``tf.contrib.sparsemax`` for the TF1 mode: ``sparsemax`` and ``sparsemax_loss`` (Martins & Astudillo 2016,
arXiv:1602.02068), as TensorFlow 1.15 computed them."""

import tensorflow as tf

__all__ = ["sparsemax", "sparsemax_loss"]


def sparsemax(logits, name=None):
    """Sparsemax activations of ``logits`` ([batch, classes], half/float32/float64): for each row,
    ``max(logits - tau, 0)`` with ``tau`` the threshold that makes the row sum to 1 (the Euclidean projection of the
    row onto the probability simplex). A row holding NaN, or with no finite support, is NaN."""
    with tf.name_scope(name or "sparsemax"):
        z = tf.convert_to_tensor(logits, name="logits")
        rows = tf.shape(z)[0]
        classes = tf.shape(z)[1]
        z_sorted = tf.math.top_k(z, k=classes).values
        cumulative = tf.cumsum(z_sorted, axis=1)
        k = tf.range(1, tf.cast(classes, z.dtype) + 1, dtype=z.dtype)
        # the support is the k largest logits with 1 + k * z_(k) > sum of the k largest
        support = tf.reduce_sum(tf.cast(1 + k * z_sorted > cumulative, tf.int32), axis=1)
        last = tf.stack([tf.range(rows), tf.maximum(support, 1) - 1], axis=1)
        tau = (tf.gather_nd(cumulative, last) - 1) / tf.cast(support, z.dtype)
        p = tf.maximum(tf.cast(0, z.dtype), z - tau[:, tf.newaxis])
        undefined = tf.logical_or(tf.equal(support, 0), tf.math.is_nan(cumulative[:, -1]))
        return tf.where(
            tf.broadcast_to(undefined[:, tf.newaxis], tf.shape(z)),
            tf.fill(tf.shape(z), tf.cast(float("nan"), z.dtype)),
            p,
        )


def sparsemax_loss(logits, sparsemax, labels, name=None):
    """The sparsemax loss of each row (1.15's): ``sum_j s_j (z_j - s_j / 2)`` over the support of ``sparsemax``
    (``s``, the output of ``sparsemax(logits)``; there ``s_j (z_j - s_j / 2) = (z_j^2 - tau^2) / 2``) plus
    ``sum_j q_j (q_j / 2 - z_j)`` over the ``labels`` (``q``, a distribution per row). A zero label at an infinite
    logit adds 0."""
    with tf.name_scope(name or "sparsemax_loss"):
        z = tf.convert_to_tensor(logits, name="logits")
        s = tf.convert_to_tensor(sparsemax, name="sparsemax")
        q = tf.convert_to_tensor(labels, name="labels")
        sum_s = tf.where(tf.logical_or(s > 0, tf.math.is_nan(s)), s * (z - 0.5 * s), tf.zeros_like(s))
        q_part = q * (0.5 * q - z)
        q_part = tf.where(tf.logical_and(tf.equal(q, 0), tf.math.is_inf(z)), tf.zeros_like(z), q_part)
        return tf.reduce_sum(sum_s + q_part, axis=1)
