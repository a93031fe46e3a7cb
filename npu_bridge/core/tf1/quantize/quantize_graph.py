"""``tf.contrib.quantize``'s entry points: rewrite a training or eval graph in place for simulated quantization.

Each folds the batch norms into their layers (``fold_batch_norms``; tf_slim's unfused ones: ``fold_unfused``) and
then inserts the fake quantization (``rewrite``). A training graph must be rewritten before its gradients and
optimizer are added (the fake quantization is then part of the forward and backward passes); an eval graph is
rewritten the same way but reads the ranges (``.../weights_quant/min``, ``.../act_quant/max``, ...) that training
learned, from its checkpoint.
"""

import numbers

import tensorflow as tf

from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError
from npu_bridge.core.tf1.quantize import fold_batch_norms, fold_unfused, rewrite

_v1 = tf.compat.v1
_TRAINING_OPS = frozenset(
    f"{prefix}{kind}"
    for prefix in ("Apply", "ResourceApply", "SparseApply", "ResourceSparseApply")
    for kind in (
        "Adadelta",
        "Adagrad",
        "AdagradDA",
        "Adam",
        "AddSign",
        "CenteredRMSProp",
        "Ftrl",
        "FtrlV2",
        "GradientDescent",
        "Momentum",
        "PowerSign",
        "ProximalAdagrad",
        "ProximalGradientDescent",
        "RMSProp",
    )
)
_BITS = (2, 16)  # what FakeQuantWithMinMaxVars takes


def create_training_graph(input_graph=None, quant_delay=0):
    """Rewrites a training graph in place for quantization-aware training (8-bit weights and activations).

    Args:
      input_graph: the ``tf.Graph`` (None: the default graph). It must not hold optimizer ops yet.
      quant_delay: the number of steps (runs) before the quantization starts; 0 quantizes from the start
        (fine-tuning a trained float model); a model trained from scratch should train in float first.
    Raises:
      NpuArgumentError: the graph already holds optimizer ops, or an argument is out of range.
      NpuArgumentTypeError: an argument has the wrong type.
    """
    _create_graph(input_graph, True, quant_delay=_delay("quant_delay", quant_delay))


def create_eval_graph(input_graph=None):
    """Rewrites an eval graph in place for quantized evaluation with the ranges training learned.

    Args:
      input_graph: the ``tf.Graph`` (None: the default graph).
    Raises:
      NpuArgumentError: the graph holds optimizer ops.
      NpuArgumentTypeError: ``input_graph`` is not a ``tf.Graph``.
    """
    _create_graph(input_graph, False)


def experimental_create_training_graph(
    input_graph=None,
    weight_bits=8,
    activation_bits=8,
    symmetric=False,
    quant_delay=0,
    freeze_bn_delay=None,
    scope=None,
):
    """``create_training_graph`` with more choices.

    Args:
      input_graph: the ``tf.Graph`` (None: the default graph).
      weight_bits, activation_bits: the bits of the quantized weights and activations, ints in [2, 16].
      symmetric: True: ranges symmetric around 0 instead of a learned minimum and maximum.
      quant_delay: the number of steps before the quantization starts (an int >= 0, or None).
      freeze_bn_delay: None, or the step from which folded batch norms use (and stop updating) their moving
        mean and variance; it should come after ``quant_delay``, when training has almost converged.
      scope: None, or the name scope whose layers alone are rewritten.
    Raises:
      NpuArgumentError, NpuArgumentTypeError: as ``create_training_graph``.
    """
    _create_graph(
        input_graph,
        True,
        **_experimental_options(weight_bits, activation_bits, symmetric, quant_delay, freeze_bn_delay, scope),
    )


def experimental_create_eval_graph(
    input_graph=None, weight_bits=8, activation_bits=8, symmetric=False, quant_delay=None, scope=None
):
    """``create_eval_graph`` with the choices of ``experimental_create_training_graph`` (which must match the
    training graph's)."""
    _create_graph(
        input_graph, False, **_experimental_options(weight_bits, activation_bits, symmetric, quant_delay, None, scope)
    )


def _experimental_options(weight_bits, activation_bits, symmetric, quant_delay, freeze_bn_delay, scope):
    """The checked choices of the ``experimental_`` entry points, as ``_create_graph``'s keyword arguments."""
    return {
        "weight_bits": _bits("weight_bits", weight_bits),
        "activation_bits": _bits("activation_bits", activation_bits),
        "symmetric": _flag("symmetric", symmetric),
        "quant_delay": _delay("quant_delay", quant_delay),
        "freeze_bn_delay": _delay("freeze_bn_delay", freeze_bn_delay),
        "scope": _scope(scope),
    }


def _create_graph(
    input_graph,
    is_training,
    weight_bits=8,
    activation_bits=8,
    symmetric=False,
    quant_delay=None,
    freeze_bn_delay=None,
    scope=None,
):
    if input_graph is None:
        input_graph = _v1.get_default_graph()
    if not isinstance(input_graph, tf.Graph):
        raise NpuArgumentTypeError(
            f"contrib.quantize: input_graph must be a tf.Graph or None (the default graph), given {input_graph!r}"
        )
    found = sorted({op.type for op in input_graph.get_operations()} & _TRAINING_OPS)
    if found:
        raise NpuArgumentError(
            f"contrib.quantize: Training op found in graph: input_graph already holds {found}; rewrite the graph "
            "before the optimizer's minimize() / apply_gradients() adds them"
        )
    with input_graph.as_default():
        fold_batch_norms.fold_batch_norms(input_graph, is_training, freeze_bn_delay=freeze_bn_delay)
        fold_unfused.fold_unfused_batch_norms(input_graph, is_training, freeze_bn_delay=freeze_bn_delay)
        fold_unfused.warn_unfolded(input_graph)
        rewrite.quantize(
            input_graph,
            is_training,
            weight_bits=weight_bits,
            activation_bits=activation_bits,
            symmetric=symmetric,
            quant_delay=quant_delay,
            scope=scope,
        )


def _bits(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise NpuArgumentTypeError(f"contrib.quantize: {name} must be an int in [2, 16], given {value!r}")
    if not _BITS[0] <= value <= _BITS[1]:
        raise NpuArgumentError(f"contrib.quantize: {name} must be an int in [2, 16], given {value}")
    return int(value)


def _delay(name, value):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise NpuArgumentTypeError(f"contrib.quantize: {name} must be an int >= 0 or None, given {value!r}")
    if value < 0:
        raise NpuArgumentError(f"contrib.quantize: {name} must be an int >= 0 or None, given {value}")
    return int(value)


def _flag(name, value):
    if not isinstance(value, bool):
        raise NpuArgumentTypeError(f"contrib.quantize: {name} must be True or False, given {value!r}")
    return value


def _scope(value):
    if value is not None and not isinstance(value, str):
        raise NpuArgumentTypeError(f"contrib.quantize: scope must be a name scope string or None, given {value!r}")
    return value
