"""The reports of one dump root: {root}/dump_status.json (is the dump complete, which steps lack files), the
overflow report {root}/overflow_report.txt, kept from the dump writer's overflow events, {root}/op_sources.json:
where every op the dump holds files for (or that overflowed) was created in the user's code, {root}/op_graph.json:
what those ops are (type, inputs, attributes; ``op_graph``), and {root}/run_config.json: the run's options,
environment, versions and seeds (``run_config``).

The directories from dump_path to the root are this module's (or the writer's) or refused: the root is created
below dump_path without following symlinks, or checked to be a real directory of this user, then held open and
written relative to, so a directory swapped for a symlink later sends nothing elsewhere. Files are created
under unpredictable names without following symlinks and renamed into place, owner-only unless
NPU_BRIDGE_DATA_MODE widens them.
"""

import json
import os
import time

from npu_bridge.core.dump import (
    dump_status,
    dump_writer,
    dumped_ops,
    op_graph,
    op_sources,
    overflow_records,
    run_config,
)
from npu_bridge.core.runtime import inert_text, log, safe_paths

REPORT_INTERVAL_SECONDS = 5.0  # the overflow report is rewritten at most this often while sessions run
DISCOVERY_MISSES = 2  # after a graph is noted, runs scan for its dumped ops until this many scans find none ...
DISCOVERY_SCANS = 20  # ... while the writer is idle, and at most this many times
STEPS_NAMED = 5  # lost step directories an incomplete-dump message names; the rest are counted


def _step_order(directory):
    # Step directories end in the step number ({model}/{model id}/{step}): 5 before 10, then the other names.
    step = os.path.basename(directory)
    return (0, int(step), directory) if step.isdigit() else (1, 0, directory)


def lost_steps_summary(directories, named=STEPS_NAMED):
    """Names the step directories that lost files, for a message.

    Args:
      directories: step directories relative to the dump root ({model}/{model id}/{step}), in any order.
      named: how many to name; the rest are counted.
    Returns:
      In step order, e.g. "the first lost step is 5: m/1/5, m/1/10, m/1/11, m/1/100, m/1/101 and 95 more"
      (without the first step when no directory is a step number).
    """
    ordered = sorted(directories, key=_step_order)
    text = ", ".join(ordered[:named])
    if len(ordered) > named:
        text += f" and {len(ordered) - named} more"
    first = os.path.basename(ordered[0]) if ordered else ""
    return f"the first lost step is {first}: {text}" if first.isdigit() else text


