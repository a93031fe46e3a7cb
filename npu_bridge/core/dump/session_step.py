"""How a bridged session dumps: its setup step (order 400) and its run hook.

Setup, for a session with enable_dump, enable_dump_debug or enable_exception_dump=1:
  * the session's pass plan gets what the NpuOptimizer passes (optimizers/passes/dump_pass.cc,
    overflow_check_pass.cc, exception_capture_pass.cc) need: the dump root {dump_path}/{time}/{device id}
    (``time`` is this process's first dump, YYYYmmddHHMMSS; the device id is the world's, so every rank writes
    its own directory), what to dump (dump_mode, dump_data), the parsed dump_step ranges and dump_layer names,
    the simulated Ascend backend's fp16 rule, whether golden .npy files are written (NPU_BRIDGE_DUMP_GOLDEN,
    default 1) and the exception dump directory;
  * TensorFlow's remapper and arithmetic optimizer, which fuse ops or replace them by ops of other names, are
    turned off for the session, so every op of the script is dumped and checked under its own name (Ascend
    scripts turn the remapper off anyway);
  * a ``DumpRunHook`` is attached.

The hook costs one call into the library per run. When the writer reports overflows it warns once, notes
where each overflowing op was created (op_sources.json) and rewrites {root}/overflow_report.txt from the
writer's overflow events (at most every few seconds, and when the session closes and the process exits). When a run
fails in a session with
enable_exception_dump=1, it writes the failed op's inputs and says where in the error.

Files go only where the user pointed: a dump_path (or exception dump base) every user can write without the
sticky bit is refused when the session is created; the {time} directory is made here, and when someone else
holds that name a new one of ours ({time}.1, ...) is used instead, with a warning. The dump writer (and this
module, for the reports) creates every directory below dump_path and below the exception dump base itself, or
checks that an existing one is a real directory of this user, and then holds it open and writes relative to it,
so a directory swapped for a symlink later sends nothing elsewhere; a directory another user made, or a symlink,
is refused, and what would have gone there is lost and reported like a full disk's files. Files are created
under unpredictable names without following symlinks and renamed into place, owner-only unless
NPU_BRIDGE_DATA_MODE widens them.

A file the disk refuses costs that file only: training goes on, the first failure is logged at once and later
ones at most once a minute with their count, and when a session closes (and when the process exits) each dump
root's {root}/dump_status.json says whether its dump is complete and which steps lack files, and an error line
says so. The overflow warning and report come from the writer's events, which do not depend on the disk.

The warning names the first overflowing op in execution order (the records' timestamps), as the report does.
The writer finishes records in any order (a large one takes longer), so before a dump root's first warning the
hook waits until every record queued so far is written and takes the earliest.
"""

import errno
import itertools
import json
import os
import re
import secrets
import stat
import threading
import time
import weakref

from tensorflow.core.protobuf import rewriter_config_pb2

from npu_bridge.core.dump import dump_status, dump_writer, overflow_records
from npu_bridge.core.options import checks
from npu_bridge.core.runtime import close_callbacks, log, safe_paths
from npu_bridge.core.runtime.errors import NpuOptionError, UnsafePathError, shortened_text
from npu_bridge.core.session.setup_steps import RunHook, setup_step

GOLDEN_VARIABLE = "NPU_BRIDGE_DUMP_GOLDEN"
EXCEPTION_DIR_VARIABLES = ("NPU_COLLECT_PATH", "ASCEND_WORK_PATH")  # the first one set wins
_EXCEPTION_LAYOUT = ("extra-info", "data-dump")  # {base}/extra-info/data-dump/{device id}
_PATH_MAX = 4096  # bytes of a path, with its terminating NUL (Linux)
_NAME_MAX = 255  # bytes of one name in a path
_NUMBERED_TIME_NAMES = 9  # {time}.1 ... {time}.9 when someone else holds {time}
_RANDOM_TIME_NAMES = 16
REPORT_INTERVAL_SECONDS = 5.0
ERROR_LOG_INTERVAL_SECONDS = 60.0
_FAILED_NODE = re.compile(r"\{\{node ([^}]+)\}\}")
_LIBRARY_PATHS = tuple(os.sep + part + os.sep for part in ("tensorflow", "tf_keras", "keras", "npu_bridge"))

_lock = threading.RLock()
_session_ids = itertools.count(1)
_state = {
    "time": None,
    "exit_registered": False,
    "next_event": 0,
    "seen_changes": 0,
    "errors_seen": 0,
    "errors_logged_at": 0.0,
}
_reports = {}  # dump root -> _Report
_time_dirs = {}  # (dump_path, process_time()) -> the name of the {time} directory made there
_graphs = weakref.WeakSet()  # graphs of hooked sessions, to find where overflowing ops were created


