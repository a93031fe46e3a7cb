"""``Decoder`` and ``dynamic_decode`` of ``tf.contrib.seq2seq`` (TensorFlow 1.15), for the TF1 mode.

A decoder is driven by ``dynamic_decode``: ``initialize()`` once, then ``step(time, inputs, state)`` inside a
``tf.while_loop`` until every batch entry is finished (or ``maximum_iterations`` steps ran), then ``finalize`` if the
decoder has one. The outputs of each step are written to TensorArrays and stacked, time major; they are transposed to
batch major unless ``output_time_major``.
"""

import abc

import tensorflow as tf
from tensorflow.python.util import nest

from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError

__all__ = ["Decoder", "dynamic_decode"]


class Decoder(abc.ABC):
    """The interface ``dynamic_decode`` drives (``tf.contrib.seq2seq.Decoder``).

    A subclass provides ``batch_size``, ``output_size`` (nested ints / ``TensorShape``s without the batch),
    ``output_dtype`` (the same structure of dtypes), ``initialize(name=None)`` returning ``(finished, inputs,
    state)`` and ``step(time, inputs, state, name=None)`` returning ``(outputs, next_state, next_inputs,
    finished)``; optionally ``finalize(outputs, final_state, sequence_lengths)`` and ``tracks_own_finished``.
    """

    @property
    def batch_size(self):
        """The batch size of the inputs (an int or a scalar int32 tensor)."""
        raise NotImplementedError

    @property
    def output_size(self):
        """A (nested) int or ``TensorShape``: the shape of one step's output without the batch."""
        raise NotImplementedError

    @property
    def output_dtype(self):
        """A (nested) dtype, the structure of ``output_size``."""
        raise NotImplementedError

    @abc.abstractmethod
    def initialize(self, name=None):
        """Returns ``(finished, initial_inputs, initial_state)``."""
        raise NotImplementedError

    @abc.abstractmethod
    def step(self, time, inputs, state, name=None):
        """One decoding step; returns ``(outputs, next_state, next_inputs, finished)``."""
        raise NotImplementedError

    def finalize(self, outputs, final_state, sequence_lengths):
        """Post-processes the stacked outputs; returns ``(final_outputs, final_state)``.

        The base class has none (``dynamic_decode`` then keeps the outputs as they are).
        """
        raise NotImplementedError

    @property
    def tracks_own_finished(self):
        """True if ``step`` returns the complete finished flags itself (a decoder that reorders batch entries);
        otherwise ``dynamic_decode`` ORs each step's flags into those it already has."""
        return False


def _transpose_batch_time(x):
    """Swaps the first two dimensions of a tensor of rank 2 or more; other tensors are returned as they are."""
    x = tf.convert_to_tensor(x)
    rank = x.shape.rank
    if rank is not None and rank < 2:
        return x
    if rank is None:
        order = tf.concat(([1, 0], tf.range(2, tf.rank(x))), 0)
    else:
        order = [1, 0] + list(range(2, rank))
    swapped = tf.transpose(x, order)
    if rank is not None:
        swapped.set_shape(tf.TensorShape([x.shape[1], x.shape[0]]).concatenate(x.shape[2:]))
    return swapped


def _zeros_for(size, dtype, batch_size):
    """Zeros of shape [batch_size] + size for every (nested) size."""

    def zeros(one_size, one_dtype):
        shape = tf.TensorShape(one_size)
        static_batch = tf.get_static_value(batch_size)
        if not shape.is_fully_defined():
            raise NpuArgumentError(f"output_size {one_size} must be fully defined to make zero outputs")
        dims = tf.concat([tf.reshape(tf.cast(batch_size, tf.int32), [1]), tf.constant(shape.as_list(), tf.int32)], 0)
        value = tf.zeros(dims, dtype=one_dtype)
        value.set_shape(tf.TensorShape([static_batch]).concatenate(shape))
        return value

    return nest.map_structure(zeros, size, dtype)


def _element_shape(batch_size, size):
    shape = size if isinstance(size, tf.TensorShape) else tf.TensorShape(size)
    if shape.rank is None:
        return None
    return tf.TensorShape([tf.get_static_value(batch_size)]).concatenate(shape)


