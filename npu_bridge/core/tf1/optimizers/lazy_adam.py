"""``tf.contrib.opt.LazyAdamOptimizer``: Adam that, for a sparse gradient, updates only the rows the gradient has.

Dense gradients get ``tf.compat.v1.train.AdamOptimizer``'s update. For a sparse one (an embedding looked up with
``tf.gather``), the moments and the variable change in the rows present only; the other rows keep their moments,
which makes large embeddings cheaper to train at the price of a different trajectory than Adam's.
"""

import tensorflow as tf

from npu_bridge.core.tf1.optimizers.arguments import adam_hyperparameters, check_adam


class LazyAdamOptimizer(tf.compat.v1.train.AdamOptimizer):
    """Adam with lazy sparse updates.

    For the rows ``i`` of a sparse gradient ``g`` (duplicate indices summed first, by the base optimizer)::

        m[i] = beta1 * m[i] + (1 - beta1) * g[i]
        v[i] = beta2 * v[i] + (1 - beta2) * g[i] ** 2
        var[i] -= lr * sqrt(1 - beta2 ** t) / (1 - beta1 ** t) * m[i] / (sqrt(v[i]) + epsilon)

    Args:
      learning_rate, beta1, beta2, epsilon, use_locking, name: as ``tf.compat.v1.train.AdamOptimizer``; the name
        is "Adam" by default, as in TensorFlow 1.15, so the slots are ``<var>/Adam`` and ``<var>/Adam_1`` and
        TensorFlow 1.15 checkpoints restore.

    Raises:
      NpuArgumentError: a hyperparameter given as a number is out of range.
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, use_locking=False, name="Adam"):
        check_adam(type(self).__name__, learning_rate, beta1, beta2, epsilon)
        super().__init__(
            learning_rate=learning_rate, beta1=beta1, beta2=beta2, epsilon=epsilon, use_locking=use_locking, name=name
        )

    def _lazy_update(self, values, var, indices):
        beta1_power, beta2_power, lr, beta1, beta2, epsilon = adam_hyperparameters(self, var.dtype.base_dtype)
        lr = lr * tf.sqrt(1 - beta2_power) / (1 - beta1_power)
        m = self.get_slot(var, "m")
        v = self.get_slot(var, "v")
        m_rows = beta1 * tf.gather(m, indices) + (1 - beta1) * values
        v_rows = beta2 * tf.gather(v, indices) + (1 - beta2) * tf.square(values)
        locking = self._use_locking
        return tf.group(
            tf.compat.v1.scatter_update(m, indices, m_rows, use_locking=locking),
            tf.compat.v1.scatter_update(v, indices, v_rows, use_locking=locking),
            tf.compat.v1.scatter_sub(var, indices, lr * m_rows / (tf.sqrt(v_rows) + epsilon), use_locking=locking),
        )

    def _apply_sparse(self, grad, var):
        return self._lazy_update(grad.values, var, grad.indices)

    def _resource_apply_sparse(self, grad, var, indices):
        return self._lazy_update(grad, var, indices)
