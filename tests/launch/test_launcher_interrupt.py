"""Ctrl-C on npu-run: every rank ends with one line, npu-run with one summary line and exit code 130; no
tracebacks, no pybind11 "MISMATCH", no TensorFlow log flood; every rank process is gone.

Also, without jobs: what the launcher shows of a stopping rank's stderr (``stop_output``), the rank side
(``interrupt``: the excepthook, the stop file, the watchdog) in fresh interpreters, and a session run whose
KeyboardInterrupt pybind11 turned into a RuntimeError."""

import os
import pathlib
import queue
import re
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time

import pytest
from helpers.paths import REPO_ROOT, TESTS_DIR, WORKERS

from npu_bridge.core.launch.stop_output import RankStderr
from npu_bridge.core.runtime import interrupt
from npu_bridge.core.session import run_hooks, step_api

LINE = re.compile(
    r"\[rank (\d)\] interrupted by Ctrl-C \(SIGINT from npu-run\) during `(.*)` at interrupt_worker\.py:\d+; exiting"
)
TF_LOG = re.compile(r"\[rank \d\] [IWEF]\d{4} ")
NOT_WANTED = ("Traceback", "MISMATCH", "KeyboardInterrupt", "CollectiveError", "CRITICAL", "Socket closed")
HIDDEN = (
    "pybind11::error_already_set: MISMATCH of original and normalized active exception types: ORIGINAL "
    "UnavailableError REPLACED BY KeyboardInterrupt: <EMPTY MESSAGE>\n\nAt:\n  errors_impl.py(474): __init__"
)


