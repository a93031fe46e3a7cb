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
import json
import os

from npu_bridge.core.profiling import raw_trace
from npu_bridge.core.runtime import bounded_files
from npu_bridge.core.runtime.errors import FileReadError, ProfileDataError

INFO_FILE = "info.json"
EXPORT_DIR = "mindstudio_profiler_output"
REPORT_FILE = "report.html"
EXPORT_PREFIXES = ("op_summary", "op_statistic", "step_trace", "msprof")
INFO_LIMIT = 64 * 1024 * 1024  # bytes: info.json lists the settings and graphs, far below this


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
      ProfileDataError: it is missing, not a regular file (a FIFO, a device), too large, or not a JSON object.
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
    return info


def exported_files(profile_dir, info):
    """The files of a profile's last complete export, each checked to be there.

    info.json names them and is written last, after all of them: files it does not name are not part of that
    export (another export's, or one that failed).

    Args:
      profile_dir: the profile directory.
      info: its info.json (``read_info``).
    Returns:
      {kind: path} ("op_summary", "op_statistic", "step_trace", "step_trace_json", "timeline"); empty when the
      profile was never exported.
    Raises:
      ProfileDataError: info.json's list is malformed, or a file of the export is missing.
    """
    exported = info.get("exported") or {}
    if not isinstance(exported, dict) or not all(isinstance(p, str) for p in exported.values()):
        raise ProfileDataError(f"{os.path.join(profile_dir, INFO_FILE)}: 'exported' is not a map of file names")
    paths = {kind: os.path.join(profile_dir, relative) for kind, relative in exported.items()}
    missing = sorted(exported[kind] for kind, path in paths.items() if not os.path.exists(path))
    if missing:
        raise ProfileDataError(
            f"the export of {profile_dir} is incomplete: {', '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} missing; redo it with `npu-prof export {profile_dir}`"
        )
    return paths


def write_info(profile_dir, info):
    """Writes info.json atomically."""
    path = os.path.join(profile_dir, INFO_FILE)
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(info, f, indent=1, sort_keys=True)
    os.replace(path + ".tmp", path)


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