class RootReport:
    """The reports of one dump root; the overflow report is kept from the writer's overflow events (no directory
    scans)."""

    def __init__(self, root, base):
        self.root = root
        self.base = base  # dump_path: the directories from it to the root are ours or refused
        self.directory_mode = 0o700
        self.sources = {}  # op name -> creation site (None: unknown), each looked up once
        self.ops = {}  # op name -> its op_graph.json entry
        self.dumped = dumped_ops.DumpedOps()
        self.scanned_at = None
        self.misses = 0  # scans in a row that found no new op with the writer idle, since a graph was noted
        self.discovery_scans = 0  # scans since a graph was noted
        self.unresolved = set()  # file op names no noted graph had (looked up again when a graph is noted)
        self.unresolved_at = 0  # op_sources.graphs_noted() when they were looked up
        self.sources_pending = False  # op_sources.json lacks sites (a write failed): written again at the next scan
        self.entries = []
        self.pending = False
        self.written_at = None
        self.write_failure = None
        self.lost_logged = (0, 0)
        self.sessions = 0  # open sessions dumping into the root
        self._dir_fd = None  # the root, held open once made: its files follow it wherever it is moved

    def root_fd(self):
        """The root, opened below ``base`` without following symlinks at its first use (again if removed).

        Raises:
          OSError: it cannot be made or opened (UnsafePathError: it is a symlink or another user's).
        """
        if self._dir_fd is not None and os.fstat(self._dir_fd).st_nlink == 0:  # removed: make it again
            os.close(self._dir_fd)
            self._dir_fd = None
        if self._dir_fd is None:
            self._dir_fd = safe_paths.open_dirs(
                self.base, os.path.relpath(self.root, self.base), mode=self.directory_mode
            )
        return self._dir_fd

    def data_mode(self):
        """The mode of the root's files that may hold data (op_graph.json, run_config.json): the dump files'."""
        return self.directory_mode & 0o666

    def losses(self, status):
        """({step directory: files lost}, [appended files missing rows]) of this root, from the writer's status."""
        prefix = self.root + os.sep
        lost = {d: n for d, n in status["lost_dirs"].items() if d.startswith(prefix)}
        return lost, [p for p in status["unwritten_files"] if p.startswith(prefix)]

    def write_status(self, state, status):
        """Writes {root}/dump_status.json from the writer's ``status`` (a failure is logged once)."""
        lost, unwritten = self.losses(status)
        self._write_or_warn(
            dump_status.STATUS_FILE,
            "readers will take the dump as unfinished",
            lambda: dump_status.write(
                self.root_fd(), self.root, state, lost, sum(lost.values()), unwritten, status["errors"][:5]
            ),
        )

    def _write_or_warn(self, file_name, consequence, write):
        """Calls ``write()``; an ``OSError`` is logged once per root and file, with what it costs the user."""
        try:
            write()
        except OSError as e:
            log.warn_once(
                (file_name, self.root),
                "dump: %s could not be written (%s); %s",
                os.path.join(self.root, file_name),
                e.strerror or e,
                consequence,
            )

    def finish(self, status, exiting):
        """Records whether the dump is complete, and says so (once per change) when it is not."""
        lost, unwritten = self.losses(status)
        incomplete = bool(lost or unwritten or status["lost_dirs_dropped"])
        final = "incomplete" if incomplete else "complete"
        self.write_status(final if exiting or self.sessions <= 0 else "running", status)
        files_lost = sum(lost.values())
        if not incomplete or (files_lost, len(unwritten)) == self.lost_logged:
            return
        self.lost_logged = (files_lost, len(unwritten))
        steps = [os.path.relpath(d, self.root) for d in lost]
        log.logger.error(
            "dump: the dump in %s is incomplete: %d files could not be written (in %d step directories%s)%s; "
            "%s lists them and `npu-dump info` flags those steps. The latest error: %s",
            self.root,
            files_lost,
            len(steps),
            f", {lost_steps_summary(steps)}" if steps else "",
            f", and {len(unwritten)} statistic.csv / mapping.csv files are missing rows" if unwritten else "",
            dump_status.STATUS_FILE,
            status["last_error"],
        )

    def add(self, event):
        """Takes in one overflow event of the writer in this root (the first one is warned about)."""
        if event["op_name"] not in self.sources:
            self.sources[event["op_name"]] = op_sources.creation_site(event["op_name"])
        if not self.entries:
            site = self.sources[event["op_name"]]
            log.logger.warning(
                "overflow detected: [%s] %s at step %d overflowed first%s; the report is %s",
                event["op_type"],
                event["op_name"],
                event["step"],
                f" (created at {inert_text.value(site)})" if site else "",
                os.path.join(self.root, overflow_records.REPORT_FILE),
            )
        model_dir = os.path.dirname(event["dir"])
        self.entries.append(
            overflow_records.OverflowEntry(
                event["step"],
                f"{os.path.basename(os.path.dirname(model_dir))}/{os.path.basename(model_dir)}",
                event["timestamp"],
                event["op_type"],
                event["op_name"],
                event["task_id"],
                0,
                event["status"],
                event["opdebug"],
                event["dump"],
                self.sources[event["op_name"]],
            )
        )
        self.pending = True

    def note_dumped_ops(self, final):
        """Adds the ops with new dump files to op_sources.json and op_graph.json; each op's creation site is looked
        up once.

        The step directories are scanned whenever ``final``; at every call after a graph was noted until
        ``DISCOVERY_MISSES`` scans in a row find no new op while the writer has nothing queued (it is asynchronous:
        the files of a graph's first dumped step appear during the next runs), at most ``DISCOVERY_SCANS`` times, so
        that the side files follow a graph's dump files within a few runs and a process killed later -- SIGKILL,
        out of memory, os._exit -- leaves them behind; otherwise at most every ``REPORT_INTERVAL_SECONDS``.
        """
        now = time.monotonic()
        if op_sources.graphs_noted() != self.unresolved_at:
            self.misses, self.discovery_scans = 0, 0
        quiet = self.misses >= DISCOVERY_MISSES or self.discovery_scans >= DISCOVERY_SCANS
        if not final and quiet and self.scanned_at is not None and now - self.scanned_at < REPORT_INTERVAL_SECONDS:
            return
        self.scanned_at = now
        known = len(self.sources)
        try:
            file_names = self.dumped.scan(self.root_fd())
        except OSError:
            return  # the dump itself reports a root it cannot write
        if self.unresolved and op_sources.graphs_noted() != self.unresolved_at:  # their graph may be noted now
            file_names = sorted(self.unresolved.union(file_names))
            self.unresolved = set()
        self.unresolved_at = op_sources.graphs_noted()
        for file_name in file_names:
            found = op_sources.site_of_file_name(file_name)
            if found is None:
                self.unresolved.add(file_name)  # at most dumped_ops.MAX_NAMES
            elif found[0] not in self.sources or found[0] not in self.ops:
                self.sources.setdefault(found[0], found[1])
                operation = op_sources.operation(found[0])
                if operation is not None:
                    self.ops[found[0]] = op_graph.record(operation)
                self.sources_pending = self.sources_pending or found[1] is not None or operation is not None
        self.discovery_scans += 1
        if len(self.sources) > known:
            self.misses = 0
        elif not dump_writer.status().get("queued_bytes"):
            self.misses += 1
        if self.dumped.truncated:
            log.warn_once(
                ("dump-sources-bounded", self.root),
                "dump: %s lists the creation sites of the first %d ops in the first %d step directories only",
                os.path.join(self.root, overflow_records.SOURCES_FILE),
                dumped_ops.MAX_NAMES,
                dumped_ops.MAX_STEP_DIRS,
            )
        if self.sources_pending:
            try:
                self._write_sources(self.root_fd())
            except OSError as e:
                log.warn_once(
                    ("dump-sources", self.root),
                    "dump: %s could not be written (%s); it is written again at the next scan, until then "
                    "npu-dump shows no creation sites for some ops of this dump",
                    os.path.join(self.root, overflow_records.SOURCES_FILE),
                    e.strerror or e,
                )

    def _write_sources(self, root_fd):
        sources = {name: site for name, site in self.sources.items() if site}
        safe_paths.write_file_at(root_fd, overflow_records.SOURCES_FILE, json.dumps(sources, indent=1, sort_keys=True))
        if self.ops:
            text = json.dumps(self.ops, indent=1, sort_keys=True)
            safe_paths.write_file_at(root_fd, op_graph.GRAPH_FILE, text, mode=self.data_mode())
        self.sources_pending = False

    def write_run_config(self, config):
        """Writes {root}/run_config.json (``run_config.collect``); a failure is logged once."""
        text = json.dumps(config, indent=1, sort_keys=True)
        self._write_or_warn(
            run_config.CONFIG_FILE,
            "npu-dump compare cannot check this run's configuration",
            lambda: safe_paths.write_file_at(self.root_fd(), run_config.CONFIG_FILE, text, mode=self.data_mode()),
        )

    def write_if_due(self, final):
        """Rewrites the overflow report when it has news and is due (``final``: now, whenever it has news)."""
        due = self.written_at is None or time.monotonic() - self.written_at >= REPORT_INTERVAL_SECONDS
        if not self.pending or not (final or due):
            return
        sources = {name: site for name, site in self.sources.items() if site}
        if dump_writer.status()["overflow_events_dropped"]:  # the writer stopped listing them: read the files
            entries = overflow_records.find(self.root, sources)
        else:
            self.entries.sort(key=lambda entry: entry.timestamp)
            entries = self.entries
        self.written_at = time.monotonic()
        try:
            root_fd = self.root_fd()
            self._write_sources(root_fd)
            safe_paths.write_file_at(root_fd, overflow_records.REPORT_FILE, overflow_records.render(entries, self.root))
        except OSError as e:
            if self.write_failure is None:
                log.logger.error(
                    "overflow: the report in %s could not be written (%s); its %d overflow records are kept and "
                    "the report is written again later",
                    self.root,
                    e.strerror or e,
                    len(entries),
                )
            self.write_failure = e
            return
        self.write_failure = None
        self.pending = False
