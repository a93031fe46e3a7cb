"""Where a profile's files are.

One profile directory per rank and profiling period, as Ascend's ``PROF_*`` directories::

    <output>/PROF_<YYYYMMDDhhmmssmmm>_rank<R>/
        info.json                              what was profiled (rank, device, settings, graphs, ...)
        device_<D>/data/step_stats.records     raw data (``raw_trace``)
        mindstudio_profiler_output/            Ascend-format exports
            op_summary_<ts>.csv  op_statistic_<ts>.csv  step_trace_<ts>.csv  step_trace_<ts>.json
            msprof_<ts>.json   (the timeline)
        report.html                            the picture (``report``)
"""

import errno
import glob
import io
import json
import os

from npu_bridge.core.device.device_target import DEVICE_TARGETS
from npu_bridge.core.profiling import raw_trace
from npu_bridge.core.runtime import atomic_write, bounded_files, safe_paths
from npu_bridge.core.runtime.errors import FileReadError, ProfileDataError, shortened

INFO_FILE = "info.json"
EXPORT_DIR = "mindstudio_profiler_output"
REPORT_FILE = "report.html"
EXPORT_PREFIXES = ("op_summary", "op_statistic", "step_trace", "msprof")
DIRECTORY_MODE = safe_paths.directory_mode(safe_paths.REPORT_MODE)
INFO_LIMIT = 64 * 1024 * 1024  # bytes: info.json lists the settings and graphs, far below this


def make_dirs(profile_dir, *parts):
    """Creates directories below a profile directory (``safe_paths.make_dirs``: each one ours, none a symlink);
    readable by others (``REPORT_MODE``'s directories: profiles hold times and op names, no tensor data)."""
    return safe_paths.make_dirs(profile_dir, *parts, mode=DIRECTORY_MODE)


def new_text_file(path):
    """Creates ``path`` as a new UTF-8 text file (without following a symlink; no newline translation, csv writes
    its own) and opens it for writing. Exports hold times, shapes and op names, no tensor data: ``REPORT_MODE``."""
    return io.TextIOWrapper(safe_paths.create_new(path, safe_paths.REPORT_MODE), encoding="utf-8", newline="")


def raw_path(profile_dir, device_id):
    """The raw trace file of ``device_id`` in ``profile_dir``."""
    return os.path.join(profile_dir, f"device_{device_id}", "data", raw_trace.FILE_NAME)


def export_name(prefix, timestamp, extension):
    """The file name of an exported file: ``<prefix>_<timestamp>.<extension>``."""
    return f"{prefix}_{timestamp}.{extension}"


def export_path(profile_dir, prefix, timestamp, extension):
    """``<profile_dir>/mindstudio_profiler_output/<prefix>_<timestamp>.<extension>``."""
    return os.path.join(profile_dir, EXPORT_DIR, export_name(prefix, timestamp, extension))


def exported_file(profile_dir, prefix, extension):
    """The ``<prefix>_<timestamp>.<extension>`` file of a profile's last complete export (``exported_files``), or
    None when that export has none."""
    for path in exported_files(profile_dir, read_info(profile_dir)).values():
        name = os.path.basename(path)
        if name.startswith(f"{prefix}_") and name.endswith(f".{extension}"):
            return path
    return None


def read_info(profile_dir):
    """Returns the parsed info.json of a profile.

    Args:
      profile_dir: the profile directory.
    Returns:
      The JSON object (a dict).
    Raises:
      ProfileDataError: it is missing, not a regular file (a FIFO, a device), too large, not a JSON object, or a
        field its readers use is missing or holds something else than the recorder and export write (the message
        names the file, the field, what it holds and what it should).
    """
    path = os.path.join(profile_dir, INFO_FILE)
    try:
        info = bounded_files.parse_json(bounded_files.read_text(path, INFO_LIMIT))
    except FileReadError as e:
        if e.errno == errno.ENOENT:
            raise ProfileDataError(
                f"{profile_dir} is not an npu_bridge profile directory: {INFO_FILE} is missing"
            ) from None
        raise ProfileDataError(f"{path} cannot be read: {e.strerror}") from None
    except ValueError as e:
        raise ProfileDataError(f"{path} cannot be read: {e}") from None
    if not isinstance(info, dict):
        raise ProfileDataError(f"{path} cannot be read: it holds a JSON {type(info).__name__}, not an object")
    _check_fields(path, "", info, _INFO_FIELDS)
    _check_fields(path, "settings.", info["settings"], _SETTINGS_FIELDS)
    for index, model in enumerate(info.get("models") or ()):
        _check_fields(path, f"models[{index}].", model, _MODEL_FIELDS)
    return info


# What the readers of info.json (export, summary, report) take from it, as the recorder and export write it:
# (field, check, what it must hold, required). Fields no reader uses are not checked.
BACKENDS = tuple(target for target in DEVICE_TARGETS if target != "auto")  # what "auto" resolves to
_TASK_LEVELS = ("off", "l0", "l1")


def _count(value):
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _or_null(check):
    return lambda value: value is None or check(value)


def _is(kind):
    return lambda value: isinstance(value, kind)


def _texts(value):
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _text_map(value):
    return isinstance(value, dict) and all(isinstance(item, str) for item in value.values())