def dynamic_decode(
    decoder,
    output_time_major=False,
    impute_finished=False,
    maximum_iterations=None,
    parallel_iterations=32,
    swap_memory=False,
    scope=None,
    **kwargs,
):
    """Runs ``decoder`` until every batch entry is finished (``tf.contrib.seq2seq.dynamic_decode``).

    Args:
      decoder: a ``Decoder``.
      output_time_major: return outputs [time, batch, ...] instead of [batch, time, ...].
      impute_finished: after an entry finished, its outputs are zeros and its state is copied through.
      maximum_iterations: optional int32 scalar: stop after that many steps.
      parallel_iterations, swap_memory: passed to ``tf.while_loop``.
      scope: variable scope (default "decoder").
      **kwargs: accepted for TensorFlow 1.15's signature (its Keras-layer decoders); unused.

    Returns:
      ``(final_outputs, final_state, final_sequence_lengths)``: lengths [batch] int32 count the steps up to and
      including the one where each entry finished.

    Raises:
      NpuArgumentTypeError: ``decoder`` is not a ``Decoder``.
      NpuArgumentError: ``maximum_iterations`` is not a scalar.
    """
    del kwargs
    if not isinstance(decoder, Decoder):
        raise NpuArgumentTypeError(
            f"dynamic_decode: decoder must be a tf.contrib.seq2seq.Decoder, got {type(decoder).__name__}"
        )
    with tf.compat.v1.variable_scope(scope, "decoder") as varscope:
        if not tf.executing_eagerly() and not _in_while_loop() and varscope.caching_device is None:
            varscope.set_caching_device(lambda op: op.device)
        if maximum_iterations is not None:
            maximum_iterations = tf.convert_to_tensor(maximum_iterations, tf.int32, name="maximum_iterations")
            if maximum_iterations.shape.rank != 0:
                raise NpuArgumentError(
                    f"dynamic_decode: maximum_iterations must be a scalar, got shape {maximum_iterations.shape}"
                )
        initial_finished, initial_inputs, initial_state = decoder.initialize()
        zero_outputs = _zeros_for(decoder.output_size, decoder.output_dtype, decoder.batch_size)
        if maximum_iterations is not None:
            initial_finished = tf.logical_or(initial_finished, maximum_iterations <= 0)
        initial_lengths = tf.zeros_like(initial_finished, dtype=tf.int32)
        initial_arrays = nest.map_structure(
            lambda size, dtype: tf.TensorArray(
                dtype, size=0, dynamic_size=True, element_shape=_element_shape(decoder.batch_size, size)
            ),
            decoder.output_size,
            decoder.output_dtype,
        )

        def not_all_finished(time, arrays, state, inputs, finished, lengths):
            del time, arrays, state, inputs, lengths
            return tf.logical_not(tf.reduce_all(finished))

        def one_step(time, arrays, state, inputs, finished, lengths):
            outputs, next_state, next_inputs, step_finished = decoder.step(time, inputs, state)
            next_finished = step_finished if decoder.tracks_own_finished else tf.logical_or(step_finished, finished)
            next_lengths = tf.compat.v1.where(finished, lengths, tf.fill(tf.shape(lengths), time + 1))
            nest.assert_same_structure(state, next_state)
            nest.assert_same_structure(arrays, outputs)
            nest.assert_same_structure(inputs, next_inputs)
            if impute_finished:
                outputs = nest.map_structure(
                    lambda out, zero: tf.compat.v1.where(finished, zero, out), outputs, zero_outputs
                )
                next_state = nest.map_structure(lambda new, cur: _keep_finished(finished, new, cur), next_state, state)
            arrays = nest.map_structure(lambda ta, out: ta.write(time, out), arrays, outputs)
            return time + 1, arrays, next_state, next_inputs, next_finished, next_lengths

        result = tf.compat.v1.while_loop(
            not_all_finished,
            one_step,
            loop_vars=(
                tf.constant(0, tf.int32),
                initial_arrays,
                initial_state,
                initial_inputs,
                initial_finished,
                initial_lengths,
            ),
            parallel_iterations=parallel_iterations,
            maximum_iterations=maximum_iterations,
            swap_memory=swap_memory,
        )
        final_outputs = nest.map_structure(lambda ta: ta.stack(), result[1])
        final_state, final_lengths = result[2], result[5]
        try:
            final_outputs, final_state = decoder.finalize(final_outputs, final_state, final_lengths)
        except NotImplementedError:
            pass
        if not output_time_major:
            final_outputs = nest.map_structure(_transpose_batch_time, final_outputs)
    return final_outputs, final_state, final_lengths


def _keep_finished(finished, new, current):
    """The state entries of finished batch entries stay as they were (TensorArrays and scalars pass through)."""
    if isinstance(current, tf.TensorArray):
        return new
    new.set_shape(current.shape)
    if new.shape.rank == 0:
        return new
    return tf.compat.v1.where(finished, current, new)


def _in_while_loop():
    context = tf.compat.v1.get_default_graph()._get_control_flow_context()  # noqa: SLF001 - no public accessor
    while context is not None:
        if context.IsWhileContext():
            return True
        context = context.outer_context
    return False
