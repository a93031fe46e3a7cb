"""``tf.contrib.cudnn_rnn`` of TensorFlow 1.15 for the TF1 mode, on TensorFlow 2.21 (graph mode, any device).

``CudnnLSTM`` and ``CudnnGRU`` are the layers of 1.15's ``contrib.cudnn_rnn.python.layers.cudnn_rnn``, computed with
TensorFlow graph ops instead of cuDNN's fused kernel: the same function of the inputs and the canonical weights.
cuDNN's LSTM has no forget bias; its GRU applies the reset gate after the recurrent matmul
(``h' = tanh(x W_h + b_Wh + r * (h R_h + b_Rh))``). ``CudnnCompatibleLSTMCell`` and ``CudnnCompatibleGRUCell`` are
the cells 1.15 offered for running those weights without a GPU.

Weights. TensorFlow 1.15 kept a layer's weights in one opaque cuDNN buffer (``<layer>/opaque_kernel``), a
GPU-only format, and wrote them to checkpoints converted to the canonical variables of the compatible cells. Here
the layer's variables *are* those canonical variables, under the names 1.15 saved them under (below the layer's
scope: ``rnn/multi_rnn_cell/cell_<k>/cudnn_compatible_lstm_cell/{kernel,bias}`` one way,
``stack_bidirectional_rnn/cell_<k>/bidirectional_rnn/{fw,bw}/...`` both ways; GRU: ``gates/{kernel,bias}`` and
``candidate/{input,hidden}_projection/{kernel,bias}``), in the compatible cells' layout: ``kernel`` is
``[input depth + num_units, gates * num_units]`` (LSTM gates i, c, f, o; GRU gates r, u) and a bias is the sum of
cuDNN's input and recurrent biases. There is no ``opaque_kernel``: a checkpoint holding only the opaque buffer
does not load (restoring reports the canonical names as missing).

Not provided: ``input_mode="skip_input"`` (``"auto_select"`` with ``input size == num_units``), which has no
canonical input weights, and ``CudnnRNNTanh`` / ``CudnnRNNRelu``.
"""

import numbers

import tensorflow as tf

from npu_bridge.core.runtime.errors import NotAvailableError, NpuArgumentError, NpuArgumentTypeError
from npu_bridge.core.tf1.cudnn_initializers import canonical_initializer

__all__ = [
    "CUDNN_GRU",
    "CUDNN_GRU_PARAMS_PER_LAYER",
    "CUDNN_INPUT_AUTO_MODE",
    "CUDNN_INPUT_LINEAR_MODE",
    "CUDNN_INPUT_SKIP_MODE",
    "CUDNN_LSTM",
    "CUDNN_LSTM_PARAMS_PER_LAYER",
    "CUDNN_RNN_BIDIRECTION",
    "CUDNN_RNN_RELU",
    "CUDNN_RNN_RELU_PARAMS_PER_LAYER",
    "CUDNN_RNN_TANH",
    "CUDNN_RNN_TANH_PARAMS_PER_LAYER",
    "CUDNN_RNN_UNIDIRECTION",
    "CudnnCompatibleGRUCell",
    "CudnnCompatibleLSTMCell",
    "CudnnGRU",
    "CudnnLSTM",
]

CUDNN_RNN_UNIDIRECTION = "unidirectional"
CUDNN_RNN_BIDIRECTION = "bidirectional"
CUDNN_LSTM = "lstm"
CUDNN_GRU = "gru"
CUDNN_RNN_RELU = "rnn_relu"
CUDNN_RNN_TANH = "rnn_tanh"
CUDNN_LSTM_PARAMS_PER_LAYER = 8
CUDNN_GRU_PARAMS_PER_LAYER = 6
CUDNN_RNN_TANH_PARAMS_PER_LAYER = 2
CUDNN_RNN_RELU_PARAMS_PER_LAYER = 2
CUDNN_INPUT_LINEAR_MODE = "linear_input"
CUDNN_INPUT_SKIP_MODE = "skip_input"
CUDNN_INPUT_AUTO_MODE = "auto_select"

