"""Broadcast into variables, as HCCL does on the NPU.

HCCL's broadcast writes the root's data into the input buffers, so on Ascend
``sess.run(hccl_ops.broadcast(tf.trainable_variables(), 0))`` leaves every rank's variables equal to the
root's, and scripts use it that way without reading the result. TensorFlow's broadcast returns new tensors
instead; this module finds which inputs are variables and assigns the broadcast value back to them.

An input counts as a variable when it is:

* a ``tf.Variable`` object (ref or resource variable);
* a ref tensor (dtype ``float32_ref``, ...), e.g. the output of a ``VariableV2`` op;
* a ref variable's value (the ``Identity`` snapshot of its ref tensor, what ``tf.convert_to_tensor`` and
  ``Variable.value()`` give);
* a resource variable's ``ReadVariableOp`` output (what ``tf.convert_to_tensor`` and ``Variable.value()`` give).

Any other tensor (including ``tf.identity`` of a variable's value, a copy) is left alone.
"""

import tensorflow as tf


def value_and_target(item):
    """Splits one input of ``broadcast`` into the tensor to broadcast and the variable to write back to.

    Args:
      item: a ``tf.Variable``, a tensor, or anything ``tf.convert_to_tensor`` accepts.
    Returns:
      (value, assign): ``value`` is what is broadcast (a tensor of the base dtype when ``item`` is a
      variable, else ``item`` unchanged); ``assign`` is a function that takes the broadcast result and
      returns an op assigning it to the variable, or None when ``item`` is not a variable.
    """
    if isinstance(item, tf.Variable):
        return item.value(), lambda result: item.assign(result, read_value=False)
    if not (isinstance(item, tf.Tensor) and tf.is_symbolic_tensor(item)):
        return item, None
    if _is_ref(item):
        return tf.identity(item), lambda result: tf.compat.v1.assign(item, result)
    op = item.op
    if op.type == "Identity" and _is_ref(op.inputs[0]):
        ref = op.inputs[0]
        return item, lambda result: tf.compat.v1.assign(ref, result)
    if op.type == "ReadVariableOp":
        handle = op.inputs[0]
        return item, lambda result: tf.raw_ops.AssignVariableOp(resource=handle, value=result)
    return item, None


def tie(results, assigns, write):
    """Ties each broadcast result to the write-back into its variable.

    Args:
      results: the broadcast results, one per input.
      assigns: per input, the ``assign`` of ``value_and_target`` (None: not a variable).
      write: False on the root rank, whose variables already hold the broadcast values (nothing is assigned).
    Returns:
      The results; where a variable is written, an identity of the result that runs only after the
      assignment, so running it (or anything that uses it) updates the variable.
    """
    tied = []
    for result, assign in zip(results, assigns):
        if assign is None or not write:
            tied.append(result)
            continue
        with tf.control_dependencies([assign(result)]):
            tied.append(tf.identity(result))
    return tied


def _is_ref(tensor):
    return tensor.dtype != tensor.dtype.base_dtype
