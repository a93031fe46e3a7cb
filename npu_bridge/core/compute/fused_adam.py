"""Ascend's fused Adam steps: ``npu_ops.adam_apply_one_assign`` and ``adam_apply_one_with_decay_assign``.

With input0 = gradient, input1 = v, input2 = m, input3 = the weight, input4 = the learning rate,
mul0_x / mul1_x = beta1 / (1 - beta1), mul2_x / mul3_x = beta2 / (1 - beta2), add2_y = epsilon
(and mul4_x = the weight decay rate):
  output0 = mul2_x * input1 + mul3_x * input0^2                      (new v)
  output1 = mul0_x * input2 + mul1_x * input0                        (new m)
  update  = output1 / (sqrt(output0) + add2_y)  [+ mul4_x * input3]
  output2 = input3 - input4 * update                                  (new weight)
The "assign" ops also store output0..2 into input1..3 when those are variables.

Ascend's kernels for these are on the mixed-precision black list: they compute in float32 whatever precision mode
the session has. Here they are compositions of TensorFlow ops, built in ``keep_dtype_scope`` so the precision pass
leaves all of them in float32 too (docs/precision.md, "Optimizer math written by hand").
"""

import tensorflow as tf

from npu_bridge.core.compute.attr_scopes import keep_dtype_scope
from npu_bridge.core.compute.tensors import as_dtype


def _assigned(targets_and_values):
    """Assigns each value to its target when the target is a variable; returns the values after that."""
    assigns = [target.assign(value) for target, value in targets_and_values if isinstance(target, tf.Variable)]
    with tf.control_dependencies(assigns):
        return tuple(tf.identity(value) for _, value in targets_and_values)


def _adam_apply_one(input0, input1, input2, input3, input4, mul0_x, mul1_x, mul2_x, mul3_x, add2_y, mul4_x):
    grad = tf.convert_to_tensor(input0)
    dtype = grad.dtype
    v_new = as_dtype(mul2_x, dtype) * input1 + as_dtype(mul3_x, dtype) * tf.square(grad)
    m_new = as_dtype(mul0_x, dtype) * input2 + as_dtype(mul1_x, dtype) * grad
    update = m_new / (tf.sqrt(v_new) + as_dtype(add2_y, dtype))
    if mul4_x is not None:
        update += as_dtype(mul4_x, dtype) * as_dtype(input3, dtype)
    weight_new = input3 - as_dtype(input4, dtype) * update
    return _assigned([(input1, v_new), (input2, m_new), (input3, weight_new)])


def adam_apply_one_assign(input0, input1, input2, input3, input4, mul0_x, mul1_x, mul2_x, mul3_x, add2_y, name=None):
    """One fused Adam step (see the module docstring); returns (new v, new m, new weight)."""
    with tf.name_scope(name or "AdamApplyOneAssign"), keep_dtype_scope():
        return _adam_apply_one(input0, input1, input2, input3, input4, mul0_x, mul1_x, mul2_x, mul3_x, add2_y, None)


def adam_apply_one_with_decay_assign(
    input0, input1, input2, input3, input4, mul0_x, mul1_x, mul2_x, mul3_x, mul4_x, add2_y, name=None
):
    """One fused AdamW step with weight decay ``mul4_x``; returns (new v, new m, new weight)."""
    with tf.name_scope(name or "AdamApplyOneWithDecayAssign"), keep_dtype_scope():
        return _adam_apply_one(input0, input1, input2, input3, input4, mul0_x, mul1_x, mul2_x, mul3_x, add2_y, mul4_x)