_DIRECTIONS = (CUDNN_RNN_UNIDIRECTION, CUDNN_RNN_BIDIRECTION)
_INPUT_MODES = (CUDNN_INPUT_LINEAR_MODE, CUDNN_INPUT_SKIP_MODE, CUDNN_INPUT_AUTO_MODE)
_DTYPES = (tf.float16, tf.float32, tf.float64)
_RNNCell = tf.compat.v1.nn.rnn_cell.RNNCell
_LSTMStateTuple = tf.compat.v1.nn.rnn_cell.LSTMStateTuple


def _lstm_step(inputs, state, kernel, bias):
    """One cuDNN LSTM step on canonical weights (gates i, c, f, o; no forget bias)."""
    c, h = state
    gates = tf.nn.bias_add(tf.matmul(tf.concat([inputs, h], 1), kernel), bias)
    i, j, f, o = tf.split(gates, 4, axis=1)
    new_c = tf.sigmoid(f) * c + tf.sigmoid(i) * tf.tanh(j)
    new_h = tf.sigmoid(o) * tf.tanh(new_c)
    return new_h, _LSTMStateTuple(new_c, new_h)


def _gru_step(inputs, state, weights):
    """One cuDNN GRU step on canonical weights (gates r, u; the reset gate scales ``h R_h + b_Rh``)."""
    gate_kernel, gate_bias, input_kernel, hidden_kernel, input_bias, hidden_bias = weights
    gates = tf.sigmoid(tf.nn.bias_add(tf.matmul(tf.concat([inputs, state], 1), gate_kernel), gate_bias))
    r, u = tf.split(gates, 2, axis=1)
    candidate = tf.nn.bias_add(tf.matmul(inputs, input_kernel), input_bias)
    candidate += r * tf.nn.bias_add(tf.matmul(state, hidden_kernel), hidden_bias)
    new_h = (1 - u) * tf.tanh(candidate) + u * state
    return new_h, new_h


class CudnnCompatibleLSTMCell(_RNNCell):
    """``tf.contrib.cudnn_rnn.CudnnCompatibleLSTMCell``: the LSTM cuDNN computes, as an RNN cell (1.15's
    ``LSTMBlockCell`` with ``forget_bias=0``, no cell clipping, no peepholes).

    One step: [i, c~, f, o] = [inputs, h] @ kernel + bias; c' = sigmoid(f) * c + sigmoid(i) * tanh(c~);
    h' = sigmoid(o) * tanh(c'). The state is ``LSTMStateTuple(c, h)``. Variables (``.../cudnn_compatible_lstm_cell/``):
    ``kernel`` [input depth + num_units, 4 * num_units] (the variable scope's initializer, glorot uniform when it
    has none) and ``bias`` [4 * num_units] (zeros): what a ``CudnnLSTM`` layer holds for each layer and direction.

    Args:
      num_units: int, the number of units.
      reuse: whether to reuse the variables of an existing scope.

    Raises:
      NpuArgumentError: ``num_units`` is not positive.
      NpuArgumentTypeError: ``num_units`` is not an int.
    """

    def __init__(self, num_units, reuse=None):
        self._num_units = _positive_int(num_units, "num_units")
        super().__init__(_reuse=reuse, name="cudnn_compatible_lstm_cell")

    @property
    def state_size(self):
        return _LSTMStateTuple(self._num_units, self._num_units)

    @property
    def output_size(self):
        return self._num_units

    def build(self, inputs_shape):
        depth = _known_depth(inputs_shape, "CudnnCompatibleLSTMCell")
        self._kernel = self.add_weight("kernel", [depth + self._num_units, 4 * self._num_units])
        self._bias = self.add_weight(
            "bias", [4 * self._num_units], initializer=tf.compat.v1.zeros_initializer(dtype=self.dtype)
        )
        self.built = True

    def call(self, inputs, state):
        return _lstm_step(inputs, state, self._kernel, self._bias)


