"""The profile being recorded in this process: at most one at a time, as Ascend profiles a device.

Its directories are created by this process (``safe_paths``): the ``PROF_*`` directory is new, never one that
exists, and its files are created without following symlinks.

A profile starts at the first traced run -- of a session whose options (or ``PROFILING_MODE``) turn profiling
on, or of any bridged session while a ``Profiler`` scope is active -- and creates its directory then
(``layout``). It ends, and is exported, summarized and reported, when
  * the ``Profiler`` scope ends;
  * a profiled session is closed after the NPU system was shut down (``shutdown_system``,
    ``npu_resource_shutdown``): profiling is an init option, it lasts as long as the system;
  * the process exits (``npu_close``).
"""

import dataclasses
import datetime
import logging
import os
import socket
import threading
import time

from npu_bridge.core.profiling import export, layout, raw_trace, report, roofline, summary
from npu_bridge.core.runtime import close_callbacks, log, safe_paths
from npu_bridge.core.runtime.errors import NpuUsageError

# The summary is what the user asked for by turning profiling on: it is shown at INFO unless the npu_bridge
# logger is set above warnings (ASCEND_GLOBAL_LOG_LEVEL 3 or 4).
_announcer = logging.getLogger("npu_bridge.core.profiling")
_announcer.setLevel(logging.INFO)
_PROGRESS_RUNS = 5000

_lock = threading.Lock()
_active = None
_scoped = None


class Recording:
    """One profile directory being written.

    Args:
      settings: the ``ProfilingSettings``.
      context: dict with rank_id, rank_size, device_id, backend, precision_mode, precision_mode_v2,
        iterations_per_loop, trace_level.
    """

    def __init__(self, settings, context):
        start_ns = time.time_ns()  # before the first traced run starts: the time origin of the timelines
        self.settings = settings
        safe_paths.make_dirs(settings.output, mode=layout.DIRECTORY_MODE)  # the user's directory, as given
        self.directory = _new_directory(settings.output, context["rank_id"])
        raw = layout.raw_path(self.directory, context["device_id"])
        layout.make_dirs(self.directory, os.path.relpath(os.path.dirname(raw), self.directory))
        limit = settings.storage_limit_mb * 1024 * 1024 if settings.storage_limit_mb else None
        self.writer = raw_trace.RawTraceWriter(raw, limit)
        self.info = dict(
            context,
            format=1,
            pid=os.getpid(),
            host=socket.gethostname(),
            status="recording",
            start_time=_now(),
            start_epoch_ns=start_ns,
            settings=dataclasses.asdict(settings),
        )
        if context["backend"] == "ascend":
            self.info["roofline_constants"] = dict(roofline.ASCEND_910)
        layout.write_info(self.directory, self.info)

    def close(self):
        """Closes the raw data and records how much was written."""
        self.writer.close()
        self.info.update(
            status="recorded",
            end_time=_now(),
            runs_recorded=self.writer.runs_written,
            runs_dropped=self.writer.runs_dropped,
        )
        layout.write_info(self.directory, self.info)
        if self.writer.runs_dropped:
            log.logger.warning(
                "profiling: %d runs were not recorded because storage_limit %dMB was reached",
                self.writer.runs_dropped,
                self.settings.storage_limit_mb,
            )


def ensure_started(settings, context):
    """Starts a profile unless one is being recorded; call before a traced run.

    Args:
      settings: ``ProfilingSettings`` of the run.
      context: see ``Recording``.
    """
    global _active
    recording = _active
    if recording is not None and recording.settings is settings:
        return
    with _lock:
        if _active is None:
            _active = Recording(settings, context)
        elif _active.settings != settings:
            log.warn_once(
                (__name__, "settings", settings.source, settings.options_text),
                "profiling: a profile is already being recorded in "
                "%s; runs with other profiling settings (%s) are recorded into it",
                _active.directory,
                settings.options_text or settings.source,
            )


def record(session, run, start_ns, end_ns, step_stats, graph=""):
    """Appends a traced run to the active profile (dropped when none is active); ``graph`` is the run's graph
    signature (``run_signature``)."""
    recording = _active
    if recording is not None:
        recording.writer.write(session, run, start_ns, end_ns, step_stats, graph)


def scoped_settings():
    """The ``ProfilingSettings`` of the active ``Profiler`` scope, or None."""
    return _scoped


def start_scope(settings):
    """Starts a ``Profiler`` scope: every bridged session is traced until ``stop_scope``.

    Raises:
      RuntimeError: a scope is active, or a profile is being recorded (profiling_mode or PROFILING_MODE).
    """
    global _scoped
    with _lock:
        if _scoped is not None:
            raise NpuUsageError("Profiler: a Profiler is already active in this process; stop it first")
        if _active is not None:
            raise NpuUsageError(
                f"Profiler: profiling is already on for this process ({_active.settings.source}) "
                f"and recording into {_active.directory}; a Profiler cannot start a second profile"
            )
        _scoped = settings


def stop_scope():
    """Ends the ``Profiler`` scope and publishes its profile; returns its directory or None (no runs)."""
    global _scoped
    with _lock:
        _scoped = None
    return finish()


def finish():
    """Ends the active profile, exports it, writes the report and logs the summary.

    Returns:
      The profile directory, or None when no profile was being recorded.
    """
    global _active
    with _lock:
        recording, _active = _active, None
    if recording is None:
        return None
    recording.close()
    publish(recording.directory, recording.info.get("runs_recorded", 0))
    return recording.directory


def finish_after_shutdown(system_initialized):
    """Ends an options-started profile once the NPU system is shut down (profiling lasts as long as it)."""
    if _scoped is None and _active is not None and not system_initialized():
        finish()


def publish(directory, runs):
    """Exports a recorded profile, writes report.html and logs the summary; failures are logged, not raised.

    Args:
      directory: the profile directory.
      runs: how many runs it holds (for progress messages).
    """
    try:
        if runs >= _PROGRESS_RUNS:
            _announce("profiling: analysing %d runs in %s ...", runs, directory)
        export.export_profile(directory)
        loaded = summary.load(directory)
        report.write_report([loaded], report.report_path(directory))
        _announce("%s", summary.format_text(loaded))
    except Exception:  # the raw data stays; npu-prof export can retry
        log.logger.exception(
            "profiling: exporting %s failed; the raw data is kept, retry with `npu-prof export %s`",
            directory,
            directory,
        )


def _new_directory(output, rank_id):
    stamp = datetime.datetime.now().strftime("%Y%m%d%H%M%S%f")[:17]
    base = os.path.join(output, f"PROF_{stamp}_rank{rank_id}")
    path, suffix = base, 1
    while True:
        try:
            os.mkdir(path, layout.DIRECTORY_MODE)  # a new directory, never one that exists (or a planted link)
            return path
        except FileExistsError:
            suffix += 1
            path = f"{base}_{suffix}"


def _now():
    return datetime.datetime.now().astimezone().isoformat(timespec="milliseconds")


def _announce(message, *args):
    if log.logger.getEffectiveLevel() <= logging.WARNING:
        _announcer.info(message, *args)


close_callbacks.register(finish)
