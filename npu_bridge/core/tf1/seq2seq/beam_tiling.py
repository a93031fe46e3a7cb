"""``tile_batch`` and ``gather_tree_from_array`` of ``tf.contrib.seq2seq`` (TensorFlow 1.15), and the shape checks
of ``BeamSearchDecoder``: what lays tensors out as batch * beam and reorders them along the chosen beams."""

import tensorflow as tf
from tensorflow.python.util import nest

from npu_bridge.core.runtime.errors import NpuArgumentError
from npu_bridge.core.tf1.seq2seq.beam_search_ops import gather_tree


def _tile_one(t, multiplier):
    t = tf.convert_to_tensor(t, name="t")
    if t.shape.rank is None or t.shape.rank < 1:
        raise NpuArgumentError(f"tile_batch: t must have a statically known rank of at least 1, got shape {t.shape}")
    shape = tf.shape(t)
    tiling = [1] * (t.shape.rank + 1)
    tiling[1] = multiplier
    tiled = tf.tile(tf.expand_dims(t, 1), tiling)
    tiled = tf.reshape(tiled, tf.concat(([shape[0] * multiplier], shape[1:]), 0))
    static_batch = tf.compat.dimension_value(t.shape[0])
    tiled.set_shape(
        tf.TensorShape([None if static_batch is None else static_batch * multiplier]).concatenate(t.shape[1:])
    )
    return tiled


def tile_batch(t, multiplier, name=None):
    """Repeats each batch entry ``multiplier`` times in place: [b0, b1] -> [b0, b0, b1, b1] for multiplier 2
    (``tf.contrib.seq2seq.tile_batch``); for the memory and initial state of a ``BeamSearchDecoder``.

    Args:
      t: a (nested) tensor [batch, ...].
      multiplier: int.
      name: name scope.

    Returns:
      The (nested) tensor [batch * multiplier, ...].

    Raises:
      NpuArgumentError: a tensor's rank is unknown or 0.
    """
    with tf.name_scope(name or "tile_batch"):
        return nest.map_structure(lambda one: _tile_one(one, multiplier), t)


def gather_tree_from_array(t, parent_ids, sequence_length):
    """Reorders ``t`` [max_time, batch, beam, ...] along the beams the way ``gather_tree`` reorders tokens.

    Args:
      t: [max_time, batch_size, beam_width, ...] tensor.
      parent_ids: [max_time, batch_size, beam_width] int32.
      sequence_length: [batch_size, beam_width] lengths.

    Returns:
      ``t`` with each beam's history gathered from its ancestors (steps beyond a beam's length are left).
    """
    max_time = tf.compat.dimension_value(parent_ids.shape[0]) or tf.shape(parent_ids)[0]
    batch_size = tf.compat.dimension_value(parent_ids.shape[1]) or tf.shape(parent_ids)[1]
    beam_width = tf.compat.dimension_value(parent_ids.shape[2]) or tf.shape(parent_ids)[2]
    beam_ids = tf.tile(tf.reshape(tf.range(beam_width), [1, 1, -1]), [max_time, batch_size, 1])
    max_lengths = tf.cast(tf.reduce_max(sequence_length, axis=1), tf.int32)
    sorted_beams = gather_tree(beam_ids, parent_ids, max_lengths, beam_width + 1)
    in_bounds = tf.transpose(tf.sequence_mask(sequence_length, maxlen=max_time), perm=[2, 0, 1])
    sorted_beams = tf.where(in_bounds, sorted_beams, beam_ids)
    time_index = tf.tile(tf.reshape(tf.range(max_time), [-1, 1, 1]), [1, batch_size, beam_width])
    batch_index = tf.transpose(
        tf.tile(tf.reshape(tf.range(batch_size), [-1, 1, 1]), [1, max_time, beam_width]), perm=[1, 0, 2]
    )
    indices = tf.stack([time_index, batch_index, sorted_beams], -1)
    final_shape = tf.shape(t)
    ordered = tf.gather_nd(tf.reshape(t, [max_time, batch_size, beam_width, -1]), indices)
    return tf.reshape(ordered, final_shape)


def _check_batch_beam(t, batch_size, beam_width):
    """An assertion that the stacked TensorArray ``t`` [time, batch * beam, ...] or [time, batch, beam, ...] can be
    reordered along the beams."""
    message = (
        "TensorArray reordering expects elements to be reshapable to [batch_size, beam_size, -1] which is "
        f"incompatible with the dynamic shape of {t.name} elements. Consider setting reorder_tensor_arrays to False "
        "to disable TensorArray reordering during the beam search."
    )
    shape = tf.shape(t)
    if t.shape.rank == 2:
        condition = tf.equal(shape[1], batch_size * beam_width)
    else:
        condition = tf.logical_or(
            tf.equal(shape[1], batch_size * beam_width),
            tf.logical_and(tf.equal(shape[1], batch_size), tf.equal(shape[2], beam_width)),
        )
    return tf.debugging.Assert(condition, [message])


def _check_rank_known(t):
    if t.shape.rank is None:
        raise NpuArgumentError(f"BeamSearchDecoder: the rank of {t} must be known")