def _interrupt_job(mode):
    """Runs interrupt_worker.py on 2 ranks, sends npu-run SIGINT once both train.

    Returns:
      (exit code, seconds from SIGINT to npu-run's exit, stdout lines, stderr lines, rank PIDs).
    """
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([REPO_ROOT, TESTS_DIR]),
        TF_CPP_MIN_LOG_LEVEL="0",  # TensorFlow's log lines of the stopping ranks must not reach the terminal
        HCCL_CONNECT_TIMEOUT="120",
        HCCL_EXEC_TIMEOUT="120",
    )
    command = [sys.executable, "-m", "npu_bridge.core.launch", "-n", "2", "--stop-timeout", "30", "--"]
    launcher = subprocess.Popen(
        command + [sys.executable, os.path.join(WORKERS, "interrupt_worker.py"), mode],
        env=env,
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out, err, arrived = [], [], queue.Queue()

    def read(pipe, lines):
        for line in pipe:
            lines.append(line.rstrip("\n"))
            arrived.put(line)

    readers = [
        threading.Thread(target=read, args=(p, lines)) for p, lines in ((launcher.stdout, out), (launcher.stderr, err))
    ]
    for reader in readers:
        reader.start()
    pids = {}
    try:
        deadline = time.monotonic() + 150
        while len(pids) < 2 and time.monotonic() < deadline and launcher.poll() is None:
            try:
                match = re.match(r"\[rank (\d)\] training pid=(\d+)$", arrived.get(timeout=1).rstrip("\n"))
            except queue.Empty:
                continue
            if match:
                pids[int(match.group(1))] = int(match.group(2))
        assert len(pids) == 2, "\n".join(out + err)
        launcher.send_signal(signal.SIGINT)
        sent = time.monotonic()
        code = launcher.wait(timeout=60)
        elapsed = time.monotonic() - sent
        for reader in readers:
            reader.join(10)
    finally:
        if launcher.poll() is None:
            launcher.kill()
            launcher.wait()
        for pid in pids.values():
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
    return code, elapsed, out, err, pids


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:  # a zombie waiting for its reaper is not running
            return f.read().split(") ")[1][0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def _assert_quiet(out, err):
    everything = "\n".join(out + err)
    assert not [word for word in NOT_WANTED if word in everything], everything
    assert not [line for line in out if "interrupted" in line], everything  # the ranks' lines go to stderr
    first = next(i for i, line in enumerate(err) if "interrupted" in line)
    assert not [line for line in err[first:] if TF_LOG.match(line)], everything
    assert [line for line in err if line.startswith("npu-run:")][1:] == [
        "npu-run: interrupted by Ctrl-C (SIGINT): all 2 ranks stopped"
    ], everything
    assert err[-1] == "npu-run: interrupted by Ctrl-C (SIGINT): all 2 ranks stopped"


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_ctrl_c_ends_a_training_job_with_one_line_per_rank():
    code, elapsed, out, err, pids = _interrupt_job("loop")
    assert code == 130, "\n".join(out + err)
    assert elapsed < 10, "\n".join(out + err)  # the ranks stopped by themselves (--stop-timeout is 30)
    lines = [LINE.fullmatch(line) for line in err if "interrupted" in line and not line.startswith("npu-run:")]
    assert all(lines) and sorted(m.group(1) for m in lines) == ["0", "1"], "\n".join(out + err)
    _assert_quiet(out, err)
    assert not [pid for pid in pids.values() if _alive(pid)]


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_a_script_catching_ctrl_c_keeps_it_and_a_collective_after_it_ends_as_interrupted():
    code, elapsed, out, err, pids = _interrupt_job("catch")
    assert code == 130, "\n".join(out + err)
    assert elapsed < 10, "\n".join(out + err)
    assert sorted(re.findall(r"\[rank (\d)\] caught Ctrl-C after \d+ steps", "\n".join(out))) == ["0", "1"]
    lines = [LINE.fullmatch(line) for line in err if "interrupted" in line and not line.startswith("npu-run:")]
    assert all(lines) and [(m.group(1), m.group(2)) for m in lines] == [
        ("0", "sess.run(train, feed_dict={x: batch()})")  # the step after the catch; rank 1 ended normally
    ], "\n".join(out + err)
    _assert_quiet(out, err)
    assert not [pid for pid in pids.values() if _alive(pid)]


# --- what the launcher shows of a stopping rank's stderr -------------------------------------------------------


def _feed(lines, text):
    shown = []
    for line in text.splitlines(keepends=True):
        shown += lines.feed(line.encode())
    return b"".join(shown).decode()


TF_ABORT = (
    "E0000 00:00:1795405167.155929   11131 ring_alg.cc:291] Aborting RingReduce with UNAVAILABLE: Socket closed\n"
    "Additional GRPC error information from remote target /job:worker/replica:0/task:1 while calling /x:\n"
    ':UNKNOWN:Error received from peer  {grpc_message:"Socket closed", grpc_status:14}\n'
    "W0000 00:00:1795405167.156115   11442 op_kernel.cc:1858] OP_REQUIRES failed at collective_ops.cc:322\n"
    "The error could be from a previous operation. Restart your program to reset.\n"
    "\t [[{{node HcomAllReduce}}]] [type.googleapis.com/tensorflow.DerivedStatus='']\n"
)
INTERRUPT_TRACEBACK = textwrap.dedent(
    """\
    Traceback (most recent call last):
      File "/home/u/train.py", line 1, in <module>
        import tensorflow as tf
      File "<frozen importlib._bootstrap>", line 1176, in _find_and_load
      File "/usr/lib/python3/site-packages/tensorflow/__init__.py", line 40, in <module>
        from tensorflow.python import pywrap_tensorflow
        ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
      File "/usr/lib/python3/typing.py", line 902, in __eq__
        def __eq__(self, other):

    KeyboardInterrupt
    """
)


def test_tensorflow_log_lines_of_a_stopping_rank_are_held_back():
    lines = RankStderr()
    assert _feed(lines, TF_ABORT + "user text\n") == TF_ABORT + "user text\n"  # before the stop: everything
    lines.stop("SIGINT")
    assert _feed(lines, TF_ABORT + "user text\n" + TF_ABORT) == "user text\n"
    assert b"".join(lines.held()).decode() == TF_ABORT * 2
    assert lines.held() == [] and lines.finish() == []


def test_a_keyboard_interrupt_traceback_of_a_stopping_rank_becomes_one_line(monkeypatch):
    monkeypatch.setattr(interrupt, "_library_dirs", lambda: ("/usr/lib/python3/",))
    lines = RankStderr()
    lines.stop("SIGINT")
    shown = _feed(lines, INTERRUPT_TRACEBACK.replace('  File "<frozen', TF_ABORT + '  File "<frozen') + "next\n")
    assert shown == (
        "interrupted by Ctrl-C (SIGINT from npu-run) during `import tensorflow as tf` at train.py:1; exiting\nnext\n"
    )
    assert _feed(lines, INTERRUPT_TRACEBACK) == ""  # the line waits: a chained traceback may follow
    assert b"".join(lines.finish()).decode().startswith("interrupted by Ctrl-C")


@pytest.mark.parametrize(
    "text",
    [
        INTERRUPT_TRACEBACK.replace("KeyboardInterrupt", "ValueError: bad"),
        INTERRUPT_TRACEBACK
        + "\nDuring handling of the above exception, another exception occurred:\n\n"
        + INTERRUPT_TRACEBACK.replace("KeyboardInterrupt", "OSError: full"),
        INTERRUPT_TRACEBACK
        + "\nThe above exception was the direct cause of the following exception:\n\n"
        + INTERRUPT_TRACEBACK,
    ],
    ids=["other-error", "error-during-handling", "chained-interrupts"],
)
def test_other_tracebacks_of_a_stopping_rank_are_shown_whole(text):
    lines = RankStderr()
    lines.stop("SIGINT")
    assert _feed(lines, text + "next\n") + b"".join(lines.finish()).decode() == text + "next\n"


# --- the rank side, in fresh interpreters ----------------------------------------------------------------------


def _rank_python(code, tmp_path, stopping=None):
    """Runs ``code`` as npu-run would start a rank: NPU_RUN_STOP_FILE set; the stop is announced by ``stop()``
    in the code, or before it starts when ``stopping`` names a signal."""
    tmp_path = pathlib.Path(tempfile.mkdtemp(dir=tmp_path))  # a new stop file for every run
    stop_file = tmp_path / "stop"
    if stopping is not None:
        interrupt.announce(str(stop_file), stopping)
    prelude = (
        "import atexit, signal\nfrom npu_bridge.core.runtime import interrupt\n"
        f"stop = lambda: interrupt.announce({str(stop_file)!r}, signal.SIGINT)\n"
        "atexit.register(print, 'atexit ran', flush=True)\n"
    )
    env = dict(os.environ, PYTHONPATH=REPO_ROOT, **{interrupt.STOP_FILE_VARIABLE: str(stop_file)})
    script = tmp_path / "rank.py"
    script.write_text("import npu_bridge\n" + prelude + textwrap.dedent(code))
    return subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=60, check=False
    )


def _shown(code_line, lineno):
    """The place the rank's line names for ``code_line`` at line ``lineno`` of rank.py."""
    code = code_line if len(code_line) <= 60 else code_line[:57] + "..."
    return f" during `{code}` at rank.py:{lineno}"


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    "code, place",
    [
        ("stop()\nraise KeyboardInterrupt\n", _shown("raise KeyboardInterrupt", 7)),
        (f"stop()\nraise RuntimeError({HIDDEN!r})\n", _shown(f"raise RuntimeError({HIDDEN!r})", 7)),
        (
            "stop()\ntry:\n    raise KeyboardInterrupt\nfinally:\n    open('/nonexistent/x')\n",
            _shown("open('/nonexistent/x')", 10),
        ),
    ],
    ids=["interrupt", "pybind11-hidden-interrupt", "error-while-interrupted"],
)
def test_an_uncaught_interrupt_ends_a_rank_with_one_line_by_sigint(code, place, tmp_path):
    # Killed by SIGINT, as Python ends after an uncaught KeyboardInterrupt: a shell reports 130, and a shell
    # script that runs the rank stops too.
    result = _rank_python(code, tmp_path)
    assert result.returncode == -signal.SIGINT, result.stderr
    assert result.stderr == f"interrupted by Ctrl-C (SIGINT from npu-run){place}; exiting\n"
    assert result.stdout == "atexit ran\n"


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_script_that_catches_the_interrupt_keeps_it_and_other_errors_keep_their_traceback(tmp_path):
    code = "stop()\ntry:\n    raise KeyboardInterrupt\nexcept KeyboardInterrupt:\n    print('caught')\n"
    result = _rank_python(code, tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (0, "caught\natexit ran\n", "")
    result = _rank_python("stop()\nraise ValueError('mine')\n", tmp_path)
    assert result.returncode == 1 and "Traceback" in result.stderr and "ValueError: mine" in result.stderr


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_rank_starting_while_npu_run_stops_the_job_ends_at_once(tmp_path):
    result = _rank_python("print('started')\n", tmp_path, stopping=signal.SIGINT)
    assert result.returncode == -signal.SIGINT
    assert result.stdout == ""
    assert result.stderr == f"interrupted by Ctrl-C (SIGINT from npu-run){_shown('import npu_bridge', 1)}; exiting\n"


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_the_watchdog_ends_a_rank_of_a_stopping_job_as_interrupted(tmp_path):
    # The watchdog thread aborts only once the main thread waits, so the line named is always the wait.
    code = """\
        import sys, threading, time, traceback
        from npu_bridge.core.collectives import watchdog
        stop()
        def abort(main=threading.main_thread().ident):
            while "Event().wait" not in traceback.extract_stack(sys._current_frames()[main])[0].line:
                time.sleep(0.01)
            watchdog.abort("rank 1 is gone")
        threading.Thread(target=abort).start()
        threading.Event().wait(30)
        """
    result = _rank_python(code, tmp_path)
    assert result.returncode == 130
    assert (
        result.stderr
        == f"interrupted by Ctrl-C (SIGINT from npu-run){_shown('threading.Event().wait(30)', 14)}; exiting\n"
    )


def test_no_stop_is_announced_outside_npu_run_or_before_the_stop(tmp_path):
    assert interrupt.stop_reason({}) is None
    variable = {interrupt.STOP_FILE_VARIABLE: str(tmp_path / "stop")}
    assert interrupt.stop_reason(variable) is None
    interrupt.announce(str(tmp_path / "stop"), signal.SIGTERM)
    assert interrupt.stop_reason(variable) == "SIGTERM"
    assert interrupt.stop_reason({interrupt.STOP_FILE_VARIABLE: str(tmp_path)}) is None  # a directory
    assert not interrupt.install({})


# --- a session run whose KeyboardInterrupt pybind11 hid --------------------------------------------------------


class _Session:
    def __init__(self, error):
        self._error = error

    def run(self, *args):
        raise self._error

    def close(self):
        pass

    def _make_callable_from_options(self, options):
        raise AssertionError("not used")


class _Hook(step_api.RunHook):
    def __init__(self):
        self.failed = []

    def run_failed(self, context, error):
        self.failed.append(type(error).__name__)
        return ValueError("a hook must not replace an interrupt")


def test_a_hidden_interrupt_in_a_session_run_is_raised_as_keyboard_interrupt():
    assert interrupt.is_hidden_interrupt(RuntimeError(HIDDEN))
    assert not interrupt.is_hidden_interrupt(RuntimeError("MISMATCH ... REPLACED BY ValueError"))
    for error in (RuntimeError(HIDDEN), KeyboardInterrupt()):
        session, hook = _Session(error), _Hook()
        run_hooks.attach_run_hooks(session, [hook])
        with pytest.raises(KeyboardInterrupt) as raised:
            session.run("fetch")
        assert raised.value.__cause__ is None and raised.value.__suppress_context__ == isinstance(error, RuntimeError)
        assert hook.failed == ["KeyboardInterrupt"]  # told, so that it releases what it holds for the run
