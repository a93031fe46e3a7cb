"""``tf.contrib.opt.MovingAverageOptimizer``: another optimizer plus an exponential moving average of the variables
it trains, and a saver that writes the averages under the variables' own names (for evaluation and export)."""

import tensorflow as tf
from tensorflow.python.ops.variables import PartitionedVariable
from tensorflow.python.training.saving import saveable_object_util

from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError, NpuUsageError
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
        them back the same way. A partitioned variable is saved under its full name, slice by slice, as a plain
        ``Saver`` saves it, so an evaluation graph with the same partitioning (or none) restores the averages.

        Args:
          var_list: the variables to save, a list or a {checkpoint name: variable or list of slices} dict (None:
            all global variables). Every averaged variable in it must come with its average, and every average
            with its variable.
          name: the saver's name.
          **kwargs: further ``tf.compat.v1.train.Saver`` arguments.

        Returns:
          A ``tf.compat.v1.train.Saver``.

        Raises:
          NpuUsageError: ``apply_gradients`` (or ``minimize``) has not been called yet, so there are no averages.
          NpuArgumentError: ``var_list`` holds a variable without its average, or an average without its variable.
        """
        if not self._averaged:
            raise NpuUsageError(
                "MovingAverageOptimizer.swapping_saver: call apply_gradients (or minimize) first; there are no "
                "moving averages to save yet"
            )
        if var_list is None:
            var_list = tf.compat.v1.global_variables()
        named = var_list if isinstance(var_list, dict) else _by_checkpoint_name(var_list)
        partner = {}
        for var in self._averaged:
            average = self._ema.average(var)
            partner[var.ref()] = average
            partner[average.ref()] = var
        present = {v.ref() for value in named.values() for v in _parts(value) if _is_variable(v)}

        def swapped(value):
            if not _is_variable(value) or value.ref() not in partner:
                return value
            other = partner[value.ref()]
            if other.ref() not in present:
                raise NpuArgumentError(
                    f"MovingAverageOptimizer.swapping_saver: Variable to swap {other.op.name} is not part of "
                    f"variables to save: var_list holds {value.op.name} but not {other.op.name}, the variable it is "
                    f"swapped with, so the checkpoint would hold wrong values; add {other.op.name} to var_list, or "
                    "save with a plain Saver"
                )
            return other

        swapped_list = {
            key: [swapped(v) for v in _parts(value)] if _is_partitioned(value) else swapped(value)
            for key, value in named.items()
        }
        return tf.compat.v1.train.Saver(swapped_list, name=name, **kwargs)


def _by_checkpoint_name(var_list):
    """{checkpoint name: variable, or the list of slices of a partitioned variable}, as a ``Saver`` names them."""
    named = {}
    for value in var_list:
        if isinstance(value, PartitionedVariable):
            named.setdefault(value.name, []).extend(value)
        elif _is_variable(value) and getattr(value, "_save_slice_info", None) is not None:
            named.setdefault(value._save_slice_info.full_name, []).append(value)
        elif _is_variable(value):
            named[value.op.name] = value
        else:  # tensors and saveables: the Saver's own naming
            named.update(saveable_object_util.op_list_to_dict([value]))
    return named


def _is_partitioned(value):
    return isinstance(value, (list, tuple, PartitionedVariable))


def _parts(value):
    return list(value) if _is_partitioned(value) else [value]


def _is_variable(value):
    return isinstance(value, tf.Variable)
