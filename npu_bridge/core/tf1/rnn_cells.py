"""``tf.contrib.rnn``'s extra cells of TensorFlow 1.15 for the TF1 mode, on TensorFlow 2.21 (graph mode).

``LayerNormBasicLSTMCell``, ``LayerNormLSTMCell`` and ``NASCell`` (``tf.compat.v1.nn.rnn_cell.RNNCell``
subclasses, usable with ``tf.compat.v1.nn.dynamic_rnn``), ``stack_bidirectional_rnn``,
``stack_bidirectional_dynamic_rnn``, ``_Linear``, and legacy_seq2seq's ``EmbeddingWrapper`` and
``OutputProjectionWrapper`` (contrib.rnn's in TensorFlow 1.15). The contrib shim also
uses this module for upstream's ``contrib.rnn.python.ops.{rnn_cell,core_rnn_cell,rnn}`` modules, and ``ops``
for ``contrib.rnn.ops.gen_lstm_ops`` (the block LSTM ops are in ``gen_rnn_ops`` in TensorFlow 2.21).
"""

import numbers
import types

import tensorflow as tf
from tensorflow.python.ops import gen_rnn_ops

from npu_bridge.core.runtime.errors import NotProvidedError, NpuArgumentError, NpuArgumentTypeError
from npu_bridge.core.tf1.rnn_linear import _Linear

__all__ = [
    "LayerNormBasicLSTMCell",
    "LayerNormLSTMCell",
    "NASCell",
    "_Linear",
    "stack_bidirectional_dynamic_rnn",
    "stack_bidirectional_rnn",
]

ops = types.SimpleNamespace(gen_lstm_ops=gen_rnn_ops)

_LAYER_NORM_EPSILON = 1e-12  # the variance epsilon of TF 1.15's contrib.layers.layer_norm, which the cell used
_RNNCell = tf.compat.v1.nn.rnn_cell.RNNCell
_LSTMStateTuple = tf.compat.v1.nn.rnn_cell.LSTMStateTuple


