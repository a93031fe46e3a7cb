"""Argument checks with upstream's messages (``util.check_*``), used by the config classes and util, and the
number types of the command-line tools' arguments."""

import argparse
import math
import re

from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError, shortened

_INT_TEXT = re.compile(r"[+-]?[0-9]+")
_FLOAT_TEXT = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|[+-]?inf(inity)?", re.I)


def command_line_int(text):
    """An argparse ``type``: a whole number in ASCII digits (``int`` also reads "1_0" and other scripts' digits).

    Raises:
      argparse.ArgumentTypeError: anything else; argparse reports it with the argument's name (exit code 2).
    """
    if not _INT_TEXT.fullmatch(text.strip()):
        raise argparse.ArgumentTypeError(f"invalid int value: {shortened(text)} (a whole number in ASCII digits)")
    return int(text)


def command_line_float(text):
    """An argparse ``type``: a number in ASCII ("1.5", "1e-3", "inf"), not NaN (``float`` also reads "1_0", "nan"
    and other scripts' digits).

    Raises:
      argparse.ArgumentTypeError: anything else; argparse reports it with the argument's name (exit code 2).
    """
    if not _FLOAT_TEXT.fullmatch(text.strip()) or math.isnan(float(text)):
        raise argparse.ArgumentTypeError(f"invalid float value: {shortened(text)} (a number in ASCII, not nan)")
    return float(text)


def check_not_none(value, name):
    """Raises ValueError when ``value`` is None."""
    if value is None:
        raise NpuArgumentError(f"{name} must not be None")


def check_positive_integer(value, name):
    """Raises TypeError unless ``value`` is an int (not bool), ValueError unless it is > 0."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise NpuArgumentTypeError(f"{name} must be int, got {type(value)}")
    if value <= 0:
        raise NpuArgumentError(f"{name} must be positive, got {value}")


def check_nonnegative_integer(value, name):
    """Raises TypeError unless ``value`` is an int (not bool), ValueError unless it is >= 0."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise NpuArgumentTypeError(f"{name} must be int, got {type(value)}")
    if value < 0:
        raise NpuArgumentError(f"{name} must be nonnegative, got {value}")


def check_bool_type(value, name):
    """Raises TypeError unless ``value`` is a bool."""
    if not isinstance(value, bool):
        raise NpuArgumentTypeError(f'"{name}" type must be bool, got {type(value)}')


_PROFILING_OPTIONS = ("training_trace", "task_time", "op_trace")


def check_profiling_options(profiling_options=()):
    """Checks a legacy list of profiling options and returns them joined with ":".

    Raises:
      ValueError: an option is not training_trace, task_time or op_trace.
    """
    for option in profiling_options:
        if option not in _PROFILING_OPTIONS:
            raise NpuArgumentError(
                f"profiling options must be in `training_trace`, `task_time` or `op_trace`, got {option!r}"
            )
    return ":".join(profiling_options)
