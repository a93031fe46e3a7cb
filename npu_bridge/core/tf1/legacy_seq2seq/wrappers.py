"""The two cell wrappers of TensorFlow 1.15's ``contrib.rnn`` (``core_rnn_cell``) that ``legacy_seq2seq`` builds its
models with, for the TF1 mode: ``EmbeddingWrapper`` (embeds integer inputs before the cell) and
``OutputProjectionWrapper`` (projects the cell's output)."""

import math
import numbers

import tensorflow as tf

from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError
from npu_bridge.core.tf1.rnn_linear import _Linear

__all__ = ["EmbeddingWrapper", "OutputProjectionWrapper"]

_RNNCell = tf.compat.v1.nn.rnn_cell.RNNCell


def _check_cell(owner, cell):
    if not (callable(cell) and hasattr(cell, "output_size") and hasattr(cell, "state_size")):
        raise NpuArgumentTypeError(f"{owner}: cell must be an RNN cell, got {type(cell).__name__}")


def _check_positive(owner, argument, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
        raise NpuArgumentError(f"{owner}: {argument} must be a positive int, got {value!r}")


class EmbeddingWrapper(_RNNCell):
    """Looks the integer inputs [batch] (or [batch, 1]) up in an ``embedding`` [embedding_classes, embedding_size]
    variable and runs ``cell`` on the vectors. The embedding is created in the cell's scope on the CPU; without
    ``initializer`` (or a scope initializer) it is uniform in [-sqrt(3), sqrt(3)] (variance 1).

    Args:
      cell: the RNN cell.
      embedding_classes: the number of symbols.
      embedding_size: the size of their vectors.
      initializer: optional initializer of the embedding.
      reuse: reuse the variables of the scope.

    Raises:
      NpuArgumentError: a size is not positive.
    """

    def __init__(self, cell, embedding_classes, embedding_size, initializer=None, reuse=None):
        super().__init__(_reuse=reuse)
        _check_cell("EmbeddingWrapper", cell)
        _check_positive("EmbeddingWrapper", "embedding_classes", embedding_classes)
        _check_positive("EmbeddingWrapper", "embedding_size", embedding_size)
        self._cell = cell
        self._embedding_classes = embedding_classes
        self._embedding_size = embedding_size
        self._initializer = initializer

    @property
    def state_size(self):
        return self._cell.state_size

    @property
    def output_size(self):
        return self._cell.output_size

    def zero_state(self, batch_size, dtype):
        with tf.name_scope(type(self).__name__ + "ZeroState"):
            return self._cell.zero_state(batch_size, dtype)

    def call(self, inputs, state):
        with tf.device("/cpu:0"):
            initializer = self._initializer or tf.compat.v1.get_variable_scope().initializer
            if not initializer:
                initializer = tf.compat.v1.random_uniform_initializer(-math.sqrt(3), math.sqrt(3))
            dtype = state[0].dtype if isinstance(state, tuple) else state.dtype
            embedding = tf.compat.v1.get_variable(
                "embedding", [self._embedding_classes, self._embedding_size], initializer=initializer, dtype=dtype
            )
            embedded = tf.compat.v1.nn.embedding_lookup(embedding, tf.reshape(inputs, [-1]))
            return self._cell(embedded, state)


class OutputProjectionWrapper(_RNNCell):
    """Runs ``cell`` and projects its output to ``output_size`` (``kernel`` and ``bias`` in the wrapper's scope),
    then applies ``activation`` if given.

    Args:
      cell: the RNN cell.
      output_size: the size of the projection.
      activation: optional activation function.
      reuse: reuse the variables of the scope.

    Raises:
      NpuArgumentError: ``output_size`` is not positive.
    """

    def __init__(self, cell, output_size, activation=None, reuse=None):
        super().__init__(_reuse=reuse)
        _check_cell("OutputProjectionWrapper", cell)
        _check_positive("OutputProjectionWrapper", "output_size", output_size)
        self._cell = cell
        self._output_size = output_size
        self._activation = activation
        self._linear = None

    @property
    def state_size(self):
        return self._cell.state_size

    @property
    def output_size(self):
        return self._output_size

    def zero_state(self, batch_size, dtype):
        with tf.name_scope(type(self).__name__ + "ZeroState"):
            return self._cell.zero_state(batch_size, dtype)

    def call(self, inputs, state):
        output, next_state = self._cell(inputs, state)
        if self._linear is None:
            self._linear = _Linear(output, self._output_size, True)
        projected = self._linear(output)
        if self._activation:
            projected = self._activation(projected)
        return projected, next_state
