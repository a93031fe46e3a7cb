"""Initializers of ``tf.contrib.cudnn_rnn``'s canonical weights drawn the way TensorFlow 1.15 drew cuDNN's
per-gate matrices and biases before converting them (``cudnn_rnn`` keeps its weights in the canonical layout)."""

import tensorflow as tf


def canonical_initializer(spec):
    """An initializer of a canonical variable from cuDNN's per-matrix initializer (as TensorFlow 1.15 initialized the
    canonical matrices, then converted them).

    ``(init, [(width, units), ...])``: a kernel, one column block per gate, each the input matrix W over the
    recurrent matrix R, both drawn as cuDNN's [units, width] / [units, units] and transposed. ``(init, n)``: a bias of
    n gates, each the sum of cuDNN's input and recurrent bias. ``(init, None)``: one matrix drawn as cuDNN's
    (transposed) or one bias.
    """
    init, blocks = spec

    def initializer(shape, dtype=None, partition_info=None):
        del partition_info
        if blocks is None:
            if len(shape) == 2:
                return tf.transpose(init([shape[1], shape[0]], dtype=dtype))
            return init(shape, dtype=dtype)
        if isinstance(blocks, int):
            size = shape[0] // blocks
            return tf.concat([init([size], dtype=dtype) + init([size], dtype=dtype) for _ in range(blocks)], 0)
        columns = []
        for width, units in blocks:
            w = tf.transpose(init([units, width], dtype=dtype))
            r = tf.transpose(init([units, units], dtype=dtype))
            columns.append(tf.concat([w, r], 0))
        return tf.concat(columns, 1)

    return initializer
