"""The ``profiling_options`` value: its forms, the keys Ascend knows, what each accepts and means here.

Forms (as upstream accepts them; docs/profiling.md):
  * a JSON object, as the ``PROFILING_OPTIONS`` environment variable holds it, e.g.
    ``{"output": "./prof", "training_trace": "on", "task_trace": "on", "fp_point": "", "bp_point": ""}``;
  * the legacy colon list of adapters up to 2020: ``training_trace``, ``task_trace`` joined by ``:``, or
    ``op_trace`` alone; ``fp_point`` / ``bp_point`` are then separate parameter_map keys;
  * empty: the default options ``DEFAULT_OPTIONS`` (upstream's built-in default).

``parse`` turns any form into one normalized dict of JSON-form keys; the option table's check calls it, so a
bad value fails when the session (or config object) is created. Keys that only configure NPU hardware counters
or system sampling are validated and reported as having no effect here (``HARDWARE_ONLY``).
"""

import difflib
import json
import os
import re
from typing import Dict

from npu_bridge.core.runtime import bounded_files, log
from npu_bridge.core.runtime.errors import OptionValueError, shortened_text

DEFAULT_OPTIONS = {
    "output": "./",
    "training_trace": "on",
    "task_time": "on",
    "hccl": "on",
    "aicpu": "on",
    "aic_metrics": "PipeUtilization",
    "msproftx": "off",
}
AIC_METRICS = (
    "ArithmeticUtilization",
    "PipeUtilization",
    "Memory",
    "MemoryL0",
    "MemoryUB",
    "ResourceConflictRatio",
    "L2Cache",
    "PipelineExecuteUtilization",
)
LEGACY_ITEMS = ("training_trace", "task_trace", "op_trace")
STORAGE_LIMIT_MB = (200, 4294967295)
HOST_SYS_ITEMS = ("cpu", "mem", "disk", "network", "osrt")
HOST_SYS_USAGE_ITEMS = ("cpu", "mem")
_ON_OFF = ("on", "off")
_TASK_LEVELS = ("on", "off", "l0", "l1")
_API_LEVELS = ("off", "l0", "l1")
_PATH_MAX, _NAME_MAX = 4096, 255  # Linux's limits of a path and of one name in it, in bytes
_STORAGE = re.compile(r"([0-9]+)MB")  # ASCII digits: \d also matches other scripts' digits


def _choice(values):
    def check(key, value):
        if value not in values:
            raise OptionValueError(f'"{key}" must be one of {", ".join(values)}, got {value!r}')
        return value

    return check


def _text(key, value):
    return value


def _positive_int(key, value):
    if not re.fullmatch(r"[1-9][0-9]*", value):
        raise OptionValueError(f'"{key}" must be a positive integer, got {value!r}')
    return value


def _items_of(allowed):
    def check(key, value):
        items = value.split(",")
        bad = [item for item in items if item not in allowed]
        if bad:
            raise OptionValueError(f'"{key}" must be a comma-separated list of {", ".join(allowed)}, got {value!r}')
        return value

    return check


def _storage_limit(key, value):
    match = _STORAGE.fullmatch(value)
    low, high = STORAGE_LIMIT_MB
    if not match or not low <= int(match.group(1)) <= high:
        raise OptionValueError(f'"{key}" must be <N>MB with {low} <= N <= {high}, e.g. "500MB", got {value!r}')
    return value


def _output(key, value):
    """Accepts a directory that exists and is writable, or that can be created (nearest ancestor writable)."""
    if not value:
        raise OptionValueError(f'"{key}" is empty; give the directory for the profile, e.g. "./profiling"')
    if "\x00" in value:
        raise OptionValueError(f'"{key}" holds a NUL character; give the directory for the profile, e.g. "./profiling"')
    path = os.path.abspath(value)
    shown = shortened_text(path)
    if len(os.fsencode(path)) >= _PATH_MAX or any(len(os.fsencode(part)) > _NAME_MAX for part in path.split(os.sep)):
        raise OptionValueError(
            f'"{key}" {shown}: the path is too long (at most {_PATH_MAX - 1} bytes, {_NAME_MAX} per name)'
        )
    probe = path
    while not os.path.exists(probe):
        probe = os.path.dirname(probe)
    if not os.path.isdir(probe):
        raise OptionValueError(f'"{key}" {shown}: {shortened_text(probe)} exists and is not a directory')
    if not os.access(probe, os.W_OK | os.X_OK):
        raise OptionValueError(f'"{key}" {shown}: the directory {shortened_text(probe)} is not writable')
    return value