@setup_step(400, "dump")
def plan_dump(plan):
    """Prepares a session that dumps, detects overflows or captures failing ops."""
    options = plan.options
    dumping, debugging = options.get("enable_dump"), options.get("enable_dump_debug")
    capturing = options.get("enable_exception_dump") == 1
    if not (dumping or debugging or capturing):
        return
    pass_plan = plan.pass_plan
    # The environment is checked before anything is recorded or written for the session.
    capture_dir = exception_dir(plan.world.device_id) if capturing else None
    directory_mode = safe_paths.directory_mode(dump_writer.configure_from_environment())
    session_id = next(_session_ids)
    if dumping or debugging:
        base = options.get("dump_path")
        _refuse_shared_base("dump_path", base)
        root = os.path.join(base, time_directory(base, directory_mode), str(plan.world.device_id))
        golden = golden_files_wanted()
        pass_plan.dump_root = root
        pass_plan.dump_base = base
        pass_plan.overflow_check = bool(debugging)
        pass_plan.overflow_fp16_saturation = bool(debugging) and plan.backend == "ascend"
        _keep_op_names(plan.config.graph_options.rewrite_options)
        with _lock:
            report = _reports.setdefault(root, _Report(root, base))
            report.directory_mode = directory_mode
            report.sessions += 1
            report.write_status("running", dump_writer.status())
    if dumping:
        pass_plan.dump_enabled = True
        pass_plan.dump_inputs = options.get("dump_mode") != "output"
        pass_plan.dump_outputs = options.get("dump_mode") != "input"
        pass_plan.dump_stats = options.get("dump_data") == "stats"
        pass_plan.dump_golden = golden and not pass_plan.dump_stats
        step = options.get("dump_step")
        pass_plan.dump_steps = checks.dump_step_ranges(step) if step is not None else ()
        pass_plan.dump_layers = tuple((options.get("dump_layer") or "").split())
    if capturing:
        pass_plan.exception_dump = True
        pass_plan.exception_dir = capture_dir
        pass_plan.exception_base = exception_base(capture_dir)
        pass_plan.session_id = session_id
    _register_exit()
    plan.run_hooks.append(DumpRunHook(session_id, capturing, pass_plan.dump_layers, pass_plan.dump_root or None))


def _keep_op_names(rewrite_options):
    """Turns off the grappler passes that fuse ops or replace them by ops of other names."""
    off = rewriter_config_pb2.RewriterConfig.OFF
    changed = [name for name in ("remapping", "arithmetic_optimization") if getattr(rewrite_options, name) != off]
    for name in changed:
        setattr(rewrite_options, name, off)
    if changed:
        log.info_once(
            "dump-keeps-op-names",
            "dump: TensorFlow's %s are off in sessions that dump or detect "
            "overflows, so every op is dumped and checked under its own name",
            " and ".join(changed),
        )


def golden_files_wanted(environ=None):
    """NPU_BRIDGE_DUMP_GOLDEN: 1 (default) writes golden .npy files next to the dump files, 0 does not.

    Raises:
      NpuOptionError: the variable holds something else.
    """
    text = (os.environ if environ is None else environ).get(GOLDEN_VARIABLE, "").strip()
    if text not in ("", "0", "1"):
        raise NpuOptionError(
            GOLDEN_VARIABLE, text, "0 / 1", "the environment variable chooses whether golden .npy files are written"
        )
    return text != "0"


def process_time():
    """The {time} directory of this process's dumps: when the first dumping session was created."""
    with _lock:
        if _state["time"] is None:
            _state["time"] = time.strftime("%Y%m%d%H%M%S")
        return _state["time"]


def _refuse_shared_base(key, base):
    """Raises NpuOptionError when other users could rename what the session creates in ``base``."""
    problem = safe_paths.shared_base_problem(base)
    if problem is not None:
        raise NpuOptionError(
            key, base, "a directory only you can write, or a shared one with the sticky bit (like /tmp)", problem
        )


def time_directory(base, mode=0o700):
    """The {time} directory of this process's dumps in ``base``, made now.

    It is ``process_time()``, or, when that name is taken by something that is not a directory of this user
    (another user pre-created it, it is a symlink or a file), a new directory of ours named ``{time}.1`` ...
    ``{time}.9``, then ``{time}.{random}``; a warning says why.

    Args:
      base: dump_path (created if missing, as given).
      mode: the mode of the new directory.
    Returns:
      The directory's name (``npu-dump`` reads any name at this level).
    """
    stamp = process_time()
    with _lock:
        if (base, stamp) in _time_dirs:
            return _time_dirs[(base, stamp)]
        refused = []
        for name in _time_names(stamp):
            path = os.path.join(base, name)
            try:
                safe_paths.make_dirs(base, name, mode=mode)
            except UnsafePathError as e:
                refused.append(e.strerror)
                continue
            except OSError:
                pass  # the writer says what is wrong when it writes
            break
        else:
            raise UnsafePathError(errno.EEXIST, f"dump: no new directory could be made in {base}: {refused[-1]}")
        if refused:
            log.logger.warning(
                "dump: %s%s; this process dumps into %s instead",
                refused[0],
                f" (and {len(refused) - 1} more names were taken)" if len(refused) > 1 else "",
                path,
            )
        _time_dirs[(base, stamp)] = name
        return name


