"""The sampling helpers of ``tf.contrib.seq2seq`` (TensorFlow 1.15) that ``BasicDecoder`` asks, step by step, for
the sample ids of the cell's outputs and for the next inputs, for the TF1 mode.

Training helpers read the next inputs from a given sequence (teacher forcing), optionally replacing some of them by
samples (scheduled sampling); inference helpers feed back the embedding of the sample (greedy argmax or a draw from
the softmax) until it is ``end_token``.
"""

import abc

import tensorflow as tf
from tensorflow.python.util import nest

from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError
from npu_bridge.core.tf1.seq2seq.decoder import _transpose_batch_time
from npu_bridge.core.tf1.seq2seq.sampling import bernoulli_sample, categorical_sample

__all__ = [
    "CustomHelper",
    "GreedyEmbeddingHelper",
    "Helper",
    "InferenceHelper",
    "SampleEmbeddingHelper",
    "ScheduledEmbeddingTrainingHelper",
    "ScheduledOutputTrainingHelper",
    "TrainingHelper",
]


class Helper(abc.ABC):
    """What ``BasicDecoder`` asks while it decodes (``tf.contrib.seq2seq.Helper``).

    ``initialize()`` returns ``(finished, first_inputs)``; ``sample(time, outputs, state)`` the sample ids;
    ``next_inputs(time, outputs, state, sample_ids)`` returns ``(finished, next_inputs, next_state)``.
    """

    @property
    @abc.abstractmethod
    def batch_size(self):
        """The batch size (an int or a scalar int32 tensor)."""

    @property
    @abc.abstractmethod
    def sample_ids_shape(self):
        """The ``TensorShape`` of one entry's sample ids (``[]`` for one id)."""

    @property
    @abc.abstractmethod
    def sample_ids_dtype(self):
        """The dtype of the sample ids."""

    @abc.abstractmethod
    def initialize(self, name=None):
        """Returns ``(finished, first_inputs)``."""

    @abc.abstractmethod
    def sample(self, time, outputs, state, name=None):
        """Returns the sample ids of ``outputs``."""

    @abc.abstractmethod
    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        """Returns ``(finished, next_inputs, next_state)``."""


def _embedding_function(embedding):
    if callable(embedding):
        return embedding
    return lambda ids: tf.compat.v1.nn.embedding_lookup(embedding, ids)


def _unstacked(inputs):
    array = tf.TensorArray(inputs.dtype, size=tf.shape(inputs)[0], element_shape=inputs.shape[1:])
    return array.unstack(inputs)


def _checked_probability(sampling_probability, owner):
    probability = tf.convert_to_tensor(sampling_probability, name="sampling_probability")
    if probability.shape.rank not in (0, 1):
        raise NpuArgumentError(
            f"{owner}: sampling_probability must be a scalar or a vector [batch_size], got shape {probability.shape}"
        )
    return probability


class _BatchHelper(Helper):
    """A helper whose batch size is its ``_batch_size`` and whose sample ids are, unless it says otherwise, scalar
    int32 ids."""

    @property
    def batch_size(self):
        return self._batch_size

    @property
    def sample_ids_shape(self):
        return tf.TensorShape([])

    @property
    def sample_ids_dtype(self):
        return tf.int32


class _StartInputsHelper(_BatchHelper):
    """A helper that starts every entry, unfinished, on its ``_start_inputs``."""

    def initialize(self, name=None):
        return tf.tile([False], [self._batch_size]), self._start_inputs


