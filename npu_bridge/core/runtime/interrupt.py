"""Ctrl-C on ``npu-run``: how the launcher tells its ranks that it is stopping them, and how a rank then ends
with one line instead of tracebacks.

npu-run gives every rank ``NPU_RUN_STOP_FILE``, a path in the launcher's work directory. When the launcher
receives SIGINT (Ctrl-C) or SIGTERM, it first writes that signal's name into the file (``announce``) and then
sends the signal to every rank at once. So a rank knows that the job is being stopped, and why
(``stop_reason``), also where the signal alone does not tell it: in a collective that fails because a peer
rank has already left, and in the collective watchdog, which sees that peer gone while the rank's main
thread still waits in TensorFlow.

In a rank, ``import npu_bridge`` calls ``install`` when the variable is set (which ends the process at once when
npu-run is stopping the job already). From then on:
  * a KeyboardInterrupt that reaches the top level (``sys.excepthook``) prints one line, e.g.
    ``interrupted by Ctrl-C (SIGINT from npu-run) during `sess.run(train_op)` at train.py:42; exiting``, runs
    the atexit functions (``npu_close``, the script's own) and ends the process by SIGINT, as Python does
    (status 130 for a shell; ``exit_interrupted``): no traceback. A script's own ``except
    KeyboardInterrupt:`` works as usual: only an interrupt nobody caught is handled here. So is an exception
    raised while the job is being stopped whose chain holds such an interrupt (a ``with`` block's clean-up
    that failed because the peers left);
  * the interrupt pybind11 hides counts the same (``is_hidden_interrupt``): when SIGINT arrives while
    TensorFlow raises an error (a collective failing because the peer rank already left), Python runs the
    signal handler inside that error's constructor, and pybind11 reports "RuntimeError: ... MISMATCH of
    original and normalized active exception types: ORIGINAL UnavailableError REPLACED BY
    KeyboardInterrupt". Bridged sessions raise a plain KeyboardInterrupt instead
    (``session.run_hooks.attach_run_hooks``), in any process;
  * a collective that fails while npu-run stops the job raises KeyboardInterrupt (the interruption reached
    this rank through its peers) instead of a ``CollectiveError`` blaming a peer
    (``session.steps.collectives``), and the watchdog ends a rank that waits for a peer that is gone with the
    interrupted line and exit code 130 instead of 70 (``collectives.watchdog``).

This module imports no TensorFlow (``import npu_bridge`` installs it).
"""

import atexit
import linecache
import os
import re
import signal
import sys
import sysconfig
import threading

from npu_bridge.core.runtime import bounded_files

STOP_FILE_VARIABLE = "NPU_RUN_STOP_FILE"
EXIT_CODE = 130  # 128 + SIGINT: what a shell reports for a program Ctrl-C ended (when SIGINT cannot end it)
_HIDDEN_INTERRUPT = re.compile(
    r"MISMATCH of original and normalized active exception types: ORIGINAL \S+ REPLACED BY KeyboardInterrupt\b"
)
_SIGNAL_NAME = re.compile(r"SIG[A-Z0-9]{2,10}")
_CODE_WIDTH = 60
_state = {"previous_hook": None}


def announce(path, signum):
    """Launcher side: records in ``path`` that the job is being stopped because of ``signum`` (written whole:
    a rank reads either nothing or the signal's name). Call it before signalling the ranks."""
    temporary = f"{path}.{os.getpid()}.tmp"
    with open(temporary, "w", encoding="ascii") as f:
        f.write(signal.Signals(signum).name + "\n")
    os.replace(temporary, path)


def stop_reason(environ=None):
    """Rank side: the name of the signal (e.g. "SIGINT") npu-run is stopping this job for.

    Returns:
      The name; None when the process was not started by npu-run or npu-run is not stopping the job.
    """
    path = (os.environ if environ is None else environ).get(STOP_FILE_VARIABLE, "")
    if not path:
        return None
    try:
        text = bounded_files.read_text(path, limit=64)
    except (OSError, ValueError):  # not stopping (no file yet), or not a path npu-run gave
        return None
    name = text.strip()
    return name if _SIGNAL_NAME.fullmatch(name) else None


def is_hidden_interrupt(error):
    """True for the RuntimeError pybind11 raises in place of a KeyboardInterrupt that arrived while TensorFlow
    raised an error (see the module docstring)."""
    return isinstance(error, RuntimeError) and bool(_HIDDEN_INTERRUPT.search(str(error).partition("\n")[0]))


def install(environ=None):
    """Rank side: when npu-run started this process (``STOP_FILE_VARIABLE`` is set), handles an interrupt that
    reaches the top level (see the module docstring). Idempotent.

    When npu-run is already stopping the job, the process ends at once with the interrupted line: Ctrl-C came
    while it was starting, where Python may have lost the KeyboardInterrupt (in ``site``'s start-up code).

    Returns:
      True when the handling is installed.
    """
    if not (os.environ if environ is None else environ).get(STOP_FILE_VARIABLE):
        return False
    if _state["previous_hook"] is None:
        _state["previous_hook"] = sys.excepthook
        sys.excepthook = _excepthook
    if stop_reason(environ) is not None:
        exit_interrupted(where(frame=sys._getframe()), run_atexit=True)
    return True


