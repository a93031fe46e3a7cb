"""``BasicDecoder`` of ``tf.contrib.seq2seq`` (TensorFlow 1.15), for the TF1 mode: one cell step per decoding step,
an optional output layer, and a ``Helper`` that picks the sample ids and the next inputs."""

import collections

import tensorflow as tf
from tensorflow.python.util import nest

from npu_bridge.core.runtime.errors import NpuArgumentTypeError
from npu_bridge.core.tf1.seq2seq.decoder import Decoder
from npu_bridge.core.tf1.seq2seq.helpers import Helper

__all__ = ["BasicDecoder", "BasicDecoderOutput"]


class BasicDecoderOutput(collections.namedtuple("BasicDecoderOutput", ("rnn_output", "sample_id"))):
    """One step's (or, stacked, every step's) output of a ``BasicDecoder``: the (projected) cell output and the
    helper's sample ids."""


def check_cell(owner, cell):
    """Raises ``NpuArgumentTypeError`` unless ``cell`` looks like an RNN cell (callable with state/output sizes)."""
    if not (callable(cell) and hasattr(cell, "output_size") and hasattr(cell, "state_size")):
        raise NpuArgumentTypeError(
            f"{owner}: cell must be an RNN cell (callable, with output_size and state_size), got {type(cell).__name__}"
        )


def check_layer(owner, layer, argument="output_layer"):
    """Raises ``NpuArgumentTypeError`` unless ``layer`` is None or a layer (``tf.layers`` or Keras: callable, with
    ``compute_output_shape``)."""
    if layer is not None and not (callable(layer) and hasattr(layer, "compute_output_shape")):
        raise NpuArgumentTypeError(f"{owner}: {argument} must be a tf.layers.Layer, got {type(layer).__name__}")


def projected_output_size(cell, output_layer):
    """The per-entry output size of ``cell`` after ``output_layer`` (when there is one)."""
    size = cell.output_size
    if output_layer is None:
        return size
    with_batch = nest.map_structure(lambda s: tf.TensorShape([None]).concatenate(s), size)
    layer_shape = output_layer.compute_output_shape(with_batch)
    return nest.map_structure(lambda s: tf.TensorShape(s)[1:], layer_shape)


class BasicDecoder(Decoder):
    """Decodes with ``cell``, ``output_layer`` and ``helper`` (``tf.contrib.seq2seq.BasicDecoder``).

    Each step runs ``cell(inputs, state)``, applies ``output_layer``, asks ``helper.sample`` for the sample ids and
    ``helper.next_inputs`` for the finished flags, next inputs and next state. The outputs are
    ``BasicDecoderOutput(rnn_output, sample_id)``.

    Args:
      cell: an RNN cell.
      helper: a ``Helper``.
      initial_state: the cell's initial state.
      output_layer: optional layer applied to the cell output (``tf.layers.Dense``).

    Raises:
      NpuArgumentTypeError: ``cell``, ``helper`` or ``output_layer`` has the wrong type.
    """

    def __init__(self, cell, helper, initial_state, output_layer=None):
        check_cell("BasicDecoder", cell)
        if not isinstance(helper, Helper):
            raise NpuArgumentTypeError(
                f"BasicDecoder: helper must be a tf.contrib.seq2seq.Helper, got {type(helper).__name__}"
            )
        check_layer("BasicDecoder", output_layer)
        self._cell = cell
        self._helper = helper
        self._initial_state = initial_state
        self._output_layer = output_layer

    @property
    def batch_size(self):
        return self._helper.batch_size

    @property
    def output_size(self):
        return BasicDecoderOutput(
            rnn_output=projected_output_size(self._cell, self._output_layer), sample_id=self._helper.sample_ids_shape
        )

    @property
    def output_dtype(self):
        dtype = nest.flatten(self._initial_state)[0].dtype
        return BasicDecoderOutput(
            nest.map_structure(lambda _: dtype, projected_output_size(self._cell, self._output_layer)),
            self._helper.sample_ids_dtype,
        )

    def initialize(self, name=None):
        """Returns ``(finished, first_inputs, initial_state)``."""
        return self._helper.initialize() + (self._initial_state,)

    def step(self, time, inputs, state, name=None):
        """Returns ``(BasicDecoderOutput, next_state, next_inputs, finished)``."""
        with tf.name_scope(name or "BasicDecoderStep"):
            cell_outputs, cell_state = self._cell(inputs, state)
            if self._output_layer is not None:
                cell_outputs = self._output_layer(cell_outputs)
            sample_ids = self._helper.sample(time=time, outputs=cell_outputs, state=cell_state)
            finished, next_inputs, next_state = self._helper.next_inputs(
                time=time, outputs=cell_outputs, state=cell_state, sample_ids=sample_ids
            )
        return BasicDecoderOutput(cell_outputs, sample_ids), next_state, next_inputs, finished
