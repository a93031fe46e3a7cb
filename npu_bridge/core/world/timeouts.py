"""Timeouts read from the environment that the world needs before any collective runs.

``HCCL_CONNECT_TIMEOUT`` (seconds, default 120) bounds how long a rank waits for the job to form: for a rank table
the scheduler is still filling in, and for every other rank's server (``collectives.server``).
"""

import os

from npu_bridge.core.device.device_id import parse_int
from npu_bridge.core.runtime.errors import EnvironmentVariableError, shortened

CONNECT_TIMEOUT_VARIABLE = "HCCL_CONNECT_TIMEOUT"
DEFAULT_CONNECT_TIMEOUT = 120
MAX_SECONDS = 2**31 - 1  # a timeout TensorFlow's collectives can hold (microseconds in an int64) with room to spare


def seconds_variable(environ, name, default):
    """Reads a whole number of seconds >= 1 from ``environ[name]`` (unset or empty: ``default``).

    Raises:
      EnvironmentVariableError: not an integer in [1, MAX_SECONDS]; the message names the variable and value.
    """
    text = environ.get(name, "").strip()
    if not text:
        return default
    value = parse_int(text)  # ASCII digits only: int() also reads "1_000" and other scripts' digits
    if value is None or not 1 <= value <= MAX_SECONDS:
        raise EnvironmentVariableError(
            f"{name} has invalid value {shortened(environ[name])}: must be a whole number of seconds >= 1 "
            f"and <= {MAX_SECONDS}"
        )
    return value


def connect_timeout(environ=os.environ):
    """Returns HCCL_CONNECT_TIMEOUT in seconds.

    Raises:
      EnvironmentVariableError: the variable is not a whole number >= 1.
    """
    return seconds_variable(environ, CONNECT_TIMEOUT_VARIABLE, DEFAULT_CONNECT_TIMEOUT)
