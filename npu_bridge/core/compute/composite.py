"""Ascend ops this project computes with many TensorFlow ops, made to look like one op in dumps and profiles.

``DynamicRNN`` is one op on Ascend; here it is a time loop of matmuls and activations. ``call`` runs such a
computation as one TensorFlow function call node (kept as a call: ``_noinline``) stamped with the Ascend op
type (``COMPOSED_OP_ATTR``) and the number of the op's outputs (``COMPOSED_OUTPUTS_ATTR``: TensorFlow's
gradient appends the intermediates the backward call reads). TensorFlow differentiates the call with one
backward call, ``gradients/<call>_grad/PartitionedCall``, which artifacts show as ``<type>Grad``.

  * The dump and overflow passes instrument the main graph only, so the call is dumped and checked as one op
    of the stamped type and its body is not (optimizers/graph/instrumentation.h, ``ComposedOps``).
  * The precision passes still work inside the body (the matmuls of an fp16 DynamicRNN are rounded).
  * In step stats TensorFlow records the body's nodes as well; they are named under the scope
    ``npu_op.<type>`` (``internal_op_type`` recognizes them, in the backward body too), and the profile
    folds them into the call that ran them.
"""

import tensorflow as tf

from npu_bridge.core.plan.pass_contract import COMPOSED_OP_ATTR, COMPOSED_OUTPUTS_ATTR
from npu_bridge.core.runtime import log

_SCOPE_PREFIX = "npu_op."
_CALL_TYPES = ("PartitionedCall", "StatefulPartitionedCall")


def call(op_type, fn, inputs):
    """Computes ``fn(*inputs)`` as one function call node that artifacts show as an ``op_type`` op.

    Args:
      op_type: the Ascend op type, e.g. "DynamicRNN".
      fn: builds the computation from tensors; returns a tuple of tensors. It must not read variables (pass
        their values in ``inputs``), so that the gradient reaches them through the call.
      inputs: the op's input tensors (no None).
    Returns:
      The tuple of ``fn``'s outputs.
    """
    inputs = [tf.convert_to_tensor(value) for value in inputs]

    def body(*args):
        with tf.name_scope(_SCOPE_PREFIX + op_type):
            return tuple(fn(*args))

    if tf.executing_eagerly():
        return body(*inputs)
    function = tf.function(body, autograph=False, experimental_attributes={"_noinline": True})
    graph = tf.compat.v1.get_default_graph()
    before = len(graph.get_operations())
    outputs = function(*inputs)
    calls = [op for op in graph.get_operations()[before:] if op.type in _CALL_TYPES]
    if len(calls) != 1:  # a TensorFlow whose function calls build other nodes: the values are still right
        log.warn_once(
            ("composite-unmarked", op_type),
            "%s: TensorFlow built %d call nodes, not one; dumps and profiles show its TensorFlow ops",
            op_type,
            len(calls),
        )
        return tuple(outputs)
    # tf.function accepts only its own attributes; the node attributes are set on the built call.
    stamp = calls[0]._set_attr
    stamp(COMPOSED_OP_ATTR, tf.compat.v1.AttrValue(s=op_type.encode()))
    stamp(COMPOSED_OUTPUTS_ATTR, tf.compat.v1.AttrValue(i=len(calls[0].outputs)))
    return tuple(outputs)


def is_call(op_type):
    """True for the TensorFlow op types a composed op's call node has."""
    return op_type in _CALL_TYPES


def internal_op_type(node_name):
    """The Ascend op type whose body a node belongs to, or None for other nodes.

    Args:
      node_name: a node name as TensorFlow records it in step stats.
    Returns:
      "DynamicRNN" for "npu_op.DynamicRNN/scan/while/MatMul",
      "gradients/npu_op.DynamicRNN/scan/while_grad/MatMul_grad/MatMul" or
      "Func/npu_op.DynamicRNN/scan/while/body/_1/input/_37"; None otherwise.
    """
    start = node_name.find(_SCOPE_PREFIX)
    while start != -1:
        if start == 0 or node_name[start - 1] == "/":
            end = node_name.find("/", start)
            return node_name[start + len(_SCOPE_PREFIX) : None if end == -1 else end]
        start = node_name.find(_SCOPE_PREFIX, start + 1)
    return None


def gradient_type(op_type):
    """The type artifacts give the backward call of an ``op_type`` call."""
    return op_type + "Grad"