class LayerNormBasicLSTMCell(_RNNCell):
    """LSTM cell with layer normalization and recurrent dropout (``tf.contrib.rnn.LayerNormBasicLSTMCell``).

    One step: [i, j, f, o] = [inputs, h] @ kernel (+ bias), split in four; with ``layer_norm`` each of the four is
    layer-normalized on its own (LN(v) = (v - mean) / sqrt(variance + 1e-12) * gamma + beta over the units); then
    c' = c * sigmoid(f + forget_bias) + sigmoid(i) * dropout(activation(j)), c' = LN(c') with ``layer_norm``, and
    h' = activation(c') * sigmoid(o). As in TensorFlow 1.15, the state keeps the normalized c', and there is no
    ``bias`` with ``layer_norm`` (the shifts take its place), so TF 1.15 checkpoints load.

    Variables (below the cell's scope, ``.../layer_norm_basic_lstm_cell/``): ``kernel`` [input depth + num_units,
    4 * num_units]; without ``layer_norm`` ``bias`` [4 * num_units] (both initialised by the variable scope's
    initializer, glorot uniform when it has none); with it ``input/gamma``, ``input/beta``,
    ``transform/...``, ``forget/...``, ``output/...`` (the gates i, j, f, o) and ``state/...`` (c'), [num_units]
    each, initialised to ``norm_gain`` (gamma) and ``norm_shift`` (beta).

    Args:
      num_units: int, the number of units.
      forget_bias: float added to the forget gate's pre-activation.
      input_size: deprecated and unused (as in TensorFlow 1.15).
      activation: activation of the candidate and of the cell output.
      layer_norm: whether to apply layer normalization.
      norm_gain: initial gamma.
      norm_shift: initial beta.
      dropout_keep_prob: keep probability of the dropout on the candidate: a float in (0, 1] or a scalar tensor.
      dropout_prob_seed: seed of that dropout.
      reuse: whether to reuse the variables of an existing scope.
      **kwargs: ``name``, ``dtype`` of the layer.

    Raises:
      NpuArgumentError: ``num_units`` is not positive, a float ``dropout_keep_prob`` is outside (0, 1].
      NpuArgumentTypeError: ``num_units`` is not an int.
    """

    def __init__(
        self,
        num_units,
        forget_bias=1.0,
        input_size=None,
        activation=tf.tanh,
        layer_norm=True,
        norm_gain=1.0,
        norm_shift=0.0,
        dropout_keep_prob=1.0,
        dropout_prob_seed=None,
        reuse=None,
        **kwargs,
    ):
        del input_size  # unused upstream too
        self._num_units = _positive_int(num_units, "num_units")
        if isinstance(dropout_keep_prob, (int, float)) and not 0 < dropout_keep_prob <= 1:
            raise NpuArgumentError(f"dropout_keep_prob must be in (0, 1], got {dropout_keep_prob!r}")
        super().__init__(_reuse=reuse, **kwargs)
        self._forget_bias = forget_bias
        self._activation = activation
        self._layer_norm = layer_norm
        self._norm_gain = norm_gain
        self._norm_shift = norm_shift
        self._keep_prob = dropout_keep_prob
        self._seed = dropout_prob_seed

    @property
    def state_size(self):
        return _LSTMStateTuple(self._num_units, self._num_units)

    @property
    def output_size(self):
        return self._num_units

    def call(self, inputs, state):
        c, h = state
        args = tf.concat([inputs, h], 1)
        # No initializers given: the kernel and the bias take the variable scope's (glorot uniform by default), as
        # in TensorFlow 1.15 (a bias of zeros would differ under a scope initializer).
        kernel = tf.compat.v1.get_variable("kernel", [args.shape[-1], 4 * self._num_units], dtype=args.dtype)
        gates = tf.matmul(args, kernel)
        if not self._layer_norm:
            gates = tf.nn.bias_add(gates, tf.compat.v1.get_variable("bias", [4 * self._num_units], dtype=args.dtype))
        i, j, f, o = tf.split(gates, 4, axis=1)
        if self._layer_norm:
            i, j, f, o = (self._norm(v, s) for v, s in zip((i, j, f, o), ("input", "transform", "forget", "output")))
        candidate = self._activation(j)
        if not isinstance(self._keep_prob, (int, float)) or self._keep_prob < 1:
            candidate = tf.nn.dropout(candidate, rate=1 - self._keep_prob, seed=self._seed)
        new_c = c * tf.sigmoid(f + self._forget_bias) + tf.sigmoid(i) * candidate
        if self._layer_norm:
            new_c = self._norm(new_c, "state")
        new_h = self._activation(new_c) * tf.sigmoid(o)
        return new_h, _LSTMStateTuple(new_c, new_h)

    def _norm(self, value, scope):
        return _layer_norm(value, scope, self._norm_gain, self._norm_shift)


def _layer_norm(value, scope, gain, shift):
    """contrib.layers.layer_norm as TensorFlow 1.15's cells used it: over the last axis, with ``scope/gamma``
    (initialised to ``gain``) and ``scope/beta`` (to ``shift``)."""
    units = value.shape[-1]
    with tf.compat.v1.variable_scope(scope):
        gamma = tf.compat.v1.get_variable("gamma", [units], value.dtype, tf.compat.v1.constant_initializer(gain))
        beta = tf.compat.v1.get_variable("beta", [units], value.dtype, tf.compat.v1.constant_initializer(shift))
    mean, variance = tf.nn.moments(value, [1], keepdims=True)
    return tf.nn.batch_normalization(value, mean, variance, beta, gamma, _LAYER_NORM_EPSILON)


