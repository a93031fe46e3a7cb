"""``tf.contrib.opt.MovingAverageOptimizer``: another optimizer plus an exponential moving average of the variables
it trains, and a saver that writes the averages under the variables' own names (for evaluation and export)."""

import tensorflow as tf

from npu_bridge.core.runtime.errors import NpuArgumentTypeError, NpuUsageError
from npu_bridge.core.tf1.optimizers.arguments import check_range
from npu_bridge.core.training.wrapped_optimizer import WrappedOptimizer


class MovingAverageOptimizer(WrappedOptimizer):
    """Wraps ``opt``; every ``apply_gradients`` also updates ``tf.compat.v1.train.ExponentialMovingAverage``
    averages of the variables it updates.

    Args:
      opt: the ``tf.compat.v1.train.Optimizer`` that computes and applies the updates.
      average_decay: the decay of the moving average.
      num_updates: optional step count (a tensor, usually the global step); the decay is then
        ``min(average_decay, (1 + num_updates) / (10 + num_updates))``.
      sequential_update: when True, the averages are updated after ``opt``'s update (and so include it); when
        False, the two run in no particular order.

    Raises:
      NpuArgumentTypeError: opt is not a ``tf.compat.v1.train.Optimizer``.
      NpuArgumentError: average_decay is a number outside [0, 1].
    """

    def __init__(self, opt, average_decay=0.9999, num_updates=None, sequential_update=True):
        if not isinstance(opt, tf.compat.v1.train.Optimizer):
            raise NpuArgumentTypeError(
                f"MovingAverageOptimizer: opt must be a tf.compat.v1.train.Optimizer, got {type(opt).__name__}"
            )
        check_range(type(self).__name__, "average_decay", average_decay, 0.0, 1.0, high_allowed=True)
        super().__init__(opt, "MovingAverage")
        self._ema = tf.compat.v1.train.ExponentialMovingAverage(average_decay, num_updates=num_updates)
        self._sequential_update = sequential_update
        self._averaged = []

    def compute_gradients(self, *args, **kwargs):
        """The wrapped optimizer's ``compute_gradients``."""
        return self._optimizer.compute_gradients(*args, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """Applies the gradients with the wrapped optimizer, then updates the averages of the variables given.

        Args:
          grads_and_vars, global_step, name: as ``tf.compat.v1.train.Optimizer.apply_gradients``.

        Returns:
          An op that runs both.
        """
        grads_and_vars = list(grads_and_vars)
        train_op = self._optimizer.apply_gradients(grads_and_vars, global_step=global_step, name=name)
        var_list = [v for g, v in grads_and_vars if g is not None]
        with tf.control_dependencies([train_op] if self._sequential_update else []):
            average_op = self._ema.apply(var_list)
        known = {v.ref() for v in self._averaged}
        self._averaged += [v for v in var_list if v.ref() not in known]
        return tf.group(train_op, average_op, name="train_with_avg")

    def swapping_saver(self, var_list=None, name="swapping_saver", **kwargs):
        """A saver that exchanges each averaged variable with its average: a checkpoint it writes holds the
        averages under the variables' names (and the variables under the averages' names), and restoring reads
        them back the same way.

        Args:
          var_list: the variables to save, a list or a {checkpoint name: variable} dict (None: all global
            variables).
          name: the saver's name.
          **kwargs: further ``tf.compat.v1.train.Saver`` arguments.

        Returns:
          A ``tf.compat.v1.train.Saver``.

        Raises:
          NpuUsageError: ``apply_gradients`` (or ``minimize``) has not been called yet, so there are no averages.
        """
        if not self._averaged:
            raise NpuUsageError(
                "MovingAverageOptimizer.swapping_saver: call apply_gradients (or minimize) first; there are no "
                "moving averages to save yet"
            )
        if var_list is None:
            var_list = tf.compat.v1.global_variables()
        named = dict(var_list) if isinstance(var_list, dict) else {v.op.name: v for v in var_list}
        partner = {}
        for var in self._averaged:
            average = self._ema.average(var)
            partner[var.ref()] = average
            partner[average.ref()] = var
        swapped = {key: partner.get(value.ref(), value) for key, value in named.items()}
        return tf.compat.v1.train.Saver(swapped, name=name, **kwargs)