def _time_names(stamp):
    yield stamp
    for suffix in range(1, _NUMBERED_TIME_NAMES + 1):
        yield f"{stamp}.{suffix}"
    for _ in range(_RANDOM_TIME_NAMES):  # the numbered names are predictable, and may all be taken
        yield f"{stamp}.{secrets.token_hex(4)}"


def exception_dir(device_id, environ=None):
    """Where exception dumps go: {NPU_COLLECT_PATH or ASCEND_WORK_PATH or the current directory}/
    extra-info/data-dump/{device id}, following CANN's default layout (an empty variable counts as unset).

    The directory is created only when an op fails, so it is checked here, when the session is created: it must
    exist or be creatable (what exists of it is a writable directory, no part is a file, FIFO, device or symlink
    loop), its path must fit the system's limits (PATH_MAX, NAME_MAX) and be UTF-8 (the dump writer's paths are).

    Raises:
      NpuOptionError: the directory cannot be used; the error names the variable that chose it.
    """
    environ = os.environ if environ is None else environ
    name = next((variable for variable in EXCEPTION_DIR_VARIABLES if environ.get(variable)), None)
    if name is None:
        try:
            base = os.getcwd()
        except OSError as e:  # the current directory was removed
            raise _unset_base_error(f"the current directory cannot be used: {e.strerror}") from None
    else:
        base = environ[name]
    directory = os.path.join(os.path.abspath(base), *_EXCEPTION_LAYOUT, str(device_id))
    problem = _directory_problem(directory) or safe_paths.shared_base_problem(base)
    if problem is None:
        return directory
    if name is None:
        raise _unset_base_error(problem)
    raise NpuOptionError(
        name,
        base,
        "a writable directory, or a path where one can be created, in UTF-8 (exception dumps go to "
        "{path}/extra-info/data-dump/{device id})",
        f"the environment variable sets where exception dumps go (enable_exception_dump=1), but {problem}",
    )


def exception_base(directory):
    """The base an ``exception_dir`` result lies in (NPU_COLLECT_PATH, ASCEND_WORK_PATH or the working
    directory, made absolute): it is taken as given, the directories below it are the writer's or refused."""
    for _ in range(len(_EXCEPTION_LAYOUT) + 1):
        directory = os.path.dirname(directory)
    return directory


def _unset_base_error(problem):
    return NpuOptionError(
        "enable_exception_dump",
        1,
        "set NPU_COLLECT_PATH or ASCEND_WORK_PATH to a writable directory, or run in one",
        f"exception dumps go under the current directory when NPU_COLLECT_PATH and ASCEND_WORK_PATH are unset, "
        f"but {problem}",
    )


def _directory_problem(directory):
    """Why exception dumps cannot be written to ``directory`` (absolute), or None when they can."""
    try:
        encoded = directory.encode("utf-8")
    except UnicodeEncodeError:
        return "the path is not valid UTF-8"
    if "\x00" in directory:
        return "the path holds a NUL character"
    if len(encoded) >= _PATH_MAX:
        return (
            f"the dump directory {shortened_text(directory)} would be {len(encoded)} bytes long, too long for "
            f"the system (at most {_PATH_MAX - 1})"
        )
    longest = max(directory.split(os.sep), key=lambda part: len(part.encode("utf-8")))
    if len(longest.encode("utf-8")) > _NAME_MAX:
        return f"the name {shortened_text(longest)} in the path is longer than {_NAME_MAX} bytes"
    path = directory
    while True:
        try:
            mode = os.stat(path).st_mode
        except (FileNotFoundError, NotADirectoryError):  # created when needed; a file in the way is found above
            path = os.path.dirname(path)
            continue
        except OSError as e:  # a symlink loop, no permission to look
            return f"{shortened_text(path)} cannot be used: {e.strerror}"
        if not stat.S_ISDIR(mode):
            return f"{shortened_text(path)} is not a directory ({_kind(mode)})"
        if not os.access(path, os.W_OK | os.X_OK):
            what = "the dump directory" if path == directory else "the directory to create it in"
            return f"{what} {shortened_text(path)} is not writable"
        return None