class LayerNormLSTMCell(_RNNCell):
    """LSTM cell with optional layer normalization, peepholes, cell clipping and projection
    (``tf.contrib.rnn.LayerNormLSTMCell``).

    One step, with m the previous output: [i, j, f, o] = [inputs, m] @ kernel, plus ``bias`` without
    ``layer_norm``; with ``layer_norm`` each of the four is layer-normalized instead (over the units, epsilon 1e-12,
    gamma ``norm_gain``, beta ``norm_shift``) and ``bias`` exists but is not used, as in TensorFlow 1.15 (so its
    checkpoints load). Then

      c' = sigmoid(f + forget_bias [+ w_f_diag * c]) * c + sigmoid(i [+ w_i_diag * c]) * activation(j)
      c' = LN(c') with ``layer_norm``; clipped to [-cell_clip, cell_clip] with ``cell_clip``
      m' = sigmoid(o [+ w_o_diag * c']) * activation(c')    (the bracketed terms with ``use_peepholes``)
      m' = m' @ projection/kernel with ``num_proj``; clipped to [-proj_clip, proj_clip] with ``proj_clip``

    Variables, below the cell's scope (``.../layer_norm_lstm_cell/``): ``kernel`` [input depth + output size,
    4 * num_units] (``initializer``, else the variable scope's), ``bias`` [4 * num_units] (zeros); with
    ``layer_norm`` ``input``, ``transform``, ``forget``, ``output`` and ``state``, each with ``gamma`` and ``beta``
    [num_units]; with ``use_peepholes`` ``w_f_diag``, ``w_i_diag``, ``w_o_diag`` [num_units]; with ``num_proj``
    ``projection/kernel`` [num_units, num_proj]. The state is ``LSTMStateTuple(c, m)``.

    Args:
      num_units: int, the number of units.
      use_peepholes: whether to add the diagonal (peephole) connections.
      cell_clip: the bound of the cell state (None: no clipping).
      initializer: the initializer of the kernels and peepholes (None: the variable scope's).
      num_proj: int, the output size of the projection (None: no projection).
      proj_clip: the bound of the projected output (None: no clipping; used with ``num_proj`` only).
      forget_bias: float added to the forget gate's pre-activation.
      activation: activation of the candidate and of the output (default tanh).
      layer_norm: whether to apply layer normalization.
      norm_gain: initial gamma.
      norm_shift: initial beta.
      reuse: whether to reuse the variables of an existing scope.

    Raises:
      NpuArgumentError: ``num_units`` or ``num_proj`` is not positive, or the inputs' depth is unknown.
      NpuArgumentTypeError: ``num_units`` or ``num_proj`` is not an int.
    """

    def __init__(
        self,
        num_units,
        use_peepholes=False,
        cell_clip=None,
        initializer=None,
        num_proj=None,
        proj_clip=None,
        forget_bias=1.0,
        activation=None,
        layer_norm=False,
        norm_gain=1.0,
        norm_shift=0.0,
        reuse=None,
    ):
        super().__init__(_reuse=reuse)
        self._num_units = _positive_int(num_units, "num_units")
        self._num_proj = None if num_proj is None else _positive_int(num_proj, "num_proj")
        self._use_peepholes = use_peepholes
        self._cell_clip = cell_clip
        self._initializer = initializer
        self._proj_clip = proj_clip
        self._forget_bias = forget_bias
        self._activation = activation or tf.tanh
        self._layer_norm = layer_norm
        self._norm_gain = norm_gain
        self._norm_shift = norm_shift

    @property
    def state_size(self):
        return _LSTMStateTuple(self._num_units, self.output_size)

    @property
    def output_size(self):
        return self._num_proj or self._num_units

    def call(self, inputs, state):
        c_prev, m_prev = state
        if inputs.shape.with_rank(2)[1] is None:
            raise NpuArgumentError(f"LayerNormLSTMCell: the depth of the inputs must be known, got {inputs.shape}")
        dtype = inputs.dtype
        sigmoid = tf.sigmoid
        with tf.compat.v1.variable_scope(tf.compat.v1.get_variable_scope(), initializer=self._initializer):
            args = tf.concat([inputs, m_prev], 1)
            width = 4 * self._num_units
            gates = tf.matmul(args, tf.compat.v1.get_variable("kernel", [args.shape[-1], width], dtype))
            bias = tf.compat.v1.get_variable("bias", [width], dtype, tf.compat.v1.constant_initializer(0.0))
            i, j, f, o = tf.split(gates if self._layer_norm else tf.nn.bias_add(gates, bias), 4, axis=1)
            if self._layer_norm:
                i, j, f, o = (
                    _layer_norm(v, scope, self._norm_gain, self._norm_shift)
                    for v, scope in zip((i, j, f, o), ("input", "transform", "forget", "output"))
                )
            if self._use_peepholes:
                w_f, w_i, w_o = (
                    tf.compat.v1.get_variable(name, [self._num_units], dtype)
                    for name in ("w_f_diag", "w_i_diag", "w_o_diag")
                )
                f, i = f + w_f * c_prev, i + w_i * c_prev
            c = sigmoid(f + self._forget_bias) * c_prev + sigmoid(i) * self._activation(j)
            if self._layer_norm:
                c = _layer_norm(c, "state", self._norm_gain, self._norm_shift)
            if self._cell_clip is not None:
                c = tf.clip_by_value(c, -self._cell_clip, self._cell_clip)
            if self._use_peepholes:
                o = o + w_o * c
            m = sigmoid(o) * self._activation(c)
            if self._num_proj is not None:
                with tf.compat.v1.variable_scope("projection"):
                    m = tf.matmul(m, tf.compat.v1.get_variable("kernel", [self._num_units, self._num_proj], dtype))
                if self._proj_clip is not None:
                    m = tf.clip_by_value(m, -self._proj_clip, self._proj_clip)
        return m, _LSTMStateTuple(c, m)