class CustomHelper(Helper):
    """A helper made of three functions (``tf.contrib.seq2seq.CustomHelper``).

    Args:
      initialize_fn: ``() -> (finished, next_inputs)``; the batch size is the size of ``finished``.
      sample_fn: ``(time, outputs, state) -> sample_ids``.
      next_inputs_fn: ``(time, outputs, state, sample_ids) -> (finished, next_inputs, next_state)``.
      sample_ids_shape: shape of one entry's sample ids (default ``[]``).
      sample_ids_dtype: their dtype (default int32).
    """

    def __init__(self, initialize_fn, sample_fn, next_inputs_fn, sample_ids_shape=None, sample_ids_dtype=None):
        self._initialize_fn = initialize_fn
        self._sample_fn = sample_fn
        self._next_inputs_fn = next_inputs_fn
        self._batch_size = None
        self._sample_ids_shape = tf.TensorShape(sample_ids_shape or [])
        self._sample_ids_dtype = sample_ids_dtype or tf.int32

    @property
    def batch_size(self):
        if self._batch_size is None:
            raise NpuArgumentError("CustomHelper: batch_size is known only after initialize() was called")
        return self._batch_size

    @property
    def sample_ids_shape(self):
        return self._sample_ids_shape

    @property
    def sample_ids_dtype(self):
        return self._sample_ids_dtype

    def initialize(self, name=None):
        with tf.name_scope(name or f"{type(self).__name__}Initialize"):
            finished, next_inputs = self._initialize_fn()
            if self._batch_size is None:
                self._batch_size = tf.size(finished)
        return finished, next_inputs

    def sample(self, time, outputs, state, name=None):
        with tf.name_scope(name or f"{type(self).__name__}Sample"):
            return self._sample_fn(time=time, outputs=outputs, state=state)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        with tf.name_scope(name or f"{type(self).__name__}NextInputs"):
            return self._next_inputs_fn(time=time, outputs=outputs, state=state, sample_ids=sample_ids)


class TrainingHelper(_BatchHelper):
    """Teacher forcing: the inputs at step t + 1 are ``inputs[:, t + 1]`` (``tf.contrib.seq2seq.TrainingHelper``).

    An entry is finished once ``t + 1 >= sequence_length``; sample ids are the argmax of the outputs. When every
    entry is finished the next inputs are zeros.

    Args:
      inputs: (nested) [batch, time, ...] tensors ([time, batch, ...] with ``time_major``).
      sequence_length: [batch] int tensor.
      time_major: whether ``inputs`` is time major.
      name: name scope.

    Raises:
      NpuArgumentError: ``sequence_length`` is not a vector.
    """

    def __init__(self, inputs, sequence_length, time_major=False, name=None):
        with tf.name_scope(name or "TrainingHelper"):
            inputs = tf.convert_to_tensor(inputs, name="inputs")
            self._inputs = inputs
            if not time_major:
                inputs = nest.map_structure(_transpose_batch_time, inputs)
            self._input_tas = nest.map_structure(_unstacked, inputs)
            self._sequence_length = tf.convert_to_tensor(sequence_length, name="sequence_length")
            if self._sequence_length.shape.rank != 1:
                raise NpuArgumentError(
                    f"TrainingHelper: sequence_length must be a vector [batch_size], got shape "
                    f"{self._sequence_length.shape}"
                )
            self._zero_inputs = nest.map_structure(lambda inp: tf.zeros_like(inp[0, :]), inputs)
            self._batch_size = tf.size(sequence_length)

    @property
    def inputs(self):
        return self._inputs

    @property
    def sequence_length(self):
        return self._sequence_length

    def _inputs_at(self, time, finished):
        return tf.compat.v1.cond(
            tf.reduce_all(finished),
            lambda: self._zero_inputs,
            lambda: nest.map_structure(lambda ta: ta.read(time), self._input_tas),
        )

    def initialize(self, name=None):
        with tf.name_scope(name or "TrainingHelperInitialize"):
            finished = tf.equal(0, self._sequence_length)
            return finished, self._inputs_at(0, finished)

    def sample(self, time, outputs, name=None, **unused_kwargs):
        with tf.name_scope(name or "TrainingHelperSample"):
            return tf.cast(tf.argmax(outputs, axis=-1), tf.int32)

    def next_inputs(self, time, outputs, state, name=None, **unused_kwargs):
        with tf.name_scope(name or "TrainingHelperNextInputs"):
            next_time = time + 1
            finished = next_time >= self._sequence_length
            return finished, self._inputs_at(next_time, finished), state