# key -> check(key, value) -> value. Keys in HARDWARE_ONLY are accepted but have no effect here.
_KEYS = {
    "output": _output,
    "storage_limit": _storage_limit,
    "training_trace": _choice(_ON_OFF),
    "task_trace": _choice(_TASK_LEVELS),
    "task_time": _choice(_TASK_LEVELS),
    "hccl": _choice(_ON_OFF),
    "aicpu": _choice(_ON_OFF),
    "fp_point": _text,
    "bp_point": _text,
    "aic_metrics": _choice(AIC_METRICS),
    "l2": _choice(_ON_OFF),
    "msproftx": _choice(_ON_OFF),
    "ge_api": _choice(_API_LEVELS),
    "runtime_api": _choice(_ON_OFF),
    "sys_hardware_mem_freq": _positive_int,
    "llc_profiling": _text,
    "sys_io_sampling_freq": _positive_int,
    "sys_interconnection_freq": _positive_int,
    "dvpp_freq": _positive_int,
    "instr_profiling_freq": _positive_int,
    "host_sys": _items_of(HOST_SYS_ITEMS),
    "host_sys_usage": _items_of(HOST_SYS_USAGE_ITEMS),
    "host_sys_usage_freq": _positive_int,
}
HARDWARE_ONLY = {
    "aic_metrics": "AI Core PMU counters",
    "l2": "L2 cache counters",
    "msproftx": "msproftx markers",
    "ge_api": "graph-engine API tracing",
    "runtime_api": "Ascend runtime API tracing",
    "sys_hardware_mem_freq": "HBM/DDR sampling",
    "llc_profiling": "last-level cache sampling",
    "sys_io_sampling_freq": "NIC/RoCE sampling",
    "sys_interconnection_freq": "HCCS/PCIe sampling",
    "dvpp_freq": "DVPP sampling",
    "instr_profiling_freq": "instruction sampling",
    "host_sys": "host system tracing",
    "host_sys_usage": "host usage sampling",
    "host_sys_usage_freq": "host usage sampling",
}
# Off values of the hardware-only keys: setting one of these is not worth a note.
_HARDWARE_OFF = {"off", "", DEFAULT_OPTIONS["aic_metrics"]}


def parse(text: str) -> Dict[str, str]:
    """Parses a profiling_options value of any form into normalized JSON-form keys.

    Args:
      text: the option value (JSON object, legacy colon list, or empty for the defaults).
    Returns:
      A dict: the given JSON keys with string values; for the legacy form, ``training_trace`` and
      ``task_time`` ("on"/"off"); ``DEFAULT_OPTIONS`` for an empty value. ``task_trace`` is folded into
      ``task_time``.
    Raises:
      ValueError: a message saying what is wrong with which key and what is accepted.
    """
    text = text.strip()
    if not text:
        return dict(DEFAULT_OPTIONS)
    if text[0] in "{[":
        return _parse_json(text)
    return _parse_legacy(text)


def _parse_json(text):
    try:
        parsed = bounded_files.parse_json(text)
    except json.JSONDecodeError as e:
        raise OptionValueError(f"profiling_options is not valid JSON ({e})") from None
    if not isinstance(parsed, dict):
        raise OptionValueError("profiling_options must be a JSON object")
    result = {}
    for key, value in parsed.items():
        check = _KEYS.get(key)
        if check is None:
            matches = difflib.get_close_matches(key, _KEYS, n=1)
            log.warn_once(
                (__name__, "unknown", key),
                "profiling_options key %r is not known to npu_bridge and is ignored%s",
                key,
                f"; did you mean {matches[0]!r}?" if matches else "",
            )
            continue
        if not isinstance(value, str):
            raise OptionValueError(f'profiling_options key "{key}" must be a JSON string, got {json.dumps(value)}')
        result[key] = check(key, value)
    levels = {result[key] for key in ("task_trace", "task_time") if key in result}
    if len(levels) > 1:
        raise OptionValueError(
            f'"task_trace" ({result["task_trace"]}) and "task_time" ({result["task_time"]}) '
            "are two names of one setting and disagree"
        )
    if "task_trace" in result:
        result["task_time"] = result.pop("task_trace")
    return result


def _parse_legacy(text):
    items = text.split(":")
    if any(item not in LEGACY_ITEMS for item in items):
        raise OptionValueError("profiling options must be in 'training_trace', 'task_trace' or 'op_trace'")
    if "op_trace" in items and len(items) > 1:
        raise OptionValueError("op_trace can not be combined with other profiling options")
    return {
        "training_trace": "on" if "training_trace" in items else "off",
        "task_time": "on" if {"task_trace", "op_trace"} & set(items) else "off",
    }


def check_value(key: str, value: str) -> str:
    """Checks one JSON-form key and its string value.

    Args:
      key: a key of the JSON form, e.g. "aic_metrics".
      value: its value.
    Returns:
      The value.
    Raises:
      ValueError: unknown key or bad value.
    """
    if key not in _KEYS:
        raise OptionValueError(f"unknown profiling_options key {key!r}; known keys: {', '.join(_KEYS)}")
    return _KEYS[key](key, value)


def hardware_only_settings(parsed: Dict[str, str]) -> Dict[str, str]:
    """Returns {key: what it samples} of the hardware-only keys ``parsed`` turns on (they do nothing here)."""
    return {
        key: HARDWARE_ONLY[key] for key, value in parsed.items() if key in HARDWARE_ONLY and value not in _HARDWARE_OFF
    }
