"""The NPU's fused RNN layers: ``DynamicRNN`` (LSTM), ``DynamicGRUV2`` and ``DynamicAUGRU``.

Inputs are time-major, x: [time, batch, input_size], with a known input_size. Every layer returns its per-step
values stacked over time, as Ascend's ops do (the gate values are what the NPU's backward kernels reuse); the
recurrence is a ``tf.scan``, so the layers run on CPU and GPU and TensorFlow differentiates them.

With ``seq_length`` ([batch] ints), steps at or beyond a sequence's length leave the state unchanged and
output zeros. ``direction="REDIRECTIONAL"`` runs the sequence backwards (outputs stay in input order).
Each layer call is one function call node that dumps and profiles show as one op of the Ascend type
(``composite``), whatever the number of time steps.

DynamicRNN (cell_type "LSTM"), weight [input_size + hidden, 4 * hidden] in gate order i, j, f, o:
  i, j, f, o = split([x, h] @ weight + bias);  it = sigmoid(i), jt = tanh(j), ft = sigmoid(f + forget_bias),
  ot = sigmoid(o);  c = ft * c + it * jt (clipped to +-cell_clip when cell_clip > 0);  tanhc = tanh(c);
  h = ot * tanhc.  Outputs: y, output_h, output_c, i, j, f, o, tanhc (the gate outputs after activation).
DynamicGRUV2, weight_input [input_size, 3 * hidden], weight_hidden [hidden, 3 * hidden] in ``gate_order``
("zrh" or "rzh"; h is the candidate n), biases [3 * hidden]:
  z = sigmoid(x Wz + bz + h Uz + cz), r = sigmoid(x Wr + br + h Ur + cr),
  hidden_new = h Un + cn; n = tanh(x Wn + bn + r * hidden_new)  (reset_after=True)
  hidden_new = (r * h) Un + cn; n = tanh(x Wn + bn + hidden_new) (reset_after=False)
  h = z * h + (1 - z) * n.  Outputs: y, output_h, update (z), reset (r), new (n), hidden_new.
DynamicAUGRU (DIEN's attention GRU) takes weight_att [time, batch] and updates by the attention-scaled gate:
  update_att = weight_att * z;  h = (1 - update_att) * h + update_att * n.
  Outputs: y, output_h, update, update_att, reset, new, hidden_new.
"""

import tensorflow as tf

from npu_bridge.core.compute import composite
from npu_bridge.core.compute.tensors import as_dtype
from npu_bridge.core.runtime import log
from npu_bridge.core.runtime.errors import NpuArgumentError

UNIDIRECTIONAL = "UNIDIRECTIONAL"
BIDIRECTIONAL = "BIDIRECTIONAL"
REDIRECTIONAL = "REDIRECTIONAL"
_DIRECTIONS = (UNIDIRECTIONAL, REDIRECTIONAL)


def _require(name, value, allowed, why):
    if value not in allowed:
        raise NpuArgumentError(
            f"{name}={value!r} is not supported: {why} (allowed: {', '.join(repr(a) for a in allowed)})"
        )


