"""The hyperparameters of the ``tf.contrib.opt`` optimizers: early checks of those given as Python numbers, and
Adam's as tensors of a variable's dtype.

Tensors, variables and callables are left to TensorFlow: their values are only known when the graph runs.
"""

import numbers

import tensorflow as tf

from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError


def is_number(value):
    """Whether ``value`` is a plain real number (a bool is not)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_range(owner, name, value, low=0.0, high=None, high_allowed=False):
    """Raises unless ``value``, when it is a Python number, is >= ``low`` and < ``high`` (<= with ``high_allowed``).

    Args:
      owner: the class or function the argument belongs to, for the message.
      name: the argument's name.
      value: its value; tensors, variables and callables pass unchecked.
      low: the smallest allowed value.
      high: the upper bound (None: none).
      high_allowed: whether ``high`` itself is allowed.

    Raises:
      NpuArgumentError: ``value`` is a number outside the range (or NaN).
      NpuArgumentTypeError: ``value`` is a string or a bool, which no hyperparameter can be.
    """
    if isinstance(value, (str, bytes, bool)):
        raise NpuArgumentTypeError(f"{owner}: {name} must be a number, a tensor or a callable, got {value!r}")
    if not is_number(value):
        return
    if high is None:
        allowed, below_high = f"a number >= {low}", True
    else:
        allowed = f"a number in [{low}, {high}{']' if high_allowed else ')'}"
        below_high = value <= high if high_allowed else value < high
    # Written so that NaN fails too.
    if not (value >= low and below_high):
        raise NpuArgumentError(f"{owner}: {name} must be {allowed}, got {value!r}")


def check_adam(owner, learning_rate, beta1, beta2, epsilon):
    """Checks the hyperparameters of an Adam-like optimizer (see ``check_range``).

    Raises:
      NpuArgumentError: learning_rate or epsilon is negative, or beta1 or beta2 is outside [0, 1).
      NpuArgumentTypeError: one of them is a string or a bool.
    """
    check_range(owner, "learning_rate", learning_rate)
    check_range(owner, "beta1", beta1, 0.0, 1.0)
    check_range(owner, "beta2", beta2, 0.0, 1.0)
    check_range(owner, "epsilon", epsilon)


def adam_hyperparameters(optimizer, dtype):
    """Casts the hyperparameters of an Adam-like optimizer to the dtype of the variable it updates.

    Args:
      optimizer: a ``tf.compat.v1.train.AdamOptimizer`` inside ``apply_gradients`` (its tensors are prepared).
      dtype: the dtype to cast to.

    Returns:
      ``[beta1_power, beta2_power, learning_rate, beta1, beta2, epsilon]`` as tensors of ``dtype``.
    """
    beta1_power, beta2_power = optimizer._get_beta_accumulators()
    values = (beta1_power, beta2_power, optimizer._lr_t, optimizer._beta1_t, optimizer._beta2_t, optimizer._epsilon_t)
    return [tf.cast(value, dtype) for value in values]
