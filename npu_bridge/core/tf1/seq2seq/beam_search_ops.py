"""``gather_tree`` of ``tf.contrib.seq2seq`` (TensorFlow 1.15's ``GatherTree`` kernel), in TensorFlow ops, for the
TF1 mode; also upstream's module ``contrib.seq2seq.python.ops.beam_search_ops``.

Beam search records, per step, each beam's token (``step_ids``) and the beam it continues (``parent_ids``). The full
sequence of beam k of batch entry b is read backwards from the last step of b (``max_sequence_lengths[b] - 1``):
token ids[t, b, k'] where k' follows the parents from k. Steps at or beyond that length are ``end_token``, and so is
every step after the first ``end_token`` of a sequence.
"""

import tensorflow as tf

__all__ = ["gather_tree"]


def gather_tree(step_ids, parent_ids, max_sequence_lengths, end_token, name=None):
    """The beams of a beam search, read back through the parents (``tf.contrib.seq2seq.gather_tree``).

    Args:
      step_ids: [max_time, batch_size, beam_width] int32 tokens of each step.
      parent_ids: [max_time, batch_size, beam_width] int32 beams each step continues.
      max_sequence_lengths: [batch_size] int32 lengths.
      end_token: int32 scalar.
      name: name scope.

    Returns:
      [max_time, batch_size, beam_width] int32 beams.

    Raises:
      tf.errors.InvalidArgumentError (when run): a parent id followed is outside [0, beam_width], naming it and its
        (batch, time, beam), as TensorFlow 1.15's CPU kernel.
    """
    with tf.name_scope(name or "GatherTree"):
        step_ids = tf.convert_to_tensor(step_ids, tf.int32, name="step_ids")
        parent_ids = tf.convert_to_tensor(parent_ids, tf.int32, name="parent_ids")
        step_ids.shape.assert_has_rank(3)
        step_ids.shape.assert_is_compatible_with(parent_ids.shape)
        lengths = tf.convert_to_tensor(max_sequence_lengths, tf.int32, name="max_sequence_lengths")
        lengths.shape.assert_has_rank(1)
        end_token = tf.convert_to_tensor(end_token, tf.int32, name="end_token")
        end_token.shape.assert_has_rank(0)
        shape = tf.shape(step_ids)
        max_time, batch_size, beam_width = shape[0], shape[1], shape[2]
        lengths = tf.minimum(lengths, max_time)
        last = tf.expand_dims(lengths - 1, 1)  # [batch, 1]: the step each backtrack starts at
        identity = tf.tile(tf.expand_dims(tf.range(beam_width), 0), [batch_size, 1])

        def backtrack(t, pointer, beams):
            reading = t <= last  # [batch, 1]
            following = t < last
            bad = tf.logical_and(following, tf.logical_or(pointer < 0, pointer > beam_width))
            where_bad = tf.cast(tf.compat.v1.where(bad), tf.int32)
            first = tf.concat([where_bad[:1], [[0, 0]]], 0)[0]
            message = tf.strings.format(
                "Saw invalid parent id {} at (batch, time, beam) == ({}, {}, {})",
                (tf.gather_nd(pointer, tf.reshape(first, [1, 2]))[0], first[0], t, first[1]),
            )
            check = tf.debugging.Assert(tf.logical_not(tf.reduce_any(bad)), [message])
            with tf.control_dependencies([check]):
                safe = tf.clip_by_value(pointer, 0, beam_width - 1)
            token = tf.gather(step_ids[t], safe, batch_dims=1)
            parent = tf.gather(parent_ids[t], safe, batch_dims=1)
            beams = beams.write(t, tf.where(reading, token, tf.fill(tf.shape(token), end_token)))
            return t - 1, tf.where(reading, parent, pointer), beams

        _, _, written = tf.compat.v1.while_loop(
            lambda t, pointer, beams: t >= 0,
            backtrack,
            (max_time - 1, identity, tf.TensorArray(tf.int32, size=max_time)),
        )
        beams = written.stack()
        # after the first end_token of a sequence, everything is end_token
        ended_before = tf.cumsum(tf.cast(tf.equal(beams, end_token), tf.int32), axis=0, exclusive=True) > 0
        beams = tf.where(ended_before, tf.fill(tf.shape(beams), end_token), beams)
        beams.set_shape(step_ids.shape)
        return beams