class CudnnCompatibleGRUCell(_RNNCell):
    """``tf.contrib.cudnn_rnn.CudnnCompatibleGRUCell``: the GRU cuDNN computes, as an RNN cell.

    One step: [r, u] = sigmoid([inputs, h] @ gates/kernel + gates/bias); h~ = tanh(inputs @ candidate/input_projection
    + b_in + r * (h @ candidate/hidden_projection + b_hidden)); h' = (1 - u) * h~ + u * h. It differs from
    ``GRUCell``, which resets h before the recurrent matmul. Variables (``.../cudnn_compatible_gru_cell/``):
    ``gates/kernel`` [depth + num_units, 2 * num_units], ``gates/bias`` (ones, as ``GRUCell``'s),
    ``candidate/input_projection/kernel`` [depth, num_units], ``candidate/hidden_projection/kernel``
    [num_units, num_units] and their ``bias`` (zeros).

    Args:
      num_units: int, the number of units.
      reuse: whether to reuse the variables of an existing scope.
      kernel_initializer: initializer of the three kernels (None: the variable scope's).

    Raises:
      NpuArgumentError: ``num_units`` is not positive.
      NpuArgumentTypeError: ``num_units`` is not an int.
    """

    def __init__(self, num_units, reuse=None, kernel_initializer=None):
        self._num_units = _positive_int(num_units, "num_units")
        super().__init__(_reuse=reuse)
        self._kernel_initializer = kernel_initializer

    @property
    def state_size(self):
        return self._num_units

    @property
    def output_size(self):
        return self._num_units

    def build(self, inputs_shape):
        depth = _known_depth(inputs_shape, "CudnnCompatibleGRUCell")
        units, kernel_init = self._num_units, self._kernel_initializer
        zeros = tf.compat.v1.zeros_initializer(dtype=self.dtype)
        self._weights_ = (
            self.add_weight("gates/kernel", [depth + units, 2 * units], initializer=kernel_init),
            self.add_weight("gates/bias", [2 * units], initializer=tf.compat.v1.constant_initializer(1.0)),
            self.add_weight("candidate/input_projection/kernel", [depth, units], initializer=kernel_init),
            self.add_weight("candidate/hidden_projection/kernel", [units, units], initializer=kernel_init),
            self.add_weight("candidate/input_projection/bias", [units], initializer=zeros),
            self.add_weight("candidate/hidden_projection/bias", [units], initializer=zeros),
        )
        self.built = True

    def call(self, inputs, state):
        return _gru_step(inputs, state, self._weights_)


class _StepCell(_RNNCell):
    """A cell over weights that already exist (one layer and direction of a cuDNN layer)."""

    def __init__(self, step, state_size, num_units):
        super().__init__()
        self._step, self._state_size, self._num_units = step, state_size, num_units

    @property
    def state_size(self):
        return self._state_size

    @property
    def output_size(self):
        return self._num_units

    def build(self, inputs_shape):
        self.built = True

    def call(self, inputs, state):
        return self._step(inputs, state)


