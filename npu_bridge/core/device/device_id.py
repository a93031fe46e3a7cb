"""Which NPU device id this process drives.

Priority, as on Ascend: the ``session_device_id`` option (when set, i.e. >= 0), then ``ASCEND_DEVICE_ID``
(logical id), then ``DEVICE_ID`` (upstream's physical id; there is no physical/logical mapping here, so it
is used as is), then 0. An empty variable counts as unset. There is no device here: the id names the
simulated device in artifact paths and in the collective world.

The world (``npu_bridge.core.world.world``) may pick a better default than 0 when nothing is set explicitly (the
rank table's device of this rank, or the local rank in a multi-rank job), which is why
``resolve_with_source`` reports where the id came from.
"""

import os
import re

from npu_bridge.core.runtime.errors import DeviceIdError, shortened

SESSION_OPTION = "session_device_id"
ENV_VARIABLES = ("ASCEND_DEVICE_ID", "DEVICE_ID")
DEFAULT = "default"
_UNSET_SESSION_VALUES = (None, -1)  # -1 is upstream's default of the option, meaning "not set"
_MAX_DIGITS = 100  # far beyond any int64, far below int()'s limit
_INT_TEXT = re.compile(r"[+-]?[0-9]+")
MAX_DEVICE_ID = 2**63 - 1  # device ids travel as int64, like the session_device_id option


def resolve_with_source(session_device_id=None, environ=os.environ):
    """Resolves the device id and says where it came from.

    Args:
      session_device_id: the ``session_device_id`` option; None or -1 mean "not set".
      environ: mapping to read ``ASCEND_DEVICE_ID`` / ``DEVICE_ID`` from.
    Returns:
      ``(device_id, source)``: source is "session_device_id", "ASCEND_DEVICE_ID", "DEVICE_ID" or "default"
      (nothing set, device 0).
    Raises:
      DeviceIdError: the option is negative or not an int, or the winning variable is not an int >= 0.
    """
    if session_device_id not in _UNSET_SESSION_VALUES:
        if isinstance(session_device_id, bool) or not isinstance(session_device_id, int):
            raise DeviceIdError(
                f"session_device_id is invalid, should be int, such as 0, 1, 2; got {session_device_id!r}."
            )
        if session_device_id < 0:
            raise DeviceIdError(f"session_device_id must be nonnegative integer; got {session_device_id}.")
        return session_device_id, SESSION_OPTION
    for name in ENV_VARIABLES:
        text = environ.get(name, "")
        if text == "":
            continue
        return _parse_env(name, text), name
    return 0, DEFAULT


def resolve(session_device_id=None, environ=os.environ):
    """Returns the device id of this process.

    Args:
      session_device_id: the ``session_device_id`` option; None or -1 mean "not set".
      environ: mapping to read ``ASCEND_DEVICE_ID`` / ``DEVICE_ID`` from.
    Returns:
      The device id (int >= 0); 0 when nothing is set.
    Raises:
      DeviceIdError: the option is negative or not an int, or the winning variable is not an int >= 0.
    """
    return resolve_with_source(session_device_id, environ)[0]


def parse_int(text):
    """Parses a decimal integer from an environment variable's text.

    Stricter than ``int()``, which also accepts "1_0" and non-ASCII digits (and refuses more than 4300 digits
    with a ValueError).

    Args:
      text: the variable's value; surrounding whitespace is ignored.
    Returns:
      The integer, or None when ``text`` is not a decimal integer of at most ``_MAX_DIGITS`` digits.
    """
    text = text.strip()
    return int(text) if len(text) <= _MAX_DIGITS and _INT_TEXT.fullmatch(text) else None


def _parse_env(name, text):
    value = parse_int(text)
    if value is None:
        raise DeviceIdError(f"{name} is invalid, should be int, such as 0, 1, 2. Got {name}={shortened(text)}.")
    if value < 0:
        raise DeviceIdError(f"{name} should be >= 0. Got {name}={shortened(text)}.")
    if value > MAX_DEVICE_ID:
        raise DeviceIdError(f"{name} should be <= {MAX_DEVICE_ID} (an int64). Got {name}={shortened(text)}.")
    return value