def _merge_by_mask(where_sampling, sampled, where_not_sampling, kept, shape):
    """Puts ``sampled`` rows at ``where_sampling`` and ``kept`` rows at ``where_not_sampling`` of a new tensor."""
    return tf.scatter_nd(where_sampling, sampled, shape) + tf.scatter_nd(where_not_sampling, kept, shape)


class ScheduledEmbeddingTrainingHelper(TrainingHelper):
    """Teacher forcing where each entry's next input is, with ``sampling_probability``, the embedding of an id drawn
    from the outputs' softmax instead (``tf.contrib.seq2seq.ScheduledEmbeddingTrainingHelper``).

    Sample ids are -1 where the entry was not sampled.

    Args:
      inputs, sequence_length, time_major, name: as ``TrainingHelper``.
      embedding: a [vocab, depth] embedding or a function of ids.
      sampling_probability: scalar or [batch] probability of sampling.
      seed: seed of the categorical draw; scheduling_seed: seed of the decision to sample.

    Raises:
      NpuArgumentError: ``sampling_probability`` is neither a scalar nor a vector.
    """

    def __init__(
        self,
        inputs,
        sequence_length,
        embedding,
        sampling_probability,
        time_major=False,
        seed=None,
        scheduling_seed=None,
        name=None,
    ):
        with tf.name_scope(name or "ScheduledEmbeddingSamplingWrapper"):
            self._embedding_fn = _embedding_function(embedding)
            self._sampling_probability = _checked_probability(sampling_probability, type(self).__name__)
            self._seed = seed
            self._scheduling_seed = scheduling_seed
            super().__init__(inputs=inputs, sequence_length=sequence_length, time_major=time_major, name=name)

    def sample(self, time, outputs, state, name=None):
        with tf.name_scope(name or "ScheduledEmbeddingTrainingHelperSample"):
            chosen = bernoulli_sample(
                probs=self._sampling_probability,
                dtype=tf.bool,
                sample_shape=self.batch_size,
                seed=self._scheduling_seed,
            )
            return tf.compat.v1.where(
                chosen, categorical_sample(logits=outputs, seed=self._seed), tf.fill([self.batch_size], -1)
            )

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        with tf.name_scope(name or "ScheduledEmbeddingTrainingHelperNextInputs"):
            finished, base_inputs, state = super().next_inputs(time=time, outputs=outputs, state=state, name=name)

            def sampled_inputs():
                where_sampling = tf.cast(tf.compat.v1.where(sample_ids > -1), tf.int32)
                where_not_sampling = tf.cast(tf.compat.v1.where(sample_ids <= -1), tf.int32)
                embedded = self._embedding_fn(tf.gather_nd(sample_ids, where_sampling))
                kept = tf.gather_nd(base_inputs, where_not_sampling)
                return _merge_by_mask(where_sampling, embedded, where_not_sampling, kept, tf.shape(base_inputs))

            next_inputs = tf.compat.v1.cond(tf.reduce_all(finished), lambda: base_inputs, sampled_inputs)
            return finished, next_inputs, state


