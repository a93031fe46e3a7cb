"""Whether a training step overflowed, decided the way Ascend decides it.

Two mechanisms, as upstream:
  * the float-status register (saturation mode, the simulated Ascend backend's default): read with
    ``NpuGetFloatStatusV2`` after the gradients, then cleared with ``NpuClearFloatStatusV2`` for the next
    step; it reports an overflow anywhere in the step, also in intermediate values;
  * INF/NaN mode (CPU and GPU): the gradients themselves are checked for inf and NaN.
In a distributed job the status is summed over the ranks (``hccl_ops.allreduce``), so all ranks skip the
same steps.
"""

import tensorflow as tf

from npu_bridge.core.precision import float_status

# The name upstream's loss-scaling optimizers give their "this step is finite" tensor; scripts fetch it by name
# (``'overflow_status_reduce_all:0'``, under the name scope ``apply_gradients`` was called in) to log skipped steps.
STATUS_TENSOR_NAME = "overflow_status_reduce_all"


def _gradient_values(grads):
    return [g.values if isinstance(g, tf.IndexedSlices) else g for g in grads if g is not None]


def grads_are_finite(grads):
    """Returns a bool scalar tensor: no gradient holds inf or NaN.

    Args:
      grads: gradients (tensors, IndexedSlices or None).
    """
    checks = [tf.reduce_all(tf.math.is_finite(g)) for g in _gradient_values(grads)]
    return tf.reduce_all(tf.stack(checks)) if checks else tf.constant(True)


def status_is_clear(grads, is_distributed):
    """Reads and clears the float-status register after the gradients; returns "no overflow this step".

    Args:
      grads: the step's gradients; the register is read after all of them are computed.
      is_distributed: sum the status over all ranks with ``hccl_ops.allreduce(status, "sum")``.
    Returns:
      A bool scalar tensor that also orders the clear before anything that depends on it.
    """
    with tf.control_dependencies(_gradient_values(grads)):
        status = float_status.npu_get_float_status_v2()
    with tf.control_dependencies([status]):
        cleared = float_status.npu_clear_float_status_v2()
    if is_distributed:
        from npu_bridge.core.collectives import operations

        status = operations.allreduce(status, "sum")
    with tf.control_dependencies([cleared]):
        return tf.reduce_all(tf.equal(status, 0))


def named_status(finite):
    """``finite`` as the tensor scripts fetch by name: ``<caller's name scope>/overflow_status_reduce_all``."""
    return tf.identity(finite, name=STATUS_TENSOR_NAME)
