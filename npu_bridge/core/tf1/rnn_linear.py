"""``_Linear``: the private helper of TensorFlow 1.x's RNN cells that TF1-era custom cells import
(``rnn_cell_impl._Linear``, ``contrib.rnn.python.ops.core_rnn_cell._Linear``); TensorFlow 2.21 no longer has it.

Kept apart from the cells so that ``aliases`` can add it to ``rnn_cell_impl`` without importing Keras.
"""

import numbers

import tensorflow as tf

from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError


class _Linear:
    """``concat(args, 1) @ kernel (+ bias)`` for 2-D tensors ``args``.

    Creates its variables at construction, in the current variable scope: ``kernel`` [sum of the depths of
    ``args``, output_size] and, with ``build_bias``, ``bias`` [output_size].

    Args:
      args: a 2-D tensor [batch, depth] or a list of them, the depths known.
      output_size: int, the number of output columns.
      build_bias: whether to create and add ``bias``.
      bias_initializer: initializer of ``bias`` (default zeros).
      kernel_initializer: initializer of ``kernel`` (default: the variable scope's).

    Raises:
      NpuArgumentError: ``args`` is empty, a tensor is not 2-D or of unknown depth, ``output_size`` is not positive.
      NpuArgumentTypeError: ``output_size`` is not an int.
    """

    def __init__(self, args, output_size, build_bias, bias_initializer=None, kernel_initializer=None):
        if isinstance(output_size, bool) or not isinstance(output_size, numbers.Integral):
            raise NpuArgumentTypeError(f"output_size must be an int, got {output_size!r}")
        if output_size <= 0:
            raise NpuArgumentError(f"output_size must be positive, got {output_size}")
        self._is_sequence = isinstance(args, (list, tuple))
        tensors = self._tensors(args)
        depths = []
        for tensor in tensors:
            if tensor.shape.rank != 2 or tensor.shape[1] is None:
                raise NpuArgumentError(
                    f"args must be 2-D tensors [batch, depth] of known depth, got one of shape {tensor.shape}"
                )
            depths.append(tensor.shape[1])
        dtype = tensors[0].dtype
        self._kernel = tf.compat.v1.get_variable(
            "kernel", [sum(depths), output_size], dtype=dtype, initializer=kernel_initializer
        )
        self._bias = None
        if build_bias:
            initializer = bias_initializer or tf.compat.v1.constant_initializer(0.0, dtype=dtype)
            self._bias = tf.compat.v1.get_variable("bias", [output_size], dtype=dtype, initializer=initializer)

    def __call__(self, args):
        """Returns ``concat(args, 1) @ kernel (+ bias)``, [batch, output_size]."""
        tensors = self._tensors(args)
        joined = tensors[0] if len(tensors) == 1 else tf.concat(tensors, 1)
        result = tf.matmul(joined, self._kernel)
        return result if self._bias is None else tf.nn.bias_add(result, self._bias)

    def _tensors(self, args):
        tensors = list(args) if self._is_sequence else [args]
        if not tensors or any(a is None for a in tensors):
            raise NpuArgumentError(f"args must be a tensor or a non-empty list of tensors, got {args!r}")
        return [tf.convert_to_tensor(a) for a in tensors]