class _DynamicBasic(tf.compat.v1.layers.Layer):
    """Argument checks and the time loop shared by the three layers."""

    def __init__(
        self,
        hidden_size,
        dtype,
        direction,
        cell_depth,
        keep_prob,
        cell_clip,
        num_proj,
        time_major,
        activation,
        is_training,
        name,
    ):
        super().__init__(dtype=dtype, name=name)
        if not isinstance(hidden_size, int) or hidden_size < 1:
            raise NpuArgumentError(f"hidden_size must be a positive integer, got {hidden_size!r}")
        _require(
            "direction",
            direction,
            _DIRECTIONS,
            "the NPU op runs one direction; stack two layers for a bidirectional RNN",
        )
        _require("cell_depth", cell_depth, (1,), "the NPU op has one layer")
        _require("num_proj", num_proj, (0,), "the NPU op has no projection")
        _require("time_major", time_major, (True,), "the NPU op takes [time, batch, input] inputs")
        _require("activation", activation, ("tanh",), "the NPU op uses tanh")
        if keep_prob != 1.0:
            log.info_once(
                ("rnn-keep-prob", type(self).__name__),
                "%s: keep_prob is reserved by the NPU op and has no effect",
                type(self).__name__,
            )
        self._hidden_size = hidden_size
        self._direction = direction
        self._cell_clip = cell_clip
        self._is_training = is_training

    @staticmethod
    def _input_size(input_shape):
        shape = tf.TensorShape(input_shape)
        if shape.rank != 3 or shape[-1] is None:
            raise NpuArgumentError(f"x must be [time, batch, input_size] with a known input_size, got {shape}")
        return int(shape[-1])

    @staticmethod
    def _composed(op_type, compute, **tensors):
        """Runs ``compute(**tensors)`` as one ``op_type`` op; tensors that are None are left out of the call.

        Returns:
          ``compute``'s outputs.
        """
        names = [name for name, value in tensors.items() if value is not None]

        def body(*args):
            return compute(**dict(zip(names, args)))

        return composite.call(op_type, body, [tensors[name] for name in names])

    @staticmethod
    def _as_input(value, dtype, name):
        return None if value is None else tf.convert_to_tensor(value, dtype=dtype, name=name)

    def _initial_state(self, x, init):
        if init is None:
            return tf.zeros(tf.stack([tf.shape(x)[1], self._hidden_size]), dtype=x.dtype)
        return tf.reshape(init, [-1, self._hidden_size])  # [1, batch, hidden] as on Ascend, or [batch, hidden]

    def _run(self, step, x, states, n_outputs, extra=(), seq_length=None):
        """Scans ``step(states, x_t, *extra_t) -> (new states, n_outputs outputs)`` over time.

        Returns:
          The per-step outputs, each [time, batch, hidden]; with seq_length, padded steps keep the states
          and output zeros (the first outputs are the states and carry them).
        """
        time = tf.shape(x)[0]
        if seq_length is None:
            valid = tf.ones(tf.stack([time, tf.shape(x)[1], 1]), dtype=x.dtype)
        else:
            positions = tf.range(time)[:, None]
            valid = tf.cast(positions < tf.cast(seq_length, tf.int32)[None, :], x.dtype)[:, :, None]
        sequences = (x, valid) + tuple(extra)
        if self._direction == REDIRECTIONAL:
            sequences = tuple(tf.reverse(s, axis=[0]) for s in sequences)
        zeros = tf.zeros_like(states[0])
        n_states = len(states)

        def body(carry, elems):
            previous = carry[:n_states]
            x_t, valid_t = elems[0], elems[1]
            new_states, outputs = step(previous, x_t, *elems[2:])
            kept = tuple(valid_t * new + (1.0 - valid_t) * old for new, old in zip(new_states, previous))
            return kept + tuple(valid_t * out for out in outputs)

        result = tf.scan(body, sequences, initializer=tuple(states) + (zeros,) * n_outputs)
        if self._direction == REDIRECTIONAL:
            result = tuple(tf.reverse(r, axis=[0]) for r in result)
        return result


class DynamicRNN(_DynamicBasic):
    """The NPU's fused LSTM over a whole sequence (see the module docstring).

    Args:
      hidden_size: units of the cell.
      dtype: dtype of the weights and computation.
      cell_type: "LSTM".
      direction: "UNIDIRECTIONAL" or "REDIRECTIONAL".
      cell_depth: 1.  use_peephole: False.  num_proj: 0.  time_major: True.  activation: "tanh".
      keep_prob: reserved by the NPU op, no effect.
      cell_clip: clip the cell state to +-cell_clip when > 0.
      forget_bias: added to the forget gate.
      is_training: accepted (the outputs are the same).
    Raises:
      ValueError: an argument the NPU op does not support.
    """

    def __init__(
        self,
        hidden_size,
        dtype,
        cell_type="LSTM",
        direction=UNIDIRECTIONAL,
        cell_depth=1,
        use_peephole=False,
        keep_prob=1.0,
        cell_clip=-1.0,
        num_proj=0,
        time_major=True,
        activation="tanh",
        forget_bias=0.0,
        is_training=True,
        name="dynamic_rnn",
    ):
        super().__init__(
            hidden_size,
            dtype,
            direction,
            cell_depth,
            keep_prob,
            cell_clip,
            num_proj,
            time_major,
            activation,
            is_training,
            name,
        )
        _require("cell_type", cell_type, ("LSTM",), "DynamicRNN is an LSTM")
        _require("use_peephole", use_peephole, (False,), "the NPU op has no peephole connections")
        self._forget_bias = forget_bias

    def build(self, input_shape):
        size = self._input_size(input_shape)
        self.weight = self.add_weight(
            "kernel",
            [size + self._hidden_size, 4 * self._hidden_size],
            initializer=tf.compat.v1.glorot_uniform_initializer(),
        )
        self.bias = self.add_weight("bias", [4 * self._hidden_size], initializer=tf.compat.v1.zeros_initializer())
        super().build(input_shape)

    def call(self, x, seq_length=None, init_h=None, init_c=None, weight=None, bias=None):
        """Returns (y, output_h, output_c, i, j, f, o, tanhc), each [time, batch, hidden]."""
        x = tf.convert_to_tensor(x)

        def compute(x, weight, bias, seq_length=None, init_h=None, init_c=None):
            forget_bias = as_dtype(self._forget_bias, x.dtype)

            def step(states, x_t):
                h, c = states
                i, j, f, o = tf.split(tf.matmul(tf.concat([x_t, h], axis=1), weight) + bias, 4, axis=1)
                it, jt, ft, ot = tf.sigmoid(i), tf.tanh(j), tf.sigmoid(f + forget_bias), tf.sigmoid(o)
                c_new = ft * c + it * jt
                if self._cell_clip > 0:
                    c_new = tf.clip_by_value(c_new, -self._cell_clip, self._cell_clip)
                tanhc = tf.tanh(c_new)
                h_new = ot * tanhc
                return (h_new, c_new), (h_new, it, jt, ft, ot, tanhc)

            h0, c0 = self._initial_state(x, init_h), self._initial_state(x, init_c)
            output_h, output_c, y, i, j, f, o, tanhc = self._run(step, x, (h0, c0), 6, seq_length=seq_length)
            return y, output_h, output_c, i, j, f, o, tanhc

        return self._composed(
            "DynamicRNN",
            compute,
            x=x,
            weight=self.weight if weight is None else weight,
            bias=self.bias if bias is None else bias,
            seq_length=seq_length,
            init_h=self._as_input(init_h, x.dtype, "init_h"),
            init_c=self._as_input(init_c, x.dtype, "init_c"),
        )


