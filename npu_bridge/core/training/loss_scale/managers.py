"""Loss-scale managers: ``FixedLossScaleManager`` and ``ExponentialUpdateLossScaleManager``.

A manager gives the current loss scale (``get_loss_scale``) and updates it after each step from whether the
step's gradients were finite (``update_loss_scale``). TensorFlow 2 dropped ``tf.contrib.mixed_precision``
these derive from upstream; this is the same behaviour written for ``tf.compat.v1`` graphs.
"""

import numbers

import tensorflow as tf

from npu_bridge.core.runtime.errors import NpuArgumentError

v1 = tf.compat.v1

# Largest float32; the scale only grows while growing keeps it below this.
MAX_FLOAT32 = 3.4e38


class LossScaleManager:
    """Interface of a loss-scale manager."""

    def get_loss_scale(self):
        """Returns the loss scale as a float32 scalar tensor."""
        raise NotImplementedError

    def update_loss_scale(self, finite_grads):
        """Returns an op that updates the loss scale.

        Args:
          finite_grads: bool scalar tensor, True when the step's gradients had no overflow.
        """
        raise NotImplementedError

    def variables(self):
        """Returns the variables the manager keeps its state in (none for a fixed scale).

        Optimizers that wrap the manager list them in their ``variables()``, so tf_keras initializes them.
        """
        return _attribute_variables(self)


def _attribute_variables(obj):
    return [value for value in getattr(obj, "__dict__", {}).values() if isinstance(value, tf.Variable)]


def manager_variables(manager):
    """The variables of a loss-scale manager.

    Args:
      manager: a manager, or None. One that does not derive from ``LossScaleManager`` (a script's own class)
        and has no ``variables()`` gives the variables among its attributes.
    Returns:
      A list of variables.
    """
    if manager is None:
        return []
    own = getattr(manager, "variables", None)
    return list(own()) if callable(own) else _attribute_variables(manager)


def _number(name, value, minimum, integer=False):
    valid = isinstance(value, numbers.Real) and not isinstance(value, bool) and value >= minimum
    if integer:
        valid = valid and isinstance(value, numbers.Integral)
    if not valid:
        kind = "an integer" if integer else "a number"
        raise NpuArgumentError(f"{name} must be {kind} >= {minimum}, got {value!r}")
    return value


class FixedLossScaleManager(LossScaleManager):
    """A loss scale that never changes.

    Args:
      loss_scale: the scale, >= 1.
      enable_overflow_check: when False, steps are never skipped for overflow (upstream's switch).
    Raises:
      ValueError: loss_scale < 1 ("loss scale must be at least 1.", as upstream).
    """

    def __init__(self, loss_scale, enable_overflow_check=True):
        if not isinstance(loss_scale, numbers.Real) or isinstance(loss_scale, bool) or loss_scale < 1:
            raise NpuArgumentError(f"loss scale must be at least 1. (got {loss_scale!r})")
        self._loss_scale = float(loss_scale)
        self._enable_overflow_check = bool(enable_overflow_check)

    def get_enable_overflow_check(self):
        """Returns whether overflowing steps are detected and skipped."""
        return self._enable_overflow_check

    def get_loss_scale(self):
        return tf.constant(self._loss_scale, dtype=tf.float32)

    def update_loss_scale(self, finite_grads):
        del finite_grads
        return tf.no_op()


class ExponentialUpdateLossScaleManager(LossScaleManager):
    """A loss scale that grows after a run of finite steps and shrinks after overflowing ones.

    After ``incr_every_n_steps`` consecutive finite steps the scale is multiplied by ``incr_ratio`` (unless that
    would exceed the float32 range); after ``decr_every_n_nan_or_inf`` overflowing steps (counted since the
    last change; a finite step does not reset the count) it is multiplied by ``decr_ratio``, but not below 1.
    An overflowing step resets the run of finite steps. Both counters restart when the scale changes.

    Creates three non-trainable float32 / int32 variables (``loss_scale``, ``good_steps``, ``bad_steps``),
    so do not construct it under ``tf.control_dependencies``.

    Args:
      init_loss_scale: the first scale, >= 1.
      incr_every_n_steps: finite steps before the scale grows, >= 1.
      decr_every_n_nan_or_inf: overflowing steps before the scale shrinks, >= 1.
      incr_ratio: growth factor, > 1.
      decr_ratio: shrink factor, in (0, 1).
    Raises:
      ValueError: an argument is out of range.
    """

    def __init__(self, init_loss_scale, incr_every_n_steps, decr_every_n_nan_or_inf=2, incr_ratio=2, decr_ratio=0.8):
        _number("init_loss_scale", init_loss_scale, 1)
        _number("incr_every_n_steps", incr_every_n_steps, 1, integer=True)
        _number("decr_every_n_nan_or_inf", decr_every_n_nan_or_inf, 1, integer=True)
        if not isinstance(incr_ratio, numbers.Real) or incr_ratio <= 1:
            raise NpuArgumentError(f"incr_ratio must be a number > 1, got {incr_ratio!r}")
        if not isinstance(decr_ratio, numbers.Real) or not 0 < decr_ratio < 1:
            raise NpuArgumentError(f"decr_ratio must be a number in (0, 1), got {decr_ratio!r}")
        self._incr_every_n_steps = int(incr_every_n_steps)
        self._decr_every_n_nan_or_inf = int(decr_every_n_nan_or_inf)
        self._incr_ratio = float(incr_ratio)
        self._decr_ratio = float(decr_ratio)
        self._loss_scale = v1.Variable(float(init_loss_scale), name="loss_scale", dtype=tf.float32, trainable=False)
        self._good_steps = v1.Variable(0, name="good_steps", dtype=tf.int32, trainable=False)
        self._bad_steps = v1.Variable(0, name="bad_steps", dtype=tf.int32, trainable=False)

    def get_loss_scale(self):
        return tf.identity(self._loss_scale)

    def update_loss_scale(self, finite_grads):
        def reset_counters():
            return tf.group(self._good_steps.assign(0), self._bad_steps.assign(0))

        def after_finite_step():
            def grow():
                scale = self._loss_scale.read_value()
                grown = tf.where(scale < MAX_FLOAT32 / self._incr_ratio, scale * self._incr_ratio, scale)
                return tf.group(self._loss_scale.assign(grown), reset_counters())

            return tf.cond(
                self._good_steps + 1 >= self._incr_every_n_steps, grow, lambda: tf.group(self._good_steps.assign_add(1))
            )

        def after_overflow():
            def shrink():
                shrunk = tf.maximum(1.0, self._loss_scale.read_value() * self._decr_ratio)
                return tf.group(self._loss_scale.assign(shrunk), reset_counters())

            return tf.cond(
                self._bad_steps + 1 >= self._decr_every_n_nan_or_inf,
                shrink,
                lambda: tf.group(self._bad_steps.assign_add(1), self._good_steps.assign(0)),
            )

        return tf.cond(finite_grads, after_finite_step, after_overflow)