class NASCell(_RNNCell):
    """The recurrent cell found by Neural Architecture Search (``tf.contrib.rnn.NASCell``).

    Follows the description of Zoph & Le, "Neural Architecture Search with Reinforcement Learning" (ICLR 2017,
    https://arxiv.org/abs/1611.01578), as TensorFlow 1.15 documents the cell. With the eight input projections
    x0..x7 (column blocks of inputs @ kernel) and the eight recurrent ones m0..m7 (of h @ recurrent_kernel + bias):

      first layer:  l0 = sigmoid(x0 + m0)  l1 = relu(x1 + m1)  l2 = sigmoid(x2 + m2)  l3 = relu(x3 * m3)
                    l4 = tanh(x4 + m4)     l5 = sigmoid(x5 + m5)  l6 = tanh(x6 + m6)  l7 = sigmoid(x7 + m7)
      second layer: a = tanh(l0 * l1)  b = tanh(l2 + l3)  d = tanh(l4 * l5)  e = sigmoid(l6 + l7)
      new cell:     c' = tanh(a + c) * b (the identity leaf of the tree)
      output:       h' = tanh(c' * tanh(d + e)), then h' @ projection_weights with ``num_proj``

    Variables (below ``.../nas_cell/``, made when the cell is built, so a Keras ``RNN`` layer can run it):
    ``recurrent_kernel`` [num_proj or num_units, 8 * num_units], ``kernel`` [input depth, 8 * num_units], with
    ``use_bias`` ``bias`` [8 * num_units] (zeros), with ``num_proj`` ``projection_weights`` [num_units, num_proj]. The
    state is ``LSTMStateTuple(c, h)``.

    Args:
      num_units: int, the number of units.
      num_proj: int, the output size of the projection (None: no projection).
      use_bias: whether the recurrent projections have a bias (TensorFlow 1.15's name).
      use_biases: the same, under the name npu_bridge used before (wins when given).
      reuse: whether to reuse the variables of an existing scope.
      **kwargs: ``name``, ``dtype`` of the layer.

    Raises:
      NpuArgumentError: ``num_units`` or ``num_proj`` is not positive.
      NpuArgumentTypeError: ``num_units`` or ``num_proj`` is not an int.
    """

    def __init__(self, num_units, num_proj=None, use_bias=False, reuse=None, use_biases=None, **kwargs):
        self._num_units = _positive_int(num_units, "num_units")
        self._num_proj = None if num_proj is None else _positive_int(num_proj, "num_proj")
        super().__init__(_reuse=reuse, **kwargs)
        self._use_bias = bool(use_bias if use_biases is None else use_biases)

    @property
    def state_size(self):
        return _LSTMStateTuple(self._num_units, self.output_size)

    @property
    def output_size(self):
        return self._num_proj or self._num_units

    def build(self, inputs_shape):
        depth = tf.TensorShape(inputs_shape)[-1]
        if depth is None:
            raise NpuArgumentError(f"NASCell: the depth of the inputs must be known, got shape {inputs_shape}")
        width = 8 * self._num_units
        self._recurrent_kernel = self.add_weight("recurrent_kernel", [self.output_size, width])
        self._kernel = self.add_weight("kernel", [depth, width])
        self._bias = (
            self.add_weight("bias", [width], initializer=tf.compat.v1.zeros_initializer()) if self._use_bias else None
        )
        self._projection = (
            None if self._num_proj is None else self.add_weight("projection_weights", [self._num_units, self._num_proj])
        )
        self.built = True

    def call(self, inputs, state):
        c, h = state
        recurrent = tf.matmul(h, self._recurrent_kernel)
        if self._bias is not None:
            recurrent = tf.nn.bias_add(recurrent, self._bias)
        x = tf.split(tf.matmul(inputs, self._kernel), 8, axis=1)
        m = tf.split(recurrent, 8, axis=1)
        sigmoid, relu, tanh = tf.sigmoid, tf.nn.relu, tf.tanh
        l0, l1, l2 = sigmoid(x[0] + m[0]), relu(x[1] + m[1]), sigmoid(x[2] + m[2])
        l3, l4, l5 = relu(x[3] * m[3]), tanh(x[4] + m[4]), sigmoid(x[5] + m[5])
        l6, l7 = tanh(x[6] + m[6]), sigmoid(x[7] + m[7])
        a, b, d, e = tanh(l0 * l1), tanh(l2 + l3), tanh(l4 * l5), sigmoid(l6 + l7)
        new_c = tanh(a + c) * b
        new_h = tanh(new_c * tanh(d + e))
        if self._projection is not None:
            new_h = tf.matmul(new_h, self._projection)
        return new_h, _LSTMStateTuple(new_c, new_h)


