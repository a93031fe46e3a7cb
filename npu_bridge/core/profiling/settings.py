"""What a profile collects: ``ProfilingSettings`` from session options, the environment, or a ``Profiler``.

Precedence, as on Ascend: the script's ``profiling_mode`` / ``profiling_options`` beat the ``PROFILING_MODE`` /
``PROFILING_OPTIONS`` environment variables; an empty ``profiling_options`` means upstream's default options.
With the legacy colon form, ``fp_point`` / ``bp_point`` come from their own parameter_map keys; a JSON
``fp_point`` / ``bp_point`` wins over those keys. A JSON object without ``training_trace`` has it off, one
without ``task_time`` / ``task_trace`` has it on (Ascend's defaults for missing keys).
"""

import dataclasses
import os
from typing import Optional

from npu_bridge.core.options import profiling_options as profiling_options_format
from npu_bridge.core.options.table import OPTIONS
from npu_bridge.core.runtime import safe_paths
from npu_bridge.core.runtime.errors import NpuArgumentError, NpuOptionError

PROFILER_LEVELS = ("L0", "L1", "L2")
_TRUE, _FALSE = ("true", "1", "on"), ("false", "0", "off")
_TASK_LEVEL = {"on": "l1", "l1": "l1", "l0": "l0", "off": "off"}


@dataclasses.dataclass(frozen=True)
class ProfilingSettings:
    """Normalized profiling settings.

    Attributes:
      output: absolute directory under which the profile directory (``PROF_...``) is created.
      training_trace: write the step trace (iterations, FP/BP split).
      task_level: "off" (no per-op summaries), "l0" (op timings) or "l1" (also shapes, dtypes, formats).
      hccl: include collective (HCCL) tasks.
      fp_point: op name of the first forward op, "" to detect it.
      bp_point: op name of the last backward op, "" to detect it.
      storage_limit_mb: stop recording when the raw data reaches this size; None for no limit.
      hardware_only: {key: what it samples} of requested NPU-hardware data, which has no effect here.
      source: what turned profiling on, for messages.
      options_text: the profiling options as given.
    """

    output: str
    training_trace: bool = True
    task_level: str = "l1"
    hccl: bool = True
    fp_point: str = ""
    bp_point: str = ""
    storage_limit_mb: Optional[int] = None
    hardware_only: dict = dataclasses.field(default_factory=dict)
    source: str = "profiling_mode"
    options_text: str = ""


def from_session_options(options, environ=None):
    """Returns the settings a bridged session profiles with, or None when profiling is off.

    Args:
      options: the session's validated ``NpuOptions``.
      environ: mapping to read instead of ``os.environ``.
    Returns:
      ``ProfilingSettings`` or None.
    Raises:
      NpuOptionError: PROFILING_MODE or PROFILING_OPTIONS holds a bad value (named in the message), or the
        output directory can be written by every user and has no sticky bit.
    """
    environ = os.environ if environ is None else environ
    if options.is_set("profiling_mode"):
        enabled, source = options.get("profiling_mode"), "the profiling_mode option"
    else:
        enabled, source = _env_bool(environ), "the PROFILING_MODE environment variable"
    if not enabled:
        return None
    text = options.get("profiling_options")
    origin = "the profiling_options option, with profiling turned on by PROFILING_MODE"
    if text is None and environ.get("PROFILING_OPTIONS", "").strip():
        text, origin = environ["PROFILING_OPTIONS"], "the environment variable PROFILING_OPTIONS"
    text = text or ""
    try:
        parsed = profiling_options_format.parse(text)
    except ValueError as e:  # the option table checks the option only when profiling_mode is set
        raise NpuOptionError(
            "profiling_options", text, OPTIONS["profiling_options"].allowed, f"{e} (from {origin})"
        ) from None
    legacy_points = {"fp_point": options.get("fp_point") or "", "bp_point": options.get("bp_point") or ""}
    settings = _settings(parsed, legacy_points, source, text)
    problem = safe_paths.shared_base_problem(settings.output)
    if problem is not None:
        raise NpuOptionError("profiling_options", text, "an output directory other users cannot write into", problem)
    return settings


def for_profiler(level, aic_metrics, output_path):
    """Returns the settings of a ``Profiler`` scope.

    Args:
      level: "L0" (op timings), "L1" or "L2" (also shapes and dtypes).
      aic_metrics: "" or one of ``AIC_METRICS`` (NPU counters: accepted, no effect here).
      output_path: the output directory; "" means the current directory.
    Returns:
      ``ProfilingSettings``.
    Raises:
      ValueError: a bad argument (named in the message).
    """
    if level not in PROFILER_LEVELS:
        raise NpuArgumentError(f"Profiler level must be one of {', '.join(PROFILER_LEVELS)}, got {level!r}")
    options = {"output": output_path or "./", "training_trace": "on", "task_time": "l0" if level == "L0" else "l1"}
    if aic_metrics:
        options["aic_metrics"] = aic_metrics
    text = " ".join(f"{k}={v}" for k, v in options.items())
    try:
        checked = {key: profiling_options_format.check_value(key, value) for key, value in options.items()}
    except ValueError as e:
        raise NpuArgumentError(f"Profiler: {e}") from None
    return _settings(checked, {}, "Profiler", text)


def _settings(parsed, legacy_points, source, text):
    storage = parsed.get("storage_limit")
    return ProfilingSettings(
        output=os.path.abspath(parsed.get("output", profiling_options_format.DEFAULT_OPTIONS["output"])),
        training_trace=parsed.get("training_trace", "off") == "on",
        task_level=_TASK_LEVEL[parsed.get("task_time", "on")],
        hccl=parsed.get("hccl", "on") == "on",
        fp_point=parsed.get("fp_point", legacy_points.get("fp_point", "")),
        bp_point=parsed.get("bp_point", legacy_points.get("bp_point", "")),
        storage_limit_mb=int(storage[:-2]) if storage else None,
        hardware_only=profiling_options_format.hardware_only_settings(parsed),
        source=source,
        options_text=text,
    )


def _env_bool(environ):
    text = environ.get("PROFILING_MODE", "").strip()
    if not text or text.lower() in _FALSE:
        return False
    if text.lower() in _TRUE:
        return True
    raise NpuOptionError("profiling_mode", text, "true / false", "from the environment variable PROFILING_MODE")