class ScheduledOutputTrainingHelper(TrainingHelper):
    """Teacher forcing where each entry's next input is, with ``sampling_probability``, the cell's output itself
    (through ``next_inputs_fn`` if given, joined with ``auxiliary_inputs``)
    (``tf.contrib.seq2seq.ScheduledOutputTrainingHelper``). Sample ids are the Bernoulli draws (int32 0 / 1).

    Args:
      inputs, sequence_length, time_major, name: as ``TrainingHelper``.
      sampling_probability: scalar or [batch] probability of sampling.
      seed: seed of the draws.
      next_inputs_fn: optional function of the sampled outputs.
      auxiliary_inputs: optional tensor concatenated (last axis) to the inputs and to sampled outputs.

    Raises:
      NpuArgumentError: ``sampling_probability`` is neither a scalar nor a vector.
    """

    def __init__(
        self,
        inputs,
        sequence_length,
        sampling_probability,
        time_major=False,
        seed=None,
        next_inputs_fn=None,
        auxiliary_inputs=None,
        name=None,
    ):
        with tf.name_scope(name or "ScheduledOutputTrainingHelper"):
            self._sampling_probability = _checked_probability(sampling_probability, type(self).__name__)
            if auxiliary_inputs is None:
                joined = inputs
            else:
                inputs = tf.convert_to_tensor(inputs, name="inputs")
                auxiliary_inputs = tf.convert_to_tensor(auxiliary_inputs, name="auxiliary_inputs")
                joined = nest.map_structure(lambda x, y: tf.concat((x, y), -1), inputs, auxiliary_inputs)
                if not time_major:
                    auxiliary_inputs = nest.map_structure(_transpose_batch_time, auxiliary_inputs)
            self._auxiliary_input_tas = (
                None if auxiliary_inputs is None else nest.map_structure(_unstacked, auxiliary_inputs)
            )
            self._seed = seed
            self._next_inputs_fn = next_inputs_fn
            super().__init__(inputs=joined, sequence_length=sequence_length, time_major=time_major, name=name)

    def sample(self, time, outputs, state, name=None):
        with tf.name_scope(name or "ScheduledOutputTrainingHelperSample"):
            return bernoulli_sample(probs=self._sampling_probability, sample_shape=self.batch_size, seed=self._seed)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        with tf.name_scope(name or "ScheduledOutputTrainingHelperNextInputs"):
            finished, base_inputs, state = super().next_inputs(time=time, outputs=outputs, state=state, name=name)
            chosen = tf.cast(sample_ids, tf.bool)

            def with_auxiliary(values, indices=None):
                if self._auxiliary_input_tas is None:
                    return values
                auxiliary = nest.map_structure(lambda ta: ta.read(time + 1), self._auxiliary_input_tas)
                if indices is not None:
                    auxiliary = tf.gather_nd(auxiliary, indices)
                return nest.map_structure(lambda x, y: tf.concat((x, y), -1), values, auxiliary)

            def sampled_inputs():
                if self._next_inputs_fn is None:
                    return tf.compat.v1.where(chosen, with_auxiliary(outputs), base_inputs)
                where_sampling = tf.cast(tf.compat.v1.where(chosen), tf.int32)
                where_not_sampling = tf.cast(tf.compat.v1.where(tf.logical_not(chosen)), tf.int32)
                sampled = with_auxiliary(self._next_inputs_fn(tf.gather_nd(outputs, where_sampling)), where_sampling)
                kept = tf.gather_nd(base_inputs, where_not_sampling)
                return _merge_by_mask(where_sampling, sampled, where_not_sampling, kept, tf.shape(base_inputs))

            keep = tf.logical_or(tf.reduce_all(finished), tf.logical_not(tf.reduce_any(chosen)))
            next_inputs = tf.compat.v1.cond(keep, lambda: base_inputs, sampled_inputs)
            return finished, next_inputs, state


