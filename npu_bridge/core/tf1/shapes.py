"""Integral floats as shape dimensions, for the functions the TF1 mode's ``tensorflow`` hands user code.

TF1-era scripts compute dimensions with ``/``: ``tf.get_variable("w", [3, 3, 8, 128/2])``, ``tf.reshape(x, [-1,
7*7*64/2])``. Under Python 2, where most of them were written, that is an int, and TensorFlow 1.x's ``Dimension``
took an integral float as that integer; TensorFlow 2.21 refuses every float dimension. The facade passes each
*function* it gives user code through ``accepting_integral_floats``: when the function has a shape parameter (named
``shape`` or ``shapes``, or ending in ``_shape`` / ``_shapes``: ``tf.placeholder``, ``tf.zeros``, ``tf.reshape``,
``tf.random_normal``, ``tf.nn.conv2d_transpose``'s ``output_shape``, ``tf.train.batch``'s ``shapes``), an integral
float in that argument (``64.0``, ``np.float32(64)``), at any depth of its lists and tuples, becomes that integer
before TensorFlow sees it, and a float that is not a whole number (``2.5``, ``nan``) is an ``NpuArgumentTypeError``
naming the function, the argument and the value.

Why the facade's functions and not TensorFlow's shape conversion: ``TensorShape`` / ``Dimension`` live in one module
the whole process shares, so accepting floats there would change TensorFlow for tf_keras, tf_slim and every other
library, which the mode leaves alone; and it would not even be enough, since ``tf.reshape`` and ``tf.zeros`` turn a
shape list into an int32 tensor through tensor conversion, where accepting floats would also make
``tf.constant([2.0], dtype=tf.int32)`` legal. The facade is the one place that sees exactly the calls user code
makes, with the argument's name. What it does not see: classes and methods (``tf.TensorShape([None, 64.0])``,
``tf.Variable(..., shape=...)``, ``tensor.set_shape(...)``; wrapping a class in a function would break
``isinstance``), and ``tensorflow.compat.v1``'s functions, which are TensorFlow's own module.
"""

import functools
import inspect
import numbers
import types

from npu_bridge.core.runtime.errors import NpuArgumentTypeError

_TAKES_ARGUMENT = (
    inspect.Parameter.POSITIONAL_ONLY,
    inspect.Parameter.POSITIONAL_OR_KEYWORD,
    inspect.Parameter.KEYWORD_ONLY,
)


def is_shape_parameter(name):
    """True for a parameter that holds a shape (or a list of shapes) by its name."""
    return name in ("shape", "shapes") or name.endswith(("_shape", "_shapes"))


def module_takes_shapes(module):
    """True when one of the module's public functions has a shape parameter."""
    for name in dir(module):
        if not name.startswith("_"):
            try:
                value = getattr(module, name)
            except Exception:  # noqa: BLE001 - a name a lazy module cannot load is no function of it
                continue
            if _shape_parameters(value):
                return True
    return False


def accepting_integral_floats(function, path):
    """``function``, or a wrapper of it whose shape arguments take integral floats, when it has shape parameters.

    Args:
      function: a value the facade hands user code (anything; only Python functions are wrapped).
      path: its name for messages, e.g. "tf.reshape".
    Returns:
      The wrapper (``functools.wraps``: same name, docstring and ``__wrapped__``), or ``function`` itself.
    """
    shape_parameters = _shape_parameters(function)
    if not shape_parameters:
        return function

    @functools.wraps(function)
    def with_integral_float_shapes(*args, **kwargs):
        for name, position in shape_parameters.items():
            if position is not None and position < len(args):
                value = integral(args[position], f"{path}: {name}")
                if value is not args[position]:
                    args = (*args[:position], value, *args[position + 1 :])
            elif name in kwargs:
                kwargs[name] = integral(kwargs[name], f"{path}: {name}")
        return function(*args, **kwargs)

    return with_integral_float_shapes


def _shape_parameters(function):
    """{name: its position, None when keyword-only} of a Python function's shape parameters ({} for the rest)."""
    if not isinstance(function, types.FunctionType):
        return {}
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return {}
    return {
        p.name: (None if p.kind is inspect.Parameter.KEYWORD_ONLY else index)
        for index, p in enumerate(parameters)
        if p.kind in _TAKES_ARGUMENT and is_shape_parameter(p.name)
    }


def integral(shape, what):
    """``shape`` with every integral float (at any depth of its lists and tuples) made an int.

    Args:
      shape: a shape argument as user code passed it (a list, a tuple, a number, a tensor, None, ...).
      what: the function and argument, for the message ("tf.reshape: shape").
    Returns:
      ``shape`` itself when it holds no float, else a copy (lists stay lists, tuples become tuples).
    Raises:
      NpuArgumentTypeError: a float in it is not a whole number.
    """

    def convert(value):
        if isinstance(value, (list, tuple)):
            items = [convert(item) for item in value]
            if all(new is old for new, old in zip(items, value)):
                return value
            return items if isinstance(value, list) else tuple(items)
        if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral):
            if float(value).is_integer():
                return int(value)
            raise NpuArgumentTypeError(
                f"{what} {shape!r} holds {value!r}, which is not a whole number: a dimension is an integer or None "
                "(the TF1 mode takes an integral float such as 64.0 as 64)"
            )
        return value

    return convert(shape)