def stack_bidirectional_dynamic_rnn(
    cells_fw,
    cells_bw,
    inputs,
    initial_states_fw=None,
    initial_states_bw=None,
    dtype=None,
    sequence_length=None,
    parallel_iterations=None,
    time_major=False,
    scope=None,
    swap_memory=False,
):
    """Stacked bidirectional RNN: layer k runs ``tf.compat.v1.nn.bidirectional_dynamic_rnn`` over the
    concatenated forward and backward outputs of layer k - 1, in variable scope
    ``<scope or "stack_bidirectional_rnn">/cell_<k>``.

    Args:
      cells_fw: list of forward cells, one per layer.
      cells_bw: list of backward cells, as many as ``cells_fw``.
      inputs: [batch, time, depth] ([time, batch, depth] with ``time_major``).
      initial_states_fw: None or a list of initial states of the forward cells.
      initial_states_bw: None or a list of initial states of the backward cells.
      dtype: dtype of the initial states when they are not given.
      sequence_length: int [batch], the length of each sequence.
      parallel_iterations: passed to ``dynamic_rnn``.
      time_major: whether ``inputs`` and the outputs are time-major.
      scope: the variable scope (default "stack_bidirectional_rnn").
      swap_memory: passed to ``dynamic_rnn``.

    Returns:
      (outputs, output_states_fw, output_states_bw): outputs [batch, time, fw depth + bw depth] of the last layer
      (time-major with ``time_major``), and the tuples of the final states of the forward and backward cells.

    Raises:
      NpuArgumentError: no cells, cell lists of different lengths, initial state lists of another length.
      NpuArgumentTypeError: a cell list or an initial state list is not a list or tuple.
    """
    _checked_layers(cells_fw, cells_bw, initial_states_fw, initial_states_bw)
    states_fw, states_bw = [], []
    layer_inputs = inputs
    with tf.compat.v1.variable_scope(scope or "stack_bidirectional_rnn"):
        for index, (cell_fw, cell_bw) in enumerate(zip(cells_fw, cells_bw)):
            with tf.compat.v1.variable_scope(f"cell_{index}"):
                (output_fw, output_bw), (state_fw, state_bw) = tf.compat.v1.nn.bidirectional_dynamic_rnn(
                    cell_fw,
                    cell_bw,
                    layer_inputs,
                    initial_state_fw=None if initial_states_fw is None else initial_states_fw[index],
                    initial_state_bw=None if initial_states_bw is None else initial_states_bw[index],
                    sequence_length=sequence_length,
                    parallel_iterations=parallel_iterations,
                    dtype=dtype,
                    swap_memory=swap_memory,
                    time_major=time_major,
                )
            layer_inputs = tf.concat([output_fw, output_bw], 2)
            states_fw.append(state_fw)
            states_bw.append(state_bw)
    return layer_inputs, tuple(states_fw), tuple(states_bw)