class _CudnnRNN(tf.compat.v1.layers.Layer):
    """The shared part of ``CudnnLSTM`` and ``CudnnGRU`` (TensorFlow 1.15's ``_CudnnRNN`` layer).

    Args:
      num_layers: int, the number of stacked layers.
      num_units: int, the units of each layer (and direction).
      input_mode: "linear_input" (a projection of the input, the default) or "auto_select" (the same here when the
        input size differs from ``num_units``); "skip_input" is not provided.
      direction: "unidirectional" or "bidirectional" (each layer then runs both ways and the next one reads the
        concatenation).
      dropout: rate of the dropout applied to the outputs of every layer but the last, when ``training``.
      seed: op seed of that dropout and of the default initializers.
      dtype: tf.float16, tf.float32 or tf.float64.
      kernel_initializer: initializer of each canonical weight matrix, [num_units, input width] (default glorot
        uniform), as in TensorFlow 1.15.
      bias_initializer: initializer of each of cuDNN's two biases per gate (default zeros); a canonical bias holds
        their sum.
      name: the layer's variable scope (default "cudnn_lstm" / "cudnn_gru").

    Raises:
      NpuArgumentError: a value outside those listed.
      NpuArgumentTypeError: ``num_layers`` or ``num_units`` is not an int.
      NotAvailableError: ``input_mode="skip_input"``.
    """

    _rnn_mode = None
    _num_params_per_layer = None

    def __init__(
        self,
        num_layers,
        num_units,
        input_mode=CUDNN_INPUT_LINEAR_MODE,
        direction=CUDNN_RNN_UNIDIRECTION,
        dropout=0.0,
        seed=None,
        dtype=tf.float32,
        kernel_initializer=None,
        bias_initializer=None,
        name=None,
    ):
        if direction not in _DIRECTIONS:
            raise NpuArgumentError(f"direction must be one of {list(_DIRECTIONS)}, got {direction!r}")
        if input_mode not in _INPUT_MODES:
            raise NpuArgumentError(f"input_mode must be one of {list(_INPUT_MODES)}, got {input_mode!r}")
        if input_mode == CUDNN_INPUT_SKIP_MODE:
            raise _skip_input_error(input_mode)
        dtype = tf.as_dtype(dtype)
        if dtype not in _DTYPES:
            raise NpuArgumentError(f"dtype must be float16, float32 or float64, got {dtype.name}")
        if isinstance(dropout, bool) or not isinstance(dropout, numbers.Real) or not 0 <= dropout <= 1:
            raise NpuArgumentError(f"dropout must be a number in [0, 1], got {dropout!r}")
        super().__init__(dtype=dtype, name=name)
        self._num_layers = _positive_int(num_layers, "num_layers")
        self._num_units = _positive_int(num_units, "num_units")
        self._input_mode = input_mode
        self._direction = direction
        self._dropout = float(dropout)
        self._seed = seed
        self._plain_dtype = dtype
        self._kernel_initializer = kernel_initializer
        self._bias_initializer = bias_initializer
        self._input_size = None
        self._canonical = []  # per layer, per direction: the tuple of variables

    num_layers = property(lambda self: self._num_layers)
    num_units = property(lambda self: self._num_units)
    input_mode = property(lambda self: self._input_mode)
    input_size = property(lambda self: self._input_size)
    rnn_mode = property(lambda self: self._rnn_mode)
    direction = property(lambda self: self._direction)
    num_dirs = property(lambda self: 1 if self._direction == CUDNN_RNN_UNIDIRECTION else 2)

    @property
    def canonical_variables(self):
        """The canonical variables, layer by layer, forward then backward: a tuple per layer and direction."""
        return [weights for layer in self._canonical for weights in layer]

    def build(self, input_shape):
        """Creates the canonical variables for inputs of ``input_shape`` (3 dimensions, the last one known).

        Raises:
          NpuArgumentError: ``input_shape`` does not have 3 dimensions or its last one is unknown.
        """
        if self.built:
            return
        input_shape = tf.TensorShape(input_shape)
        if input_shape.rank != 3:
            raise NpuArgumentError(f"the inputs of {type(self).__name__} must have 3 dimensions, got {input_shape}")
        if input_shape[-1] is None:
            raise NpuArgumentError(f"the last dimension of the inputs of {type(self).__name__} must be known")
        self._input_size = int(input_shape[-1])
        if self._input_mode == CUDNN_INPUT_AUTO_MODE and self._input_size == self._num_units:
            raise _skip_input_error(f"{self._input_mode} (input size {self._input_size} == num_units)")
        kernel_init = self._kernel_initializer or tf.compat.v1.glorot_uniform_initializer(seed=self._seed)
        bias_init = self._bias_initializer or tf.compat.v1.zeros_initializer()
        for layer in range(self._num_layers):
            width = self._input_size if layer == 0 else self._num_units * self.num_dirs
            weights = []
            for prefix in self._canonical_prefixes(layer):
                weights.append(self._canonical_weights(prefix, width, kernel_init, bias_init))
            self._canonical.append(weights)
        self.built = True

    def _canonical_prefixes(self, layer):
        cell = f"cudnn_compatible_{self._rnn_mode}_cell"
        if self._direction == CUDNN_RNN_UNIDIRECTION:
            return [f"rnn/multi_rnn_cell/cell_{layer}/{cell}"]
        return [f"stack_bidirectional_rnn/cell_{layer}/bidirectional_rnn/{way}/{cell}" for way in ("fw", "bw")]

    def _variable(self, name, shape, initializer):
        return self.add_weight(name, shape, dtype=self._plain_dtype, initializer=canonical_initializer(initializer))

    def state_shape(self, batch_size):
        """The shapes of the states: [num_layers * num_dirs, batch_size, num_units] each."""
        return tuple([self._num_layers * self.num_dirs, batch_size, self._num_units] for _ in range(self._states))

    @tf.autograph.experimental.do_not_convert  # graph code written out; Keras would convert it otherwise
    def call(self, inputs, initial_state=None, sequence_lengths=None, time_major=True, training=True):
        """Runs the layers over a sequence.

        Args:
          inputs: [time, batch, input size] ([batch, time, input size] when ``time_major`` is False).
          initial_state: None (zeros) or a tuple of the states (``(h, c)`` for LSTM, ``(h,)`` for GRU), each
            [num_layers * num_dirs, batch, num_units] ([batch, num_layers * num_dirs, num_units] when ``time_major``
            is False); entry ``layer * num_dirs + direction``.
          sequence_lengths: None (every sequence is full) or int [batch]: outputs past a sequence's length are zeros,
            its final state is the one at its last step, and the backward direction starts at that step.
          time_major: the layout of ``inputs``, the outputs and the states.
          training: whether the dropout between layers applies.

        Returns:
          (outputs, states): outputs [time, batch, num_dirs * num_units] (forward then backward; batch-major when
          ``time_major`` is False) and the final states, of the layout of ``initial_state``.

        Raises:
          NpuArgumentTypeError: ``initial_state`` is not a tuple.
          NpuArgumentError: ``initial_state`` holds the wrong number of tensors.
        """
        if initial_state is not None and not isinstance(initial_state, tuple):
            raise NpuArgumentTypeError(
                f"initial_state must be a tuple ({'(h, c)' if self._states == 2 else '(h,)'}), got {initial_state!r}"
            )
        if initial_state is not None and len(initial_state) != self._states:
            raise NpuArgumentError(
                f"initial_state of {type(self).__name__} must hold {self._states} tensor(s), got {len(initial_state)}"
            )
        inputs = tf.convert_to_tensor(inputs, dtype=self._plain_dtype)
        if not time_major:
            inputs = tf.transpose(inputs, [1, 0, 2])
        if initial_state is None:
            shape = tf.stack([self._num_layers * self.num_dirs, tf.shape(inputs)[1], self._num_units])
            states = [tf.zeros(shape, dtype=self._plain_dtype)] * self._states
        else:
            states = [tf.convert_to_tensor(s, dtype=self._plain_dtype) for s in initial_state]
            if not time_major:
                states = [tf.transpose(s, [1, 0, 2]) for s in states]
        states = [tf.unstack(s, self._num_layers * self.num_dirs, axis=0) for s in states]
        outputs, finals = inputs, []
        for layer, weights in enumerate(self._canonical):
            if layer > 0 and training and self._dropout > 0:
                outputs = tf.nn.dropout(outputs, rate=self._dropout, seed=self._seed)
            runs = []
            for way, variables in enumerate(weights):
                index = layer * self.num_dirs + way
                state = self._state([s[index] for s in states])
                with tf.compat.v1.name_scope(f"layer_{layer}_{('fw', 'bw')[way]}"):
                    runs.append(self._run(variables, outputs, state, sequence_lengths, backward=way == 1))
            outputs = tf.concat([out for out, _ in runs], 2) if len(runs) > 1 else runs[0][0]
            finals.extend(final for _, final in runs)
        result = tuple(tf.stack(list(s), 0) for s in zip(*(self._state_list(f) for f in finals)))
        if not time_major:
            outputs = tf.transpose(outputs, [1, 0, 2])
            result = tuple(tf.transpose(s, [1, 0, 2]) for s in result)
        return outputs, result

    def _run(self, variables, inputs, state, sequence_lengths, backward):
        cell = _StepCell(lambda x, s: self._step(x, s, variables), self._state_size(), self._num_units)
        if backward:
            inputs = _reverse(inputs, sequence_lengths)
        outputs, final = tf.compat.v1.nn.dynamic_rnn(
            cell, inputs, sequence_length=sequence_lengths, initial_state=state, time_major=True
        )
        return (_reverse(outputs, sequence_lengths) if backward else outputs), final