def _excepthook(kind, value, tb):
    try:
        if _ends_by_interrupt(value):
            _ignore_sigint()
            exit_interrupted(where(tb), run_atexit=True)
    except KeyboardInterrupt:  # the signal arrived again while this hook ran: the process was interrupted
        exit_interrupted("", run_atexit=True)
    _state["previous_hook"](kind, value, tb)


def _ends_by_interrupt(error):
    if isinstance(error, KeyboardInterrupt) or is_hidden_interrupt(error):
        return True
    if stop_reason() is None:
        return False
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, KeyboardInterrupt) or is_hidden_interrupt(error):
            return True
        error = error.__cause__ or error.__context__
    return False


def _ignore_sigint():
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # stopping already: a second SIGINT changes nothing
    except ValueError:  # not the main thread
        pass


def exit_interrupted(place="", run_atexit=False):
    """Prints the one line of an interrupted rank and ends the process: by SIGINT's default action, as Python
    ends after an uncaught KeyboardInterrupt (a shell reports 130, and a shell script that runs the rank stops
    too instead of going on with its next command), or, called from another thread, with exit code 130.

    Args:
      place: where the rank was, e.g. " during `sess.run(x)` at train.py:3" (``where``), or "".
      run_atexit: run the atexit functions first (only where the main thread is not inside TensorFlow).
    """
    _write_line(interrupted_line(stop_reason(), place))
    if run_atexit:
        try:
            atexit._run_exitfuncs()  # what a normal exit would run
        except BaseException:  # the process ends either way
            pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass
    # Both skip TensorFlow's teardown and threads still running (a data loader), as Ctrl-C should.
    if threading.current_thread() is threading.main_thread():
        try:
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])
            os.kill(os.getpid(), signal.SIGINT)
        except (OSError, ValueError):
            pass
    os._exit(EXIT_CODE)


def interrupted_line(reason, place=""):
    """The line of an interrupted rank, e.g. "interrupted by Ctrl-C (SIGINT from npu-run) during `sess.run(x)`
    at train.py:3; exiting".

    Args:
      reason: the signal name npu-run stops the job for (``stop_reason``); None: the rank got SIGINT otherwise.
      place: see ``exit_interrupted``.
    """
    if reason == "SIGINT":
        cause = "by Ctrl-C (SIGINT from npu-run)"
    elif reason is not None:
        cause = f"({reason} from npu-run)"
    else:
        cause = "(SIGINT)"
    return f"interrupted {cause}{place}; exiting"


def _write_line(text):
    try:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()
    except (AttributeError, OSError, ValueError):
        try:
            os.write(2, (text + "\n").encode("utf-8", "replace"))
        except OSError:
            pass


def where(tb=None, frame=None):
    """Where the script was: " during `<its source line>` at <file>:<line>" for the innermost frame of the
    script's own code (not npu_bridge's, TensorFlow's or the standard library's), or "".

    Args:
      tb: a traceback (of the interrupt); or
      frame: a thread's current frame.
    """
    frames = []
    if tb is not None:
        while tb is not None:
            frames.append((tb.tb_frame.f_code.co_filename, tb.tb_lineno, None))
            tb = tb.tb_next
    else:
        while frame is not None:
            frames.append((frame.f_code.co_filename, frame.f_lineno, None))
            frame = frame.f_back
        frames.reverse()
    return place_of(frames)


def place_of(frames):
    """``where`` for ``frames``: (file name, line number, source line or None to look it up), outermost first."""
    libraries = _library_dirs()
    own = [f for f in frames if not _inside(f[0], libraries) and not f[0].startswith("<frozen")]
    if not own:
        return ""
    filename, lineno, code = own[-1]
    if code is None:
        code = linecache.getline(filename, lineno) if lineno else ""
    code = code.strip()
    if len(code) > _CODE_WIDTH:
        code = code[: _CODE_WIDTH - 3] + "..."
    location = f"{os.path.basename(filename) or filename}:{lineno}"
    return f" during `{code}` at {location}" if code else f" at {location}"


def where_main_thread():
    """``where`` for the main thread's current frame (called from another thread)."""
    return where(frame=sys._current_frames().get(threading.main_thread().ident))


def _library_dirs():
    package = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # npu_bridge/
    dirs = [package, os.path.join(os.path.dirname(package), "hccl")]
    paths = sysconfig.get_paths()
    dirs += [paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib") if paths.get(key)]
    return tuple(os.path.join(os.path.realpath(d), "") for d in dirs)


def _inside(filename, dirs):
    return os.path.realpath(filename).startswith(dirs) if os.path.isabs(filename) else False
