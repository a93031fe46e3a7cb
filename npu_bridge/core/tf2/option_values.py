"""From the fields a TF2 script assigned to the validated options of the NpuOptimizer option table."""

from npu_bridge.core.options import parse as option_parse
from npu_bridge.core.options.table import OPTIONS
from npu_bridge.core.runtime import log
from npu_bridge.core.tf2 import option_fields

SOURCE = "npu_device.global_options()"


def parse_assigned(assigned, device_id=None):
    """Validates the assigned fields through the option table, once.

    Args:
      assigned: {field path: value} (``global_options.snapshot()``).
      device_id: the device id the device opens with, set as ``session_device_id``; None leaves it unset.
    Returns:
      ``NpuOptions``.
    Raises:
      NpuOptionError: a value the option table refuses, named with its option.
    """
    values = {}
    for path, value in assigned.items():
        field = option_fields.BY_PATH[path]
        name = field.option_name
        if name is None:
            log.info_once(
                ("npu_device-no-effect", path), "npu_device: %s has no effect here: %s", path, field.no_effect
            )
            continue
        values[name] = _as_kind(OPTIONS[name].kind, value)
    if values.get("profiling_mode") and "profiling_options" not in values:
        values["profiling_options"] = option_fields.DEFAULT_PROFILING_OPTIONS  # the adapter's default
    if device_id is not None:
        values["session_device_id"] = device_id
    return option_parse.parse_values(values, source=SOURCE)


def _as_kind(kind, value):
    """The adapter hands every value on as a string (True as "1"); the table reads them by kind."""
    if isinstance(value, bool):
        return value if kind == "b" else ("1" if value else "0")
    if kind == "b" and value in (0, 1, "0", "1"):
        return bool(int(value))
    if kind == "i" and isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    if kind == "s" and not isinstance(value, (str, bytes)):
        return str(value)
    return value