def _reverse(sequence, lengths):
    if lengths is None:
        return tf.reverse(sequence, [0])
    return tf.reverse_sequence(sequence, tf.cast(lengths, tf.int64), seq_axis=0, batch_axis=1)


class CudnnLSTM(_CudnnRNN):
    """``tf.contrib.cudnn_rnn.CudnnLSTM``: a stack of cuDNN LSTM layers, computed as ``CudnnCompatibleLSTMCell``
    computes (see ``_CudnnRNN`` for the arguments; ``layer(inputs)`` returns ``(outputs, (h, c))``)."""

    _rnn_mode = CUDNN_LSTM
    _num_params_per_layer = CUDNN_LSTM_PARAMS_PER_LAYER
    _states = 2

    def _canonical_weights(self, prefix, width, kernel_init, bias_init):
        # cuDNN's W (input) and R (recurrent) matrices per gate, [num_units, width], stacked into the kernel.
        blocks = [(width, self._num_units)] * 4
        return (
            self._variable(f"{prefix}/kernel", [width + self._num_units, 4 * self._num_units], (kernel_init, blocks)),
            self._variable(f"{prefix}/bias", [4 * self._num_units], (bias_init, 4)),
        )

    def _state_size(self):
        return _LSTMStateTuple(self._num_units, self._num_units)

    def _state(self, hc):
        return _LSTMStateTuple(hc[1], hc[0])

    def _state_list(self, final):
        return [final.h, final.c]

    def _step(self, inputs, state, variables):
        return _lstm_step(inputs, state, *variables)