class _DynamicGRUBase(_DynamicBasic):
    """Weights and gate arithmetic shared by DynamicGRUV2 and DynamicAUGRU."""

    def __init__(
        self,
        hidden_size,
        dtype,
        direction,
        cell_depth,
        keep_prob,
        cell_clip,
        num_proj,
        time_major,
        activation,
        gate_order,
        reset_after,
        is_training,
        name,
    ):
        super().__init__(
            hidden_size,
            dtype,
            direction,
            cell_depth,
            keep_prob,
            cell_clip,
            num_proj,
            time_major,
            activation,
            is_training,
            name,
        )
        _require("gate_order", gate_order, ("zrh", "rzh"), "the NPU op orders the gates zrh or rzh")
        self._gate_order = gate_order
        self._reset_after = reset_after

    def build(self, input_shape):
        size = self._input_size(input_shape)
        hidden3 = 3 * self._hidden_size
        glorot, zeros = tf.compat.v1.glorot_uniform_initializer(), tf.compat.v1.zeros_initializer()
        self.weight_input = self.add_weight("weight_input", [size, hidden3], initializer=glorot)
        self.weight_hidden = self.add_weight("weight_hidden", [self._hidden_size, hidden3], initializer=glorot)
        self.bias_input = self.add_weight("bias_input", [hidden3], initializer=zeros)
        self.bias_hidden = self.add_weight("bias_hidden", [hidden3], initializer=zeros)
        super().build(input_shape)

    def _gates(self, weights, x_t, h):
        """Returns (z, r, n, hidden_new) of one step; weights: (weight_input, weight_hidden, bias_input,
        bias_hidden)."""
        weight_input, weight_hidden, bias_input, bias_hidden = weights
        from_x = tf.split(tf.matmul(x_t, weight_input) + bias_input, 3, axis=1)
        w_hidden = tf.split(weight_hidden, 3, axis=1)
        b_hidden = tf.split(bias_hidden, 3, axis=0)
        order = {name: index for index, name in enumerate(self._gate_order)}
        z_index, r_index, n_index = order["z"], order["r"], order["h"]
        z = tf.sigmoid(from_x[z_index] + tf.matmul(h, w_hidden[z_index]) + b_hidden[z_index])
        r = tf.sigmoid(from_x[r_index] + tf.matmul(h, w_hidden[r_index]) + b_hidden[r_index])
        if self._reset_after:
            hidden_new = tf.matmul(h, w_hidden[n_index]) + b_hidden[n_index]
            n = tf.tanh(from_x[n_index] + r * hidden_new)
        else:
            hidden_new = tf.matmul(r * h, w_hidden[n_index]) + b_hidden[n_index]
            n = tf.tanh(from_x[n_index] + hidden_new)
        return z, r, n, hidden_new

    def _clipped(self, h):
        return tf.clip_by_value(h, -self._cell_clip, self._cell_clip) if self._cell_clip > 0 else h

    def _composed_gru(self, op_type, compute, x, seq_length, init_h, **extra):
        """Runs ``compute(x, weights, seq_length, init_h, **extra)`` as one ``op_type`` op."""
        x = tf.convert_to_tensor(x)

        def unpacked(x, weight_input, weight_hidden, bias_input, bias_hidden, seq_length=None, init_h=None, **rest):
            weights = (weight_input, weight_hidden, bias_input, bias_hidden)
            return compute(x, weights, seq_length, self._initial_state(x, init_h), **rest)

        return self._composed(
            op_type,
            unpacked,
            x=x,
            weight_input=self.weight_input,
            weight_hidden=self.weight_hidden,
            bias_input=self.bias_input,
            bias_hidden=self.bias_hidden,
            seq_length=seq_length,
            init_h=self._as_input(init_h, x.dtype, "init_h"),
            **extra,
        )


