"""``NPU_BRIDGE_OPTIONS``: NpuOptimizer options a script's environment sets over the script's own.

The variable holds a JSON object, ``{"precision_mode": "must_keep_origin_dtype", "customize_dtypes": "/tmp/k.cfg"}``:
each key an option of the table, each value a bool, an integer, a string or ``null`` (``null`` removes the
script's setting, back to the default). It is applied on top of the options of every bridged session, TF2
function graphs and ``npu_resource_init``, so a tool (``npu-debug bisect``) or a user can change a script's
options without editing it. Checked when it is applied: a malformed value raises ``EnvironmentVariableError``
naming the variable.
"""

import json
import os

from npu_bridge.core.options.table import OPTIONS, did_you_mean
from npu_bridge.core.runtime import bounded_files, log
from npu_bridge.core.runtime.errors import EnvironmentVariableError, NpuOptionError, shortened

VARIABLE = "NPU_BRIDGE_OPTIONS"
_ALLOWED = "a JSON object of NpuOptimizer options, each a bool, an integer, a string or null"


def read(environ=None):
    """Returns the options ``NPU_BRIDGE_OPTIONS`` sets, {name: value}; {} when it is unset or empty.

    Args:
      environ: mapping to read instead of ``os.environ``.
    Raises:
      EnvironmentVariableError: the value is not such a JSON object, or names an unknown option.
    """
    environ = os.environ if environ is None else environ
    text = environ.get(VARIABLE, "")
    if not text.strip():
        return {}
    try:
        values = bounded_files.parse_json(text)
    except json.JSONDecodeError as e:
        raise _error(text, f"not valid JSON ({e.msg})") from None
    if not isinstance(values, dict):
        raise _error(text, f"a JSON {type(values).__name__} is not an object")
    for name, value in values.items():
        if name not in OPTIONS:
            raise _error(text, f"{name!r} is not an NpuOptimizer option{did_you_mean(name)}")
        if value is not None and not isinstance(value, (bool, int, str)):
            raise _error(text, f"the value of {name} is a JSON {type(value).__name__}")
    return values


def apply(options, environ=None):
    """Returns ``options`` with the options of ``NPU_BRIDGE_OPTIONS`` set over them (validated again).

    Args:
      options: validated ``NpuOptions``.
      environ: mapping to read instead of ``os.environ``.
    Raises:
      EnvironmentVariableError: the variable is malformed, or the options it gives are invalid (alone or with
        the script's).
    """
    environ = os.environ if environ is None else environ
    values = read(environ)
    if not values:
        return options
    try:
        result = options.with_values(values)
    except NpuOptionError as e:
        raise _error(environ[VARIABLE], str(e)) from None
    log.info_once((__name__, tuple(sorted(values.items()))), "%s sets NpuOptimizer options %s", VARIABLE, values)
    return result


def _error(text, detail):
    return EnvironmentVariableError(f"{VARIABLE} has invalid value {shortened(text)}: {detail}. Allowed: {_ALLOWED}")
