"""The losses and bucketing of TensorFlow 1.15's ``contrib.legacy_seq2seq``, for the TF1 mode, on lists of per-step
tensors: ``sequence_loss_by_example`` (per-example weighted log perplexity), ``sequence_loss`` (its batch mean or
sum) and ``model_with_buckets`` (one model per (encoder length, decoder length) bucket, sharing variables).
"""

import tensorflow as tf

from npu_bridge.core.runtime.errors import NpuArgumentError

__all__ = ["model_with_buckets", "sequence_loss", "sequence_loss_by_example"]


def sequence_loss_by_example(
    logits, targets, weights, average_across_timesteps=True, softmax_loss_function=None, name=None
):
    """sum_t weights[t] * cross_entropy(logits[t], targets[t]) per example, divided by sum_t weights[t] + 1e-12
    with ``average_across_timesteps``.

    Args:
      logits: list of [batch, num_decoder_symbols] tensors.
      targets: list of [batch] int tensors.
      weights: list of [batch] float tensors.
      average_across_timesteps: divide by the total weight.
      softmax_loss_function: optional ``(labels=, logits=) -> [batch] loss``.
      name: name scope (default "sequence_loss_by_example").

    Returns:
      [batch] tensor.

    Raises:
      NpuArgumentError: the three lists differ in length.
    """
    if len(targets) != len(logits) or len(weights) != len(logits):
        raise NpuArgumentError(
            "sequence_loss_by_example: logits, weights and targets must be lists of the same length, got "
            f"{len(logits)}, {len(weights)} and {len(targets)}"
        )
    with tf.name_scope(name or "sequence_loss_by_example"):
        per_step = []
        for logit, target, weight in zip(logits, targets, weights):
            if softmax_loss_function is None:
                crossent = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.reshape(target, [-1]), logits=logit)
            else:
                crossent = softmax_loss_function(labels=target, logits=logit)
            per_step.append(crossent * weight)
        log_perps = tf.add_n(per_step)
        if average_across_timesteps:
            log_perps /= tf.add_n(weights) + 1e-12  # no division by 0 for all-0 weights
    return log_perps


def sequence_loss(
    logits,
    targets,
    weights,
    average_across_timesteps=True,
    average_across_batch=True,
    softmax_loss_function=None,
    name=None,
):
    """The sum over the batch of ``sequence_loss_by_example``, divided by the batch size with
    ``average_across_batch``: a scalar.

    Args:
      logits, targets, weights, average_across_timesteps, softmax_loss_function: as ``sequence_loss_by_example``.
      average_across_batch: divide by the batch size.
      name: name scope (default "sequence_loss").
    """
    with tf.name_scope(name or "sequence_loss"):
        cost = tf.reduce_sum(
            sequence_loss_by_example(
                logits,
                targets,
                weights,
                average_across_timesteps=average_across_timesteps,
                softmax_loss_function=softmax_loss_function,
            )
        )
        if average_across_batch:
            return cost / tf.cast(tf.shape(targets[0])[0], cost.dtype)
        return cost


def model_with_buckets(
    encoder_inputs,
    decoder_inputs,
    targets,
    weights,
    buckets,
    seq2seq,
    softmax_loss_function=None,
    per_example_loss=False,
    name=None,
):
    """Builds ``seq2seq(encoder_inputs[:e], decoder_inputs[:d])`` for each bucket (e, d), the buckets after the first
    reusing the first's variables, and its loss on ``targets[:d]`` / ``weights[:d]``.

    Args:
      encoder_inputs, decoder_inputs, targets, weights: lists of [batch] tensors, at least as long as the last bucket.
      buckets: list of (encoder length, decoder length).
      seq2seq: ``(encoder_inputs, decoder_inputs) -> (outputs, state)``.
      softmax_loss_function: as ``sequence_loss``.
      per_example_loss: losses are ``sequence_loss_by_example`` [batch] instead of ``sequence_loss`` scalars.
      name: name scope (default "model_with_buckets").

    Returns:
      ``(outputs, losses)``: one list of outputs and one loss per bucket.

    Raises:
      NpuArgumentError: a list is shorter than the last bucket needs.
    """
    last_encoder, last_decoder = buckets[-1]
    for argument, values, needed in (
        ("encoder_inputs", encoder_inputs, last_encoder),
        ("targets", targets, last_decoder),
        ("weights", weights, last_decoder),
    ):
        if len(values) < needed:
            raise NpuArgumentError(
                f"model_with_buckets: {argument} has length {len(values)}; it must be at least that of the last "
                f"bucket ({needed})"
            )
    losses, outputs = [], []
    with tf.name_scope(name or "model_with_buckets"):
        for j, (encoder_length, decoder_length) in enumerate(buckets):
            with tf.compat.v1.variable_scope(tf.compat.v1.get_variable_scope(), reuse=True if j > 0 else None):
                bucket_outputs, _ = seq2seq(encoder_inputs[:encoder_length], decoder_inputs[:decoder_length])
                outputs.append(bucket_outputs)
                loss = sequence_loss_by_example if per_example_loss else sequence_loss
                losses.append(
                    loss(
                        outputs[-1],
                        targets[:decoder_length],
                        weights[:decoder_length],
                        softmax_loss_function=softmax_loss_function,
                    )
                )
    return outputs, losses
