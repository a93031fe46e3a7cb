"""Follows the dump writer for this process's dumping sessions: takes in its overflow events and failed writes,
keeps each dump root's reports (``dump_reports.RootReport``) up to date and finishes them when sessions close and
when the process exits.

A file the disk refuses costs that file only: training goes on, the first failure is logged at once and later
ones at most once a minute with their count, and when a session closes (and when the process exits) each dump
root's {root}/dump_status.json says whether its dump is complete and which steps lack files, and an error line
says so. The overflow warning and report come from the writer's events, which do not depend on the disk.

Sessions drive all this from their run hooks. TF2 function graphs (``npu_device``) have none: for them a
background thread (``watch_function_graphs``) polls once a second, so their op_sources.json and op_graph.json follow
their dump files while the process runs, as a session's do, instead of only when it exits.

The warning names the first overflowing op in execution order (the records' timestamps), as the report does.
The writer finishes records in any order (a large one takes longer), so before a dump root's first warning
``poll`` waits until every record queued so far is written and takes the earliest.
"""

import os
import threading
import time

from npu_bridge.core.dump import dump_reports, dump_writer
from npu_bridge.core.runtime import close_callbacks, log

ERROR_LOG_INTERVAL_SECONDS = 60.0
WATCH_INTERVAL_SECONDS = 1.0  # how often the thread of ``watch_function_graphs`` polls

_lock = threading.RLock()
_state = {
    "exit_registered": False,
    "next_event": 0,
    "seen_changes": 0,
    "errors_seen": 0,
    "errors_logged_at": 0.0,
    "watcher": None,  # (thread, stop event) of watch_function_graphs
}
_reports = {}  # dump root -> dump_reports.RootReport


def open_root(root, base, directory_mode):
    """Counts one more open session dumping into ``root`` (below dump_path ``base``) and records that its dump
    is running."""
    with _lock:
        report = _reports.setdefault(root, dump_reports.RootReport(root, base))
        report.directory_mode = directory_mode
        report.sessions += 1
        report.write_status("running", dump_writer.status())


def session_closed(root):
    """A dumping session (into ``root``, or None when it only captures exceptions) closed: finishes the reports."""
    with _lock:
        if root in _reports:
            _reports[root].sessions -= 1
    finish()


def has_news():
    """Whether the writer has changed anything since the last ``poll``."""
    return dump_writer.changes() != _state["seen_changes"]


def poll(final=False):
    """Takes in the writer's new overflow records and errors; rewrites overflow reports that are due.

    Args:
      final: rewrite every report with news now (a session closes, the process exits).
    """
    with _lock:
        changes = dump_writer.changes()
        if changes != _state["seen_changes"] and any(not report.entries for report in _reports.values()):
            # A root may be about to get its first warning: it must see every record queued so far, not only
            # those written first, to name the op that overflowed first.
            dump_writer.flush()
            changes = dump_writer.changes()
        _state["seen_changes"] = changes
        events = sorted(dump_writer.overflow_events(_state["next_event"]), key=lambda event: event["timestamp"])
        _state["next_event"] += len(events)
        _log_new_errors(dump_writer.status())
        for event in events:
            report = next((r for root, r in _reports.items() if event["dir"].startswith(root + os.sep)), None)
            if report is not None:
                report.add(event)
        for report in _reports.values():
            report.note_dumped_ops(final)
            report.write_if_due(final)


def note_dumped_ops(root):
    """Adds the ops with new dump files in ``root`` to its op_sources.json when a scan is due (cheap otherwise)."""
    with _lock:
        report = _reports.get(root)
        if report is not None:
            report.note_dumped_ops(final=False)


def record_run_config(root, config):
    """Writes ``config`` (``run_config.collect``) as {root}/run_config.json of a root opened with ``open_root``."""
    with _lock:
        report = _reports.get(root)
        if report is not None:
            report.write_run_config(config)


def _log_new_errors(status):
    """Logs the first failed write (since the last session ended) at once, later ones at most once a minute
    with their count."""
    new = status["error_count"] - _state["errors_seen"]
    if new <= 0:
        return
    now = time.monotonic()
    if not _state["errors_logged_at"]:
        log.logger.error(
            "dump: a dump file could not be written: %s; training goes on, and what is lost is counted and "
            "reported when the session ends",
            _oldest_new_error(status),
        )
    elif now - _state["errors_logged_at"] >= ERROR_LOG_INTERVAL_SECONDS:
        log.logger.error(
            "dump: %d more dump writes failed (%d in all, %d files lost so far); the latest: %s",
            new,
            status["error_count"],
            status["files_lost"],
            status["last_error"],
        )
    else:
        return
    _state["errors_seen"] = status["error_count"]
    _state["errors_logged_at"] = now


def _oldest_new_error(status):
    """The first error not logged yet (the writer keeps the first 20 messages, and the latest)."""
    seen = _state["errors_seen"]
    return status["errors"][seen] if seen < len(status["errors"]) else status["last_error"]


def finish(exiting=False):
    """Waits for the writer, rewrites the reports, and records in each root whether its dump is complete.

    Args:
      exiting: the process exits (roots with open sessions are final too).
    """
    dump_writer.flush()
    poll(final=True)
    with _lock:
        status = dump_writer.status()
        for report in _reports.values():
            report.finish(status, exiting)
        _state["errors_logged_at"] = 0.0


def finish_at_exit():
    """Makes the process's exit wait for the writer and finish every report (registered once)."""
    with _lock:
        if not _state["exit_registered"]:
            _state["exit_registered"] = True
            close_callbacks.register(_at_exit)


def watch_function_graphs():
    """Starts (once) the thread that polls every ``WATCH_INTERVAL_SECONDS`` for dumps of TF2 function graphs, which
    no run hook follows; it stops when the process finishes its reports (``finish_at_exit``)."""
    with _lock:
        if _state["watcher"] is not None:
            return
        stop = threading.Event()
        thread = threading.Thread(target=_watch, args=(stop,), name="npu-dump-watch", daemon=True)
        _state["watcher"] = (thread, stop)
    thread.start()


def _watch(stop):
    while not stop.wait(WATCH_INTERVAL_SECONDS):
        try:
            poll()
        except Exception:  # a report is a hint: the thread goes on, the next poll tries again
            log.logger.debug("dump: polling the writer failed", exc_info=True)


def _at_exit():
    watcher = _state["watcher"]
    if watcher is not None:
        watcher[1].set()
        watcher[0].join(timeout=10)
    finish(exiting=True)
