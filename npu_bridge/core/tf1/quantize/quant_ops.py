"""The fake-quantization layers the rewrite inserts: ``FakeQuantWithMinMaxVars`` with ``min`` / ``max`` variables.

Each layer is a variable scope (``<context>/weights_quant``, ``<context>/act_quant``, unique-ified as variable scopes
are) holding two float variables ``min`` and ``max`` (non-trainable, global, aggregated by mean). In a training graph
they follow the range of what flows through: the last batch's range for weights (``AssignMinLast`` /
``AssignMaxLast``), an exponential moving average of the batch ranges for activations (``AssignMinEma`` /
``AssignMaxEma``, TensorFlow's ``assign_moving_average``, zero-debiased); the range always holds 0. An eval graph only
reads them, so it quantizes with the ranges training learned (restored from its checkpoint).
"""

import tensorflow as tf
from tensorflow.python.training import moving_averages

_v1 = tf.compat.v1


def quantize(
    inputs,
    name_prefix,
    is_training,
    moving_average,
    init_min=-6.0,
    init_max=6.0,
    ema_decay=0.999,
    num_bits=8,
    narrow_range=False,
    symmetric=False,
    vars_collection=None,
):
    """Fake-quantizes ``inputs`` over a learned range.

    Args:
      inputs: the float tensor to quantize.
      name_prefix: the variable scope's default name ("conv/weights_quant").
      is_training: True: the range follows ``inputs``; False: the variables' values are used as they are.
      moving_average: True: the range is an EMA of batch ranges (activations); False: the last batch's (weights).
      init_min, init_max: the variables' initial values.
      ema_decay: the EMA's decay.
      num_bits: the bits of the quantized values.
      narrow_range: True: quantize to [1, 2^bits - 1] instead of [0, 2^bits - 1] (weights).
      symmetric: True: the range is symmetric around 0 (as far as the two's complement range allows).
      vars_collection: a collection the ``min`` / ``max`` variables join besides the global variables.
    Returns:
      The output of the ``FakeQuantWithMinMaxVars`` op.
    """
    with _v1.variable_scope(None, default_name=name_prefix, values=[inputs]) as scope:
        scope.set_partitioner(None)
        collections = [_v1.GraphKeys.GLOBAL_VARIABLES] + ([vars_collection] if vars_collection else [])
        min_var, max_var = (
            _v1.get_variable(
                which,
                shape=[],
                initializer=_v1.constant_initializer(initial),
                collections=collections,
                trainable=False,
                aggregation=_v1.VariableAggregation.MEAN,
            )
            for which, initial in (("min", init_min), ("max", init_max))
        )
        if not is_training:
            return _fake_quant(inputs, min_var, max_var, num_bits, narrow_range)
        range_min, range_max = _batch_range(inputs, num_bits, narrow_range, symmetric)
        if moving_average:
            new_min = moving_averages.assign_moving_average(min_var, range_min, ema_decay, name="AssignMinEma")
            new_max = moving_averages.assign_moving_average(max_var, range_max, ema_decay, name="AssignMaxEma")
        else:
            new_min = _v1.assign(min_var, range_min, name="AssignMinLast")
            new_max = _v1.assign(max_var, range_max, name="AssignMaxLast")
        return _fake_quant(inputs, new_min, new_max, num_bits, narrow_range)


def _batch_range(inputs, num_bits, narrow_range, symmetric):
    """The range of this batch of ``inputs``, widened to hold 0 (and made symmetric when asked)."""
    batch_min = tf.reduce_min(inputs, name="BatchMin")
    batch_max = tf.reduce_max(inputs, name="BatchMax")
    if not symmetric:
        return tf.minimum(batch_min, 0.0), tf.maximum(batch_max, 0.0)
    # two's complement has one more negative value than positive ones, except on the narrow range
    ratio = -1.0 if narrow_range else -((1 << num_bits) - 2) / (1 << num_bits)
    return tf.minimum(batch_min, batch_max / ratio), tf.maximum(batch_max, batch_min * ratio)


def _fake_quant(inputs, min_value, max_value, num_bits, narrow_range):
    return tf.quantization.fake_quant_with_min_max_vars(
        inputs, min_value, max_value, num_bits=num_bits, narrow_range=narrow_range
    )
