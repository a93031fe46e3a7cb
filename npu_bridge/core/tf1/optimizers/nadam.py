"""``tf.contrib.opt.NadamOptimizer``: Adam with Nesterov momentum (Dozat, 2016).

``m`` and ``v`` move as in Adam; the step looks ahead with the new momentum::

    var -= lr_t * (beta1 * m_t + (1 - beta1) * g) / (sqrt(v_t) + epsilon)

which is what the ``ApplyAdam`` kernels compute with ``use_nesterov=True``.
"""

import tensorflow as tf

from npu_bridge.core.tf1.optimizers import sparse
from npu_bridge.core.tf1.optimizers.arguments import adam_hyperparameters, check_adam


class NadamOptimizer(tf.compat.v1.train.AdamOptimizer):
    """Nadam. A sparse gradient is made dense first, so it updates exactly as the same dense gradient would (every
    row's moments decay, every row moves).

    Args:
      learning_rate, beta1, beta2, epsilon, use_locking, name: as ``tf.compat.v1.train.AdamOptimizer`` (TF 1.15's
        default name is "Adam" here too).

    Raises:
      NpuArgumentError: a hyperparameter given as a number is out of range.
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, use_locking=False, name="Adam"):
        check_adam(type(self).__name__, learning_rate, beta1, beta2, epsilon)
        super().__init__(
            learning_rate=learning_rate, beta1=beta1, beta2=beta2, epsilon=epsilon, use_locking=use_locking, name=name
        )

    def _apply_dense(self, grad, var):
        return self._nesterov_adam(tf.raw_ops.ApplyAdam, var, self.get_slot(var, "m"), self.get_slot(var, "v"), grad).op

    def _resource_apply_dense(self, grad, var):
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        return self._nesterov_adam(tf.raw_ops.ResourceApplyAdam, var.handle, m.handle, v.handle, grad)

    def _nesterov_adam(self, apply_adam, var, m, v, grad):
        beta1_power, beta2_power, lr, beta1, beta2, epsilon = adam_hyperparameters(self, grad.dtype.base_dtype)
        return apply_adam(
            var=var,
            m=m,
            v=v,
            beta1_power=beta1_power,
            beta2_power=beta2_power,
            lr=lr,
            beta1=beta1,
            beta2=beta2,
            epsilon=epsilon,
            grad=grad,
            use_locking=self._use_locking,
            use_nesterov=True,
        )

    def _apply_sparse(self, grad, var):
        return self._apply_dense(sparse.dense_gradient(grad.values, grad.indices, var), var)

    def _resource_apply_sparse(self, grad, var, indices):
        return self._resource_apply_dense(sparse.dense_gradient(grad, indices, var), var)