class GreedyEmbeddingHelper(_StartInputsHelper):
    """Greedy decoding: the sample is the argmax of the outputs, the next input its embedding; an entry is finished
    when its sample is ``end_token`` (``tf.contrib.seq2seq.GreedyEmbeddingHelper``).

    Args:
      embedding: a [vocab, depth] embedding or a function of ids.
      start_tokens: [batch] int32 ids of the first inputs.
      end_token: int32 scalar.

    Raises:
      NpuArgumentError: ``start_tokens`` is not a vector or ``end_token`` not a scalar.
    """

    def __init__(self, embedding, start_tokens, end_token):
        self._embedding_fn = _embedding_function(embedding)
        self._start_tokens = tf.convert_to_tensor(start_tokens, dtype=tf.int32, name="start_tokens")
        self._end_token = tf.convert_to_tensor(end_token, dtype=tf.int32, name="end_token")
        if self._start_tokens.shape.rank != 1:
            raise NpuArgumentError(
                f"{type(self).__name__}: start_tokens must be a vector [batch_size], got shape "
                f"{self._start_tokens.shape}"
            )
        self._batch_size = tf.size(start_tokens)
        if self._end_token.shape.rank != 0:
            raise NpuArgumentError(
                f"{type(self).__name__}: end_token must be a scalar, got shape {self._end_token.shape}"
            )
        self._start_inputs = self._embedding_fn(self._start_tokens)

    def sample(self, time, outputs, state, name=None):
        _check_single_tensor(outputs, type(self).__name__)
        return tf.argmax(outputs, axis=-1, output_type=tf.int32)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        finished = tf.equal(sample_ids, self._end_token)
        next_inputs = tf.compat.v1.cond(
            tf.reduce_all(finished), lambda: self._start_inputs, lambda: self._embedding_fn(sample_ids)
        )
        return finished, next_inputs, state


class SampleEmbeddingHelper(GreedyEmbeddingHelper):
    """As ``GreedyEmbeddingHelper``, with the sample drawn from softmax(outputs / softmax_temperature)
    (``tf.contrib.seq2seq.SampleEmbeddingHelper``).

    Args:
      embedding, start_tokens, end_token: as ``GreedyEmbeddingHelper``.
      softmax_temperature: optional float; None means 1.
      seed: seed of the draws.
    """

    def __init__(self, embedding, start_tokens, end_token, softmax_temperature=None, seed=None):
        super().__init__(embedding, start_tokens, end_token)
        self._softmax_temperature = softmax_temperature
        self._seed = seed

    def sample(self, time, outputs, state, name=None):
        _check_single_tensor(outputs, type(self).__name__)
        logits = outputs if self._softmax_temperature is None else outputs / self._softmax_temperature
        return categorical_sample(logits=logits, seed=self._seed)


class InferenceHelper(_StartInputsHelper):
    """Decoding without embeddings: ``sample_fn(outputs)`` gives the sample, ``next_inputs_fn(sample)`` (or the
    sample itself) the next input, ``end_fn(sample)`` the finished flags (``tf.contrib.seq2seq.InferenceHelper``).

    Args:
      sample_fn: function of the outputs.
      sample_shape: shape of one entry's sample.
      sample_dtype: dtype of the samples.
      start_inputs: [batch, ...] first inputs.
      end_fn: function of the samples returning [batch] bools.
      next_inputs_fn: optional function of the samples.
    """

    def __init__(self, sample_fn, sample_shape, sample_dtype, start_inputs, end_fn, next_inputs_fn=None):
        self._sample_fn = sample_fn
        self._end_fn = end_fn
        self._sample_shape = tf.TensorShape(sample_shape)
        self._sample_dtype = sample_dtype
        self._next_inputs_fn = next_inputs_fn
        self._batch_size = tf.shape(start_inputs)[0]
        self._start_inputs = tf.convert_to_tensor(start_inputs, name="start_inputs")

    @property
    def sample_ids_shape(self):
        return self._sample_shape

    @property
    def sample_ids_dtype(self):
        return self._sample_dtype

    def sample(self, time, outputs, state, name=None):
        return self._sample_fn(outputs)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        next_inputs = sample_ids if self._next_inputs_fn is None else self._next_inputs_fn(sample_ids)
        return self._end_fn(sample_ids), next_inputs, state


def _check_single_tensor(outputs, owner):
    if not isinstance(outputs, tf.Tensor):
        raise NpuArgumentTypeError(f"{owner}.sample: outputs must be a single Tensor, got {type(outputs).__name__}")