def stack_bidirectional_rnn(
    cells_fw,
    cells_bw,
    inputs,
    initial_states_fw=None,
    initial_states_bw=None,
    dtype=None,
    sequence_length=None,
    scope=None,
):
    """Stacked bidirectional RNN over a list of time steps (the static version of
    ``stack_bidirectional_dynamic_rnn``): layer k runs ``tf.compat.v1.nn.static_bidirectional_rnn`` over the
    depth-concatenated forward and backward outputs of layer k - 1, with its variables in
    ``<scope or "stack_bidirectional_rnn">/cell_<k>/fw`` and ``.../bw`` (TensorFlow 1.15's names).

    Args:
      cells_fw: list of forward cells, one per layer.
      cells_bw: list of backward cells, as many as ``cells_fw``.
      inputs: a list of T tensors [batch, depth] (or nested tuples of them), one per time step.
      initial_states_fw: None or a list of initial states of the forward cells.
      initial_states_bw: None or a list of initial states of the backward cells.
      dtype: dtype of the initial states when they are not given.
      sequence_length: int [batch], the length of each sequence.
      scope: the variable scope (default "stack_bidirectional_rnn").

    Returns:
      (outputs, output_states_fw, output_states_bw): the list of T outputs [batch, fw depth + bw depth] of the last
      layer, and the tuples of the final states of the forward and backward cells.

    Raises:
      NpuArgumentError: no cells, cell lists of different lengths, initial state lists of another length.
      NpuArgumentTypeError: a cell list or an initial state list is not a list or tuple, or ``inputs`` is not a
        non-empty list of time steps.
    """
    layers = _checked_layers(cells_fw, cells_bw, initial_states_fw, initial_states_bw)
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise NpuArgumentTypeError(
            f"stack_bidirectional_rnn: inputs must be a non-empty list of time steps (use "
            f"stack_bidirectional_dynamic_rnn for one [batch, time, depth] tensor), got {inputs!r}"
        )
    states_fw, states_bw = [], []
    layer_inputs = list(inputs)
    with tf.compat.v1.variable_scope(scope or "stack_bidirectional_rnn"):
        for index in range(layers):
            with tf.compat.v1.variable_scope(f"cell_{index}") as cell_scope:
                layer_inputs, state_fw, state_bw = tf.compat.v1.nn.static_bidirectional_rnn(
                    cells_fw[index],
                    cells_bw[index],
                    layer_inputs,
                    initial_state_fw=initial_states_fw[index] if initial_states_fw else None,
                    initial_state_bw=initial_states_bw[index] if initial_states_bw else None,
                    dtype=dtype,
                    sequence_length=sequence_length,
                    scope=cell_scope,
                )
            states_fw.append(state_fw)
            states_bw.append(state_bw)
    return layer_inputs, tuple(states_fw), tuple(states_bw)


def _checked_layers(cells_fw, cells_bw, initial_states_fw, initial_states_bw):
    """The number of layers of a stacked bidirectional RNN, after checking its lists."""
    layers = _same_length(cells_fw, "cells_fw", cells_bw, "cells_bw")
    if not layers:
        raise NpuArgumentError("cells_fw and cells_bw must hold at least one cell each, got none")
    if initial_states_fw is not None:
        _same_length(cells_fw, "cells_fw", initial_states_fw, "initial_states_fw")
    if initial_states_bw is not None:
        _same_length(cells_bw, "cells_bw", initial_states_bw, "initial_states_bw")
    return layers


# contrib.rnn's (core_rnn_cell's) wrappers, written for legacy_seq2seq: imported when first used
_WRAPPERS = ("EmbeddingWrapper", "OutputProjectionWrapper")


def __getattr__(name):  # PEP 562: the module stands for contrib.rnn's own modules, so name what it lacks
    if name in _WRAPPERS:
        from npu_bridge.core.tf1.legacy_seq2seq import wrappers

        return getattr(wrappers, name)
    raise NotProvidedError(
        f"tf.contrib.rnn.{name} is not provided by npu_bridge's TF1 mode (of contrib.rnn's own cells it provides "
        "LayerNormBasicLSTMCell, LayerNormLSTMCell, NASCell, EmbeddingWrapper, OutputProjectionWrapper, "
        "stack_bidirectional_rnn, stack_bidirectional_dynamic_rnn and _Linear); see docs/tf1_mode.md"
    )


def _positive_int(value, argument):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise NpuArgumentTypeError(f"{argument} must be an int, got {value!r}")
    if value <= 0:
        raise NpuArgumentError(f"{argument} must be positive, got {value}")
    return int(value)


def _same_length(first, first_name, second, second_name):
    for value, argument in ((first, first_name), (second, second_name)):
        if not isinstance(value, (list, tuple)):
            raise NpuArgumentTypeError(f"{argument} must be a list (one entry per layer), got {value!r}")
    if len(first) != len(second):
        raise NpuArgumentError(
            f"{second_name} must have as many entries as {first_name} ({len(first)}), got {len(second)}"
        )
    return len(first)
