"""Decoupled weight decay (Loshchilov & Hutter) for TF1 optimizers: ``AdamWOptimizer``, ``MomentumWOptimizer`` and
``extend_with_decoupled_weight_decay`` for any other ``tf.compat.v1.train.Optimizer``.

Before the base optimizer updates a variable, ``var -= weight_decay * var`` (not scaled by the learning rate); the
base update then uses the gradient as it is. For a sparse gradient only the rows it has are decayed, each once.
"""

import tensorflow as tf

from npu_bridge.core.runtime.errors import NpuArgumentTypeError
from npu_bridge.core.tf1.optimizers import sparse
from npu_bridge.core.tf1.optimizers.arguments import check_adam, check_range

_GATE_OP = tf.compat.v1.train.Optimizer.GATE_OP


def _key(var):
    return (var.graph, var.op.name)


class DecoupledWeightDecayExtension:
    """Mixin that adds decoupled weight decay to a ``tf.compat.v1.train.Optimizer`` subclass listed after it.

    ``minimize`` and ``apply_gradients`` take ``decay_var_list``: when it lists variables, only those are decayed;
    when it is None or empty, every variable updated is (TensorFlow 1.15 read an empty list so too).

    Args:
      weight_decay: a float, a tensor or a callable returning one: the fraction of each variable removed per step.
      *args, **kwargs: the base optimizer's arguments.

    Raises:
      NpuArgumentError: weight_decay is a negative number.
    """

    def __init__(self, weight_decay, *args, **kwargs):
        check_range(type(self).__name__, "weight_decay", weight_decay)
        self._weight_decay = weight_decay
        self._weight_decay_t = None
        self._decay_keys = None
        super().__init__(*args, **kwargs)

    def minimize(
        self,
        loss,
        global_step=None,
        var_list=None,
        gate_gradients=_GATE_OP,
        aggregation_method=None,
        colocate_gradients_with_ops=False,
        name=None,
        grad_loss=None,
        decay_var_list=None,
    ):
        """``Optimizer.minimize`` that decays only ``decay_var_list`` when it is given.

        Returns:
          The training op.
        """
        grads_and_vars = self.compute_gradients(
            loss,
            var_list=var_list,
            gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops,
            grad_loss=grad_loss,
        )
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name, decay_var_list=decay_var_list)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None, decay_var_list=None):
        """``Optimizer.apply_gradients`` that decays only ``decay_var_list`` when it is given.

        Returns:
          The training op.

        Raises:
          NpuArgumentTypeError: decay_var_list holds something that is not a variable.
        """
        if not decay_var_list:
            self._decay_keys = None
        else:
            bad = [v for v in decay_var_list if not isinstance(v, tf.Variable)]
            if bad:
                raise NpuArgumentTypeError(f"{type(self).__name__}: decay_var_list must hold variables, got {bad[0]!r}")
            self._decay_keys = {_key(v) for v in decay_var_list}
        return super().apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def _prepare(self):
        weight_decay = self._weight_decay() if callable(self._weight_decay) else self._weight_decay
        self._weight_decay_t = tf.convert_to_tensor(weight_decay, name="weight_decay")
        super()._prepare()

    def _decay_factor(self, var):
        return tf.cast(self._weight_decay_t, var.dtype.base_dtype)

    def _decays(self, var):
        return self._decay_keys is None or _key(var) in self._decay_keys

    # The decay waits for the gradient: the gradient must see the variable before it is decayed.
    def _decay_dense(self, grad, var):
        if not self._decays(var):
            return []
        with tf.control_dependencies([grad]):
            return [tf.compat.v1.assign_sub(var, self._decay_factor(var) * var, use_locking=self._use_locking)]

    def _decay_sparse(self, values, var, indices):
        if not self._decays(var):
            return []
        with tf.control_dependencies([values, indices]):
            return [sparse.decay_rows(var, indices, self._decay_factor(var), self._use_locking)]

    def _apply_dense(self, grad, var):
        with tf.control_dependencies(self._decay_dense(grad, var)):
            return super()._apply_dense(grad, var)

    def _resource_apply_dense(self, grad, var):
        with tf.control_dependencies(self._decay_dense(grad, var)):
            return super()._resource_apply_dense(grad, var)

    def _apply_sparse(self, grad, var):
        with tf.control_dependencies(self._decay_sparse(grad.values, var, grad.indices)):
            return super()._apply_sparse(grad, var)

    def _resource_apply_sparse(self, grad, var, indices):
        with tf.control_dependencies(self._decay_sparse(grad, var, indices)):
            return super()._resource_apply_sparse(grad, var, indices)


def extend_with_decoupled_weight_decay(base_optimizer):
    """A subclass of ``base_optimizer`` with decoupled weight decay.

    Args:
      base_optimizer: a ``tf.compat.v1.train.Optimizer`` subclass.

    Returns:
      A class whose constructor takes ``weight_decay`` first, then ``base_optimizer``'s arguments.

    Raises:
      NpuArgumentTypeError: base_optimizer is not such a class.
    """
    if not (isinstance(base_optimizer, type) and issubclass(base_optimizer, tf.compat.v1.train.Optimizer)):
        raise NpuArgumentTypeError(
            f"extend_with_decoupled_weight_decay: base_optimizer must be a tf.compat.v1.train.Optimizer subclass, "
            f"got {base_optimizer!r}"
        )
    return type(
        f"{base_optimizer.__name__}WithDecoupledWeightDecay", (DecoupledWeightDecayExtension, base_optimizer), {}
    )


class AdamWOptimizer(DecoupledWeightDecayExtension, tf.compat.v1.train.AdamOptimizer):
    """Adam with decoupled weight decay (TF 1.15's ``tf.contrib.opt.AdamWOptimizer``).

    Args:
      weight_decay: a float, a tensor or a callable: the fraction of each variable removed per step.
      learning_rate, beta1, beta2, epsilon, use_locking, name: as ``tf.compat.v1.train.AdamOptimizer``.

    Raises:
      NpuArgumentError: a hyperparameter given as a number is out of range.
    """

    def __init__(
        self, weight_decay, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, use_locking=False, name="AdamW"
    ):
        check_adam(type(self).__name__, learning_rate, beta1, beta2, epsilon)
        super().__init__(
            weight_decay,
            learning_rate=learning_rate,
            beta1=beta1,
            beta2=beta2,
            epsilon=epsilon,
            use_locking=use_locking,
            name=name,
        )


class MomentumWOptimizer(DecoupledWeightDecayExtension, tf.compat.v1.train.MomentumOptimizer):
    """Momentum with decoupled weight decay (TF 1.15's ``tf.contrib.opt.MomentumWOptimizer``).

    Args:
      weight_decay: a float, a tensor or a callable: the fraction of each variable removed per step.
      learning_rate, momentum, use_locking, name, use_nesterov: as ``tf.compat.v1.train.MomentumOptimizer``.

    Raises:
      NpuArgumentError: a hyperparameter given as a number is out of range.
    """

    def __init__(self, weight_decay, learning_rate, momentum, use_locking=False, name="MomentumW", use_nesterov=False):
        check_range(type(self).__name__, "learning_rate", learning_rate)
        check_range(type(self).__name__, "momentum", momentum)
        super().__init__(
            weight_decay,
            learning_rate=learning_rate,
            momentum=momentum,
            use_locking=use_locking,
            name=name,
            use_nesterov=use_nesterov,
        )
