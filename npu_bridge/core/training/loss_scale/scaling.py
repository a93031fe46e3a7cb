"""The steps the loss-scaling optimizers share: scale the loss, unscale the gradients, apply unless the step
overflowed."""

import tensorflow as tf


def scaled_loss(loss, loss_scale):
    """Returns ``loss * loss_scale`` in the loss's dtype (a callable loss stays callable, for eager use)."""
    if callable(loss):
        return lambda: loss() * tf.cast(loss_scale, loss().dtype)
    return loss * tf.cast(loss_scale, loss.dtype)


def scaled_gradients(optimizer, loss, loss_scale, **compute_gradients_args):
    """``optimizer.compute_gradients`` of ``loss * loss_scale``, each gradient divided by ``loss_scale`` again."""
    grads_and_vars = optimizer.compute_gradients(scaled_loss(loss, loss_scale), **compute_gradients_args)
    return unscaled(grads_and_vars, loss_scale)


def unscaled(grads_and_vars, loss_scale):
    """Divides every gradient by ``loss_scale`` (IndexedSlices keep their indices; None stays None)."""
    result = []
    for grad, var in grads_and_vars:
        if grad is None:
            result.append((None, var))
            continue
        values = grad.values if isinstance(grad, tf.IndexedSlices) else grad
        values = values * tf.cast(tf.math.reciprocal(loss_scale), values.dtype)
        if isinstance(grad, tf.IndexedSlices):
            values = tf.IndexedSlices(values, grad.indices, grad.dense_shape)
        result.append((values, var))
    return result


def apply_if_finite(opt, grads_and_vars, global_step, name, finite, manager):
    """Applies the gradients only when ``finite``; updates the loss scale either way.

    Args:
      opt: the wrapped optimizer.
      grads_and_vars: (gradient, variable) pairs.
      global_step: advanced only by applied steps, as upstream.
      name: name of the apply op.
      finite: bool scalar tensor, True when the step did not overflow.
      manager: the loss-scale manager.
    Returns:
      An op that does both.
    """
    apply = tf.cond(finite, lambda: tf.group(opt.apply_gradients(grads_and_vars, global_step, name)), tf.no_op)
    return tf.group(apply, manager.update_loss_scale(finite))
