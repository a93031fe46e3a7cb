"""``tf.contrib.opt.LARSOptimizer``: momentum with a layer-wise learning rate (You, Gitman & Ginsburg, 2017).

Each variable's learning rate is scaled by a trust ratio ``eeta * ||w|| / (||g|| + weight_decay * ||w|| + epsilon)``
(1 when either norm is 0) and weight decay is added to its gradient; variables whose name contains a string of
``skip_list`` keep the plain learning rate and gradient. The momentum accumulates the scaled update, as in TensorFlow
1.15 (so a trust ratio that changes between steps weighs only its own step)::

    accum = momentum * accum + scaled_lr * (g + weight_decay * w)
    w -= accum                                                  (Nesterov: w -= scaled_lr * (...) + momentum * accum)

A sparse gradient gets TensorFlow 1.15's fallback: the plain momentum update of its rows with the unscaled learning
rate (``SparseApplyMomentum``), without trust ratio or weight decay.
"""

import tensorflow as tf

from npu_bridge.core.tf1.optimizers.arguments import check_range


class LARSOptimizer(tf.compat.v1.train.Optimizer):
    """Layer-wise Adaptive Rate Scaling with momentum.

    A sparse gradient updates only its rows, with plain momentum (TensorFlow 1.15's fallback for sparse gradients).

    Args:
      learning_rate: a float, a tensor or a callable: the base learning rate.
      momentum: the momentum factor.
      weight_decay: the L2 factor added to the gradient and used in the trust ratio.
      eeta: the trust coefficient.
      epsilon: added to the trust ratio's denominator.
      name: the name of the optimizer's ops and slots.
      skip_list: strings; a variable whose name contains one of them is updated without LARS (biases, norms).
      use_nesterov: whether to use Nesterov momentum.

    Raises:
      NpuArgumentError: a hyperparameter given as a number is negative.
    """

    def __init__(
        self,
        learning_rate,
        momentum=0.9,
        weight_decay=0.0001,
        eeta=0.001,
        epsilon=0.0,
        name="LARSOptimizer",
        skip_list=None,
        use_nesterov=False,
    ):
        owner = type(self).__name__
        for argument, value in [
            ("learning_rate", learning_rate),
            ("momentum", momentum),
            ("weight_decay", weight_decay),
            ("eeta", eeta),
            ("epsilon", epsilon),
        ]:
            check_range(owner, argument, value)
        super().__init__(use_locking=False, name=name)
        self._learning_rate = learning_rate
        self._momentum = momentum
        self._weight_decay = weight_decay
        self._eeta = eeta
        self._epsilon = epsilon
        self._skip_list = [] if skip_list is None else list(skip_list)
        self._use_nesterov = use_nesterov
        self._tensors = {}

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self):
        for argument in ("learning_rate", "momentum", "weight_decay", "eeta", "epsilon"):
            value = self._call_if_callable(getattr(self, f"_{argument}"))
            self._tensors[argument] = tf.convert_to_tensor(value, name=argument)

    def _hyperparameter(self, argument, dtype):
        return tf.cast(self._tensors[argument], dtype)

    def _scaled_rate_and_gradient(self, grad, var):
        """The learning rate and gradient LARS uses for ``var``."""
        dtype = var.dtype.base_dtype
        learning_rate = self._hyperparameter("learning_rate", dtype)
        if any(skipped in var.name for skipped in self._skip_list):
            return learning_rate, grad
        weight_decay = self._hyperparameter("weight_decay", dtype)
        w_norm = tf.norm(var)
        g_norm = tf.norm(grad)
        ratio = (
            self._hyperparameter("eeta", dtype)
            * w_norm
            / (g_norm + weight_decay * w_norm + self._hyperparameter("epsilon", dtype))
        )
        trust_ratio = tf.where(tf.logical_and(w_norm > 0, g_norm > 0), ratio, tf.ones_like(ratio))
        return learning_rate * trust_ratio, grad + weight_decay * var

    def _scaled_update(self, grad, var):
        learning_rate, grad = self._scaled_rate_and_gradient(grad, var)
        return grad * learning_rate

    def _apply_dense(self, grad, var):
        return tf.raw_ops.ApplyMomentum(
            var=var,
            accum=self.get_slot(var, "momentum"),
            lr=tf.constant(1, var.dtype.base_dtype),
            grad=self._scaled_update(grad, var),
            momentum=self._hyperparameter("momentum", var.dtype.base_dtype),
            use_locking=self._use_locking,
            use_nesterov=self._use_nesterov,
        ).op

    def _resource_apply_dense(self, grad, var):
        return tf.raw_ops.ResourceApplyMomentum(
            var=var.handle,
            accum=self.get_slot(var, "momentum").handle,
            lr=tf.constant(1, var.dtype.base_dtype),
            grad=self._scaled_update(grad, var),
            momentum=self._hyperparameter("momentum", var.dtype.base_dtype),
            use_locking=self._use_locking,
            use_nesterov=self._use_nesterov,
        )

    def _apply_sparse(self, grad, var):
        dtype = var.dtype.base_dtype
        return tf.raw_ops.SparseApplyMomentum(
            var=var,
            accum=self.get_slot(var, "momentum"),
            lr=self._hyperparameter("learning_rate", dtype),
            grad=grad.values,
            indices=grad.indices,
            momentum=self._hyperparameter("momentum", dtype),
            use_locking=self._use_locking,
            use_nesterov=self._use_nesterov,
        ).op

    def _resource_apply_sparse(self, grad, var, indices):
        dtype = var.dtype.base_dtype
        return tf.raw_ops.ResourceSparseApplyMomentum(
            var=var.handle,
            accum=self.get_slot(var, "momentum").handle,
            lr=self._hyperparameter("learning_rate", dtype),
            grad=grad,
            indices=indices,
            momentum=self._hyperparameter("momentum", dtype),
            use_locking=self._use_locking,
            use_nesterov=self._use_nesterov,
        )