def _kind(mode):
    for test, text in ((stat.S_ISREG, "a file"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return text
    return "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a special file"


class DumpRunHook(RunHook):
    """Watches the runs of one dumping session."""

    def __init__(self, session_id, capturing, layer=(), root=None):
        self._session_id, self._capturing = session_id, capturing
        self._unchecked_layer = layer
        self._root = root

    def after_run(self, context, results):
        _graphs.add(context.session.graph)
        if self._unchecked_layer:
            _warn_unknown_layer_ops(context.session.graph, self._unchecked_layer)
            self._unchecked_layer = ()
        if dump_writer.changes() != _state["seen_changes"]:
            poll()

    def run_failed(self, context, error):
        """Writes the failed op's inputs (enable_exception_dump=1) and adds where to the error."""
        _graphs.add(context.session.graph)
        poll()
        if not self._capturing:
            return None
        match = _FAILED_NODE.search(str(error))
        if match is None:
            return None
        node = match.group(1)
        result = dump_writer.exception_dump(f"{self._session_id}/{node}")
        if "path" in result:
            note = (
                f"npu_bridge exception dump: the {result['inputs']} inputs of {result['op_type']} "
                f"{result['op_name']} (the op that failed) were written to {result['path']}; read them with "
                f"`npu-dump info {result['path']}`"
            )
        else:
            note = f"npu_bridge exception dump: the inputs of {node} were not captured ({result['error']})"
        log.logger.warning("%s", note)
        return _with_note(error, note)

    def end(self, session):
        with _lock:
            if self._root in _reports:
                _reports[self._root].sessions -= 1
        _finish()


def _warn_unknown_layer_ops(graph, names):
    existing = {op.name for op in graph.get_operations()}
    unknown = [name for name in names if name not in existing]
    if unknown:
        log.warn_once(
            ("dump-layer-unknown", tuple(unknown)),
            "dump_layer names ops this session's graph does not have, so they are not dumped: %s",
            ", ".join(unknown),
        )


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
            report.write_if_due(final)


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


def _finish(exiting=False):
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


class _Report:
    """The overflow report of one dump root, kept from the writer's overflow events (no directory scans)."""

    def __init__(self, root, base):
        self.root = root
        self.base = base  # dump_path: the directories from it to the root are ours or refused
        self.directory_mode = 0o700
        self.sources = {}
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

    def losses(self, status):
        """({step directory: files lost}, [appended files missing rows]) of this root, from the writer's status."""
        prefix = self.root + os.sep
        lost = {d: n for d, n in status["lost_dirs"].items() if d.startswith(prefix)}
        return lost, [p for p in status["unwritten_files"] if p.startswith(prefix)]

    def write_status(self, state, status):
        """Writes {root}/dump_status.json from the writer's ``status`` (a failure is logged once)."""
        lost, unwritten = self.losses(status)
        try:
            dump_status.write(
                self.root_fd(), self.root, state, lost, sum(lost.values()), unwritten, status["errors"][:5]
            )
        except OSError as e:
            log.warn_once(
                ("dump-status", self.root),
                "dump: %s could not be written (%s); readers will take the dump as unfinished",
                os.path.join(self.root, dump_status.STATUS_FILE),
                e.strerror or e,
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
        if not self.entries:
            log.logger.warning(
                "overflow detected: [%s] %s at step %d overflowed first; the report is %s",
                event["op_type"],
                event["op_name"],
                event["step"],
                os.path.join(self.root, overflow_records.REPORT_FILE),
            )
        if event["op_name"] not in self.sources:
            self.sources[event["op_name"]] = creation_site(event["op_name"])
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

    def write_if_due(self, final):
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
            safe_paths.write_file_at(
                root_fd, overflow_records.SOURCES_FILE, json.dumps(sources, indent=1, sort_keys=True)
            )
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


def creation_site(op_name):
    """Where ``op_name`` was created in the user's code ("file:line in function"), or None when unknown."""
    for graph in list(_graphs):
        try:
            op = graph.get_operation_by_name(op_name)
        except (KeyError, ValueError):
            continue
        for frame in reversed(op.traceback):
            if not any(part in frame.filename for part in _LIBRARY_PATHS) and not frame.filename.startswith("<"):
                return f"{frame.filename}:{frame.lineno} in {frame.name}"
    return None


def _with_note(error, note):
    """Returns ``error`` with ``note`` appended to its message (an OpError of the same class), or None after
    attaching the note to ``error`` itself when it cannot be rebuilt."""
    import tensorflow as tf

    if isinstance(error, tf.errors.OpError):
        try:
            return type(error)(error.node_def, error.op, f"{error.message}\n{note}")
        except TypeError:
            pass
    error.add_note(note)
    return None


def _register_exit():
    with _lock:
        if not _state["exit_registered"]:
            _state["exit_registered"] = True
            close_callbacks.register(_at_exit)


def _at_exit():
    _finish(exiting=True)