class CudnnGRU(_CudnnRNN):
    """``tf.contrib.cudnn_rnn.CudnnGRU``: a stack of cuDNN GRU layers, computed as ``CudnnCompatibleGRUCell``
    computes (see ``_CudnnRNN`` for the arguments; ``layer(inputs)`` returns ``(outputs, (h,))``)."""

    _rnn_mode = CUDNN_GRU
    _num_params_per_layer = CUDNN_GRU_PARAMS_PER_LAYER
    _states = 1

    def _canonical_weights(self, prefix, width, kernel_init, bias_init):
        units = self._num_units
        return (
            self._variable(f"{prefix}/gates/kernel", [width + units, 2 * units], (kernel_init, [(width, units)] * 2)),
            self._variable(f"{prefix}/gates/bias", [2 * units], (bias_init, 2)),
            self._variable(f"{prefix}/candidate/input_projection/kernel", [width, units], (kernel_init, None)),
            self._variable(f"{prefix}/candidate/hidden_projection/kernel", [units, units], (kernel_init, None)),
            self._variable(f"{prefix}/candidate/input_projection/bias", [units], (bias_init, None)),
            self._variable(f"{prefix}/candidate/hidden_projection/bias", [units], (bias_init, None)),
        )

    def _state_size(self):
        return self._num_units

    def _state(self, h):
        return h[0]

    def _state_list(self, final):
        return [final]

    def _step(self, inputs, state, variables):
        return _gru_step(inputs, state, variables)


def _known_depth(shape, owner):
    shape = tf.TensorShape(shape)
    if shape.rank is None or shape[-1] is None:
        raise NpuArgumentError(f"the last dimension of the inputs of {owner} must be known, got shape {shape}")
    return int(shape[-1])


def _skip_input_error(what):
    return NotAvailableError(
        f"input_mode {what} is not provided by npu_bridge's CudnnLSTM / CudnnGRU (cuDNN's skip_input has no "
        f"canonical input weights); allowed: {CUDNN_INPUT_LINEAR_MODE!r}, or {CUDNN_INPUT_AUTO_MODE!r} with an "
        "input size other than num_units"
    )


def _positive_int(value, argument):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise NpuArgumentTypeError(f"{argument} must be an int, got {value!r}")
    if value <= 0:
        raise NpuArgumentError(f"{argument} must be positive, got {value}")
    return int(value)