_INFO_FIELDS = (
    ("rank_id", _count, "a rank id (an integer >= 0)", True),
    ("device_id", _count, "a device id (an integer >= 0)", True),
    ("backend", lambda value: value in BACKENDS, f"the backend: {', '.join(map(repr, BACKENDS))}", True),
    ("settings", _is(dict), "an object: the profiling settings", True),
    ("precision_mode", _or_null(_is(str)), "a precision mode (a string) or null", False),
    ("precision_mode_v2", _or_null(_is(str)), "a precision mode (a string) or null", False),
    ("runs_recorded", _or_null(_count), "a number of runs (an integer >= 0) or null", False),
    ("runs_dropped", _count, "a number of runs (an integer >= 0)", False),
    ("runs_exported", _count, "a number of runs (an integer >= 0)", False),
    ("models", _is(list), "a list of graph objects", False),
    ("exported", _or_null(_text_map), "an object of file names (strings) or null", False),
    ("raw_damage", _or_null(_is(dict)), "an object describing the damage, or null", False),
)
_SETTINGS_FIELDS = (
    ("task_level", lambda value: value in _TASK_LEVELS, f"one of {', '.join(map(repr, _TASK_LEVELS))}", True),
    ("training_trace", _is(bool), "true or false", True),
    ("hccl", _is(bool), "true or false", True),
    ("fp_point", _is(str), "an op name (a string, empty to detect it)", True),
    ("bp_point", _is(str), "an op name (a string, empty to detect it)", True),
    ("storage_limit_mb", _or_null(lambda value: _count(value) and value > 0), "an integer > 0 or null", False),
    ("hardware_only", _text_map, "an object of strings", False),
)
_MODEL_FIELDS = (
    ("model_id", _count, "an integer >= 0", True),
    ("training", _is(bool), "true or false", True),
    ("runs", _count, "an integer >= 0", True),
    ("iterations", _count, "an integer >= 0", True),
    ("fp_point", _or_null(_is(str)), "an op name (a string) or null", True),
    ("bp_point", _or_null(_is(str)), "an op name (a string) or null", True),
    ("fp_point_source", _is(str), "a string", True),
    ("bp_point_source", _is(str), "a string", True),
    ("fetched", _texts, "a list of strings", True),
)


def _check_fields(path, prefix, value, fields):
    """Raises ProfileDataError naming ``path``, the field, what it holds and what it should, for the first field
    of ``value`` (an object of info.json at ``prefix``) that is missing or holds something else."""
    damaged = f"{path} is damaged"
    if not isinstance(value, dict):
        raise ProfileDataError(f"{damaged}: '{prefix.rstrip('.')}' holds {shortened(value)}, not an object")
    for field, check, expected, required in fields:
        if field not in value:
            if required:
                raise ProfileDataError(f"{damaged}: '{prefix}{field}' is missing; it should hold {expected}")
            continue
        if not check(value[field]):
            raise ProfileDataError(
                f"{damaged}: '{prefix}{field}' holds {shortened(value[field])}; it should hold {expected}"
            )


def exported_files(profile_dir, info):
    """The files of a profile's last complete export, each checked to be there.

    info.json names them and is written last, after all of them: files it does not name are not part of that
    export (another export's, or one that failed).

    Every name must stay inside the profile directory (``safe_paths.inside``): relative, without ``..``, and not
    leading out through a symlink; a hostile info.json does not make a reader open another file.

    Args:
      profile_dir: the profile directory.
      info: its info.json (``read_info``).
    Returns:
      {kind: path} ("op_summary", "op_statistic", "step_trace", "step_trace_json", "timeline"); empty when the
      profile was never exported.
    Raises:
      ProfileDataError: info.json's list is malformed, or a file of the export is missing.
      UnsafePathError: info.json names a file outside the profile directory (the message names info.json and the
        path).
    """
    source = os.path.join(profile_dir, INFO_FILE)
    exported = info.get("exported") or {}
    if not isinstance(exported, dict) or not all(isinstance(p, str) for p in exported.values()):
        raise ProfileDataError(f"{source}: 'exported' is not a map of file names")
    paths = {
        kind: safe_paths.inside(profile_dir, relative, source, resolve=True) for kind, relative in exported.items()
    }
    missing = sorted(exported[kind] for kind, path in paths.items() if not os.path.exists(path))
    if missing:
        raise ProfileDataError(
            f"the export of {profile_dir} is incomplete: {', '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} missing; redo it with `npu-prof export {profile_dir}`"
        )
    return paths


def write_info(profile_dir, info):
    """Writes info.json atomically (a new file renamed over it; it holds no tensor data: ``REPORT_MODE``)."""
    atomic_write.write_text(os.path.join(profile_dir, INFO_FILE), json.dumps(info, indent=1, sort_keys=True))


def find_profiles(path):
    """Finds the profile directories at or under ``path``.

    Args:
      path: a profile directory, or a directory holding profiles (e.g. the ``output`` of several ranks).
    Returns:
      The profile directories, sorted by path.
    Raises:
      ProfileDataError: ``path`` does not exist or holds no profile.
    """
    if not os.path.isdir(path):
        raise ProfileDataError(f"profiling directory {path} does not exist or is not a directory")
    if os.path.isfile(os.path.join(path, INFO_FILE)):
        return [path]
    found = sorted(os.path.dirname(p) for p in glob.glob(os.path.join(path, "**", INFO_FILE), recursive=True))
    if not found:
        raise ProfileDataError(f"no npu_bridge profile (a directory with {INFO_FILE}) under {path}")
    return found