class DynamicGRUV2(_DynamicGRUBase):
    """The NPU's fused GRU over a whole sequence (see the module docstring).

    Args:
      hidden_size, dtype, direction, cell_depth, keep_prob, cell_clip, num_proj, time_major, activation,
      is_training: as ``DynamicRNN``.
      gate_order: "zrh" or "rzh", the order of the gates in the weights.
      reset_after: apply the reset gate after the hidden projection (cuDNN style).
    """

    def __init__(
        self,
        hidden_size,
        dtype,
        direction=UNIDIRECTIONAL,
        cell_depth=1,
        keep_prob=1.0,
        cell_clip=-1.0,
        num_proj=0,
        time_major=True,
        activation="tanh",
        gate_order="zrh",
        reset_after=True,
        is_training=True,
        name="dynamic_gru_v2",
    ):
        super().__init__(
            hidden_size,
            dtype,
            direction,
            cell_depth,
            keep_prob,
            cell_clip,
            num_proj,
            time_major,
            activation,
            gate_order,
            reset_after,
            is_training,
            name,
        )

    def call(self, x, seq_length=None, init_h=None):
        """Returns (y, output_h, update, reset, new, hidden_new), each [time, batch, hidden]."""

        def compute(x, weights, seq_length, h0):
            def step(states, x_t):
                (h,) = states
                z, r, n, hidden_new = self._gates(weights, x_t, h)
                h_new = self._clipped(z * h + (1.0 - z) * n)
                return (h_new,), (h_new, z, r, n, hidden_new)

            output_h, y, update, reset, new, hidden_new = self._run(step, x, (h0,), 5, seq_length=seq_length)
            return y, output_h, update, reset, new, hidden_new

        return self._composed_gru("DynamicGRUV2", compute, x, seq_length, init_h)


class DynamicAUGRU(_DynamicGRUBase):
    """DIEN's attention-update GRU over a whole sequence (see the module docstring).

    Args: as ``DynamicGRUV2``.
    """

    def __init__(
        self,
        hidden_size,
        dtype,
        direction=UNIDIRECTIONAL,
        cell_depth=1,
        keep_prob=1.0,
        cell_clip=-1.0,
        num_proj=0,
        time_major=True,
        activation="tanh",
        gate_order="zrh",
        reset_after=True,
        is_training=True,
        name="dynamic_augru",
    ):
        super().__init__(
            hidden_size,
            dtype,
            direction,
            cell_depth,
            keep_prob,
            cell_clip,
            num_proj,
            time_major,
            activation,
            gate_order,
            reset_after,
            is_training,
            name,
        )

    def call(self, x, weight_att, seq_length=None, init_h=None):
        """Returns (y, output_h, update, update_att, reset, new, hidden_new), each [time, batch, hidden].

        Args:
          weight_att: [time, batch] attention scores.
        """
        x = tf.convert_to_tensor(x)

        def compute(x, weights, seq_length, h0, weight_att):
            def step(states, x_t, att_t):
                (h,) = states
                z, r, n, hidden_new = self._gates(weights, x_t, h)
                update_att = att_t * z
                h_new = self._clipped((1.0 - update_att) * h + update_att * n)
                return (h_new,), (h_new, z, update_att, r, n, hidden_new)

            attention = tf.expand_dims(weight_att, -1)
            output_h, y, update, update_att, reset, new, hidden_new = self._run(
                step, x, (h0,), 6, extra=(attention,), seq_length=seq_length
            )
            return y, output_h, update, update_att, reset, new, hidden_new

        weight_att = tf.convert_to_tensor(weight_att, dtype=x.dtype, name="weight_att")
        return self._composed_gru("DynamicAUGRU", compute, x, seq_length, init_h, weight_att=weight_att)
