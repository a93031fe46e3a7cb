"""``sequence_loss`` of ``tf.contrib.seq2seq`` (TensorFlow 1.15), for the TF1 mode: weighted cross-entropy of a
batch of sequences of logits, reduced over time and / or batch.

With ce[b, t] = weights[b, t] * cross_entropy(logits[b, t], targets[b, t]): ``average_across_*`` divides the sum by
the sum of the weights over the reduced axes, ``sum_over_*`` by the number of non-zero weights there; both
reductions at once average over every element (0 where the divisor is 0).
"""

import tensorflow as tf

from npu_bridge.core.runtime.errors import NpuArgumentError

__all__ = ["SequenceLoss", "sequence_loss"]


def sequence_loss(
    logits,
    targets,
    weights,
    average_across_timesteps=True,
    average_across_batch=True,
    sum_over_timesteps=False,
    sum_over_batch=False,
    softmax_loss_function=None,
    name=None,
):
    """Weighted cross-entropy of sequences (``tf.contrib.seq2seq.sequence_loss``).

    Args:
      logits: [batch_size, sequence_length, num_classes] float tensor.
      targets: [batch_size, sequence_length] int tensor.
      weights: [batch_size, sequence_length] float tensor (a mask of the valid steps, typically).
      average_across_timesteps: divide the sum over time by the weights' sum over time.
      average_across_batch: divide the sum over the batch by the weights' sum over the batch.
      sum_over_timesteps: divide the sum over time by the count of non-zero weights over time.
      sum_over_batch: divide the sum over the batch by the count of non-zero weights over the batch.
      softmax_loss_function: optional ``(labels=, logits=) -> loss`` on the flattened [N] labels and [N, classes]
        logits instead of the sparse softmax cross-entropy.
      name: name scope (default "sequence_loss").

    Returns:
      A scalar, a [batch_size] or [sequence_length] vector, or [batch_size, sequence_length], as reduced.

    Raises:
      NpuArgumentError: a rank is wrong, or an axis is both averaged and summed.
    """
    for argument, value, rank, layout in (
        ("logits", logits, 3, "[batch_size, sequence_length, num_classes]"),
        ("targets", targets, 2, "[batch_size, sequence_length]"),
        ("weights", weights, 2, "[batch_size, sequence_length]"),
    ):
        shape = tf.convert_to_tensor(value).shape
        if shape.rank != rank:
            raise NpuArgumentError(f"sequence_loss: {argument} must be a {layout} tensor, got shape {shape}")
    for average, total, axis in (
        (average_across_timesteps, sum_over_timesteps, "timesteps"),
        (average_across_batch, sum_over_batch, "batch"),
    ):
        if average and total:
            raise NpuArgumentError(f"sequence_loss: average_across_{axis} and sum_over_{axis} cannot both be True")
    with tf.name_scope(name or "sequence_loss"):
        logits = tf.convert_to_tensor(logits)
        weights = tf.convert_to_tensor(weights)
        num_classes = tf.shape(logits)[2]
        logits_flat = tf.reshape(logits, [-1, num_classes])
        targets_flat = tf.reshape(targets, [-1])
        if softmax_loss_function is None:
            crossent = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=targets_flat, logits=logits_flat)
        else:
            crossent = softmax_loss_function(labels=targets_flat, logits=logits_flat)
        crossent *= tf.reshape(weights, [-1])
        if average_across_timesteps and average_across_batch:
            return tf.math.divide_no_nan(tf.reduce_sum(crossent), tf.reduce_sum(weights))
        if sum_over_timesteps and sum_over_batch:
            count = tf.cast(tf.math.count_nonzero(weights), crossent.dtype)
            return tf.math.divide_no_nan(tf.reduce_sum(crossent), count)
        crossent = tf.reshape(crossent, tf.shape(logits)[0:2])
        if average_across_timesteps or average_across_batch:
            axis = [0] if average_across_batch else [1]
            return tf.math.divide_no_nan(tf.reduce_sum(crossent, axis=axis), tf.reduce_sum(weights, axis=axis))
        if sum_over_timesteps or sum_over_batch:
            axis = [0] if sum_over_batch else [1]
            count = tf.cast(tf.math.count_nonzero(weights, axis=axis), crossent.dtype)
            return tf.math.divide_no_nan(tf.reduce_sum(crossent, axis=axis), count)
        return crossent


class SequenceLoss:
    """``sequence_loss`` as a loss object, summing over time and batch by default (upstream's
    ``contrib.seq2seq.python.ops.loss.SequenceLoss``): ``SequenceLoss()(targets, logits, weights)``.

    Args:
      average_across_timesteps, average_across_batch, sum_over_timesteps, sum_over_batch, softmax_loss_function:
        as ``sequence_loss``.
      name: name scope.
    """

    def __init__(
        self,
        average_across_timesteps=False,
        average_across_batch=False,
        sum_over_timesteps=True,
        sum_over_batch=True,
        softmax_loss_function=None,
        name=None,
    ):
        self.average_across_timesteps = average_across_timesteps
        self.average_across_batch = average_across_batch
        self.sum_over_timesteps = sum_over_timesteps
        self.sum_over_batch = sum_over_batch
        self.softmax_loss_function = softmax_loss_function
        self.name = name

    def __call__(self, y_true, y_pred, sample_weight=None):
        """The loss of logits ``y_pred`` for targets ``y_true`` with weights ``sample_weight``."""
        return sequence_loss(
            y_pred,
            y_true,
            sample_weight,
            average_across_timesteps=self.average_across_timesteps,
            average_across_batch=self.average_across_batch,
            sum_over_timesteps=self.sum_over_timesteps,
            sum_over_batch=self.sum_over_batch,
            softmax_loss_function=self.softmax_loss_function,
            name=self.name,
        )
