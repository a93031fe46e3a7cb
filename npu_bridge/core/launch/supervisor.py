"""Runs the rank processes of a ``JobPlan`` and decides the launcher's exit code.

Each rank runs in its own session (process group), so the launcher alone decides how ranks stop, and through
``rank_guard`` the kernel ends every rank if the launcher itself dies (even by SIGKILL). When a rank
exits with a non-zero code (or is killed), the others get SIGTERM, then SIGKILL after ``stop_timeout``
seconds, and the launcher exits with that first failing rank's code (128 + signal for a killed rank). Every
line a rank writes is copied to the launcher's stdout / stderr with a ``[rank N] `` prefix, whole lines at a
time.

Ctrl-C (SIGINT) or SIGTERM to the launcher stops the job: the launcher writes the signal's name into the
ranks' stop file (``interrupt.announce``), so that every rank knows the job is being stopped, sends the signal
to every rank at once, SIGKILL to those still running after ``stop_timeout`` seconds (at once on a second
Ctrl-C), and exits with 128 + that signal after one summary line. A rank running npu_bridge then prints one
line (``interrupt``). What the launcher shows of a rank's stderr from then on is ``stop_output``'s: TensorFlow's
C++ log lines (aborted collectives, cancelled steps) are held back, and shown before the summary line only if
that rank does not end as stopped ranks should (0, or 128 + the signal, or killed by it).
"""

import errno
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time

from npu_bridge.core.launch import rank_guard, stop_output
from npu_bridge.core.runtime import interrupt

_POLL = 0.05
_PUMP_JOIN = 5.0  # seconds to wait for a rank's output after it ended (a grandchild may hold the pipe)
_SIGNAL_WORDS = {signal.SIGINT: "interrupted by Ctrl-C (SIGINT)"}


def exit_code_of(returncode):
    """Shell convention: a process killed by signal N reports 128 + N."""
    return 128 - returncode if returncode < 0 else returncode


def describe_exit(returncode):
    """Returns e.g. "exited with code 3" or "was killed by signal SIGKILL"."""
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = str(-returncode)
        return f"was killed by signal {name}"
    return f"exited with code {returncode}"


class Supervisor:
    """Starts, watches and stops the ranks of one job.

    Args:
      command: the argv every rank runs.
      ranks: the ``plan.RankLaunch`` list.
      stop_timeout: seconds between SIGTERM and SIGKILL when stopping ranks.
      stdout, stderr: binary streams the prefixed output goes to.
      report: function(text) for the launcher's own messages.
      stop_file: the ranks' ``interrupt.STOP_FILE_VARIABLE``, in a directory that exists; None: not given.
      stall_summary: a ``stall_summary.StallSummary`` polled while the ranks run, or None.
      pass_fds: descriptors every rank inherits (the job's shared-memory segment).
    """

    def __init__(
        self, command, ranks, stop_timeout, stdout, stderr, report, stop_file=None, stall_summary=None, pass_fds=()
    ):
        self._command = list(command)
        self._ranks = list(ranks)
        self._stop_timeout = stop_timeout
        self._streams = (stdout, stderr)
        self._report = report
        self._stop_file = stop_file
        self._stall_summary = stall_summary
        self._pass_fds = tuple(pass_fds)
        self._write_lock = threading.Lock()
        self._processes = {}
        self._threads = []
        self._pumps = []
        self._exits = queue.Queue()  # (rank, returncode) in the order the ranks end
        self._signal = None
        self._kill_now = False  # a second SIGINT / SIGTERM: stopping ranks are killed without waiting
        self._killed = set()  # ranks that got SIGKILL because they did not stop
        self._stderr = {}  # rank -> its stop_output.RankStderr

    def run(self):
        """Runs the job to the end.

        Returns:
          0 when every rank exited with 0; else the first failing rank's exit code, or 128 + the signal that
          interrupted the launcher.
        Raises:
          OSError: the command cannot be started (no rank is left running then).
        """
        previous = {sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            self._start_all()
            return self._wait()
        finally:
            self._stop(signal.SIGTERM)
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            for thread in self._threads:
                thread.join(_PUMP_JOIN)

    def _on_signal(self, signum, _frame):
        if self._signal is None:
            self._signal = signum
        else:
            self._kill_now = True

    def _start_all(self):
        for launch in self._ranks:
            # rank_guard execs the command; a missing one is reported here, before any rank starts.
            if shutil.which(self._command[0], path=launch.env.get("PATH", os.defpath)) is None:
                raise FileNotFoundError(errno.ENOENT, "no such executable", self._command[0])
            guarded = [sys.executable, "-I", os.path.abspath(rank_guard.__file__), str(os.getpid()), "--"]
            env = dict(launch.env)
            if self._stop_file is not None:
                env[interrupt.STOP_FILE_VARIABLE] = self._stop_file
            process = subprocess.Popen(
                guarded + self._command,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                pass_fds=self._pass_fds,
            )
            self._processes[launch.rank_id] = process
            prefix = f"[rank {launch.rank_id}] ".encode()
            self._stderr[launch.rank_id] = stop_output.RankStderr()
            for pipe, stream, lines in zip(
                (process.stdout, process.stderr), self._streams, (None, self._stderr[launch.rank_id])
            ):
                self._pumps.append(self._spawn(self._pump, pipe, stream, prefix, lines))
            self._spawn(lambda rank=launch.rank_id, p=process: self._exits.put((rank, p.wait())))

    def _spawn(self, target, *args):
        thread = threading.Thread(target=target, args=args, daemon=True)
        thread.start()
        self._threads.append(thread)
        return thread

    def _pump(self, pipe, stream, prefix, lines):
        """Copies ``pipe`` to ``stream`` line by line, through ``lines`` (a ``stop_output.RankStderr``) if given."""
        with pipe:
            for line in iter(pipe.readline, b""):
                if not line.endswith(b"\n"):
                    line += b"\n"
                with self._write_lock:
                    self._write(stream, prefix, [line] if lines is None else lines.feed(line))
        if lines is not None:
            with self._write_lock:
                self._write(stream, prefix, lines.finish())

    @staticmethod
    def _write(stream, prefix, lines):
        if lines:
            stream.write(b"".join(prefix + line for line in lines))
            stream.flush()

    def _wait(self):
        finished = 0
        while finished < len(self._processes):
            if self._signal is not None:
                return self._stop_for(self._signal)
            self._print_stalls()
            try:
                rank, code = self._exits.get(timeout=_POLL)
            except queue.Empty:
                continue
            finished += 1
            if code != 0:
                others = [r for r, p in self._processes.items() if p.poll() is None]
                stopping = (
                    f"; stopping rank{'s' if len(others) > 1 else ''} {', '.join(map(str, others))}" if others else ""
                )
                self._report(f"rank {rank} {describe_exit(code)}{stopping}")
                self._stop(signal.SIGTERM)
                return exit_code_of(code)
        return 0

    def _print_stalls(self):
        if self._stall_summary is None:
            return
        try:
            text = self._stall_summary.poll()
        except Exception as e:  # a summary must never take the launcher down: report once, stop summarizing
            self._stall_summary = None
            self._report(f"warning: the stall summary failed ({e!r}); the ranks still report their own stalls")
            return
        if text:
            with self._write_lock:
                self._write(self._streams[1], b"npu-run: ", [text.encode("utf-8", "backslashreplace") + b"\n"])

    def _stop_for(self, signum):
        """Stops every rank because the launcher received ``signum`` (see the module docstring); returns the
        launcher's exit code, 128 + ``signum``."""
        with self._write_lock:
            for lines in self._stderr.values():
                lines.stop(signal.Signals(signum).name)
        if self._stop_file is not None:
            try:
                interrupt.announce(self._stop_file, signum)
            except OSError:
                pass  # the ranks still get the signal; they just cannot tell their peers left because of it
        self._stop(signum)
        deadline = time.monotonic() + _PUMP_JOIN
        for thread in self._pumps:  # the ranks' last lines (and tracebacks made one line) come first
            thread.join(max(0.0, deadline - time.monotonic()))
        clean = (0, -signum, 128 + signum)
        codes = {rank: process.returncode for rank, process in sorted(self._processes.items())}
        with self._write_lock:
            for rank, code in codes.items():
                if code not in clean:
                    self._write(self._streams[1], f"[rank {rank}] ".encode(), self._stderr[rank].held())
        outcomes = {}  # what happened -> the ranks it happened to
        for rank, code in codes.items():
            outcomes.setdefault("stopped" if code in clean else self._outcome(rank, code), []).append(rank)
        if list(outcomes) == ["stopped"]:
            stopped = "the rank stopped" if len(codes) == 1 else f"all {len(codes)} ranks stopped"
        else:
            stopped = "; ".join(
                f"rank {ranks[0]} {what}"
                if len(ranks) == 1
                else f"ranks {', '.join(map(str, ranks))} " + what.replace("was ", "were ", 1)
                for what, ranks in outcomes.items()
            )
        words = _SIGNAL_WORDS.get(signum, f"received {signal.Signals(signum).name}")
        self._report(f"{words}: {stopped}")
        return 128 + signum

    def _outcome(self, rank, code):
        if rank in self._killed:
            if self._kill_now:
                return "was killed (SIGKILL) at a second Ctrl-C"
            return f"did not stop within {self._stop_timeout:g} s (--stop-timeout) and was killed (SIGKILL)"
        return describe_exit(code)

    def _stop(self, first_signal):
        """Sends ``first_signal`` to every running rank, and SIGKILL to those still running ``stop_timeout``
        seconds later, or at once after a second signal to the launcher."""
        alive = {rank: p for rank, p in self._processes.items() if p.poll() is None}
        for process in alive.values():
            _signal_group(process, first_signal)
        deadline = time.monotonic() + self._stop_timeout
        while alive:
            alive = {rank: p for rank, p in alive.items() if p.poll() is None}
            if alive and (self._kill_now or time.monotonic() >= deadline):
                for rank, process in alive.items():
                    _signal_group(process, signal.SIGKILL)
                    self._killed.add(rank)
                for process in alive.values():
                    process.wait()
                return
            time.sleep(_POLL)


def _signal_group(process, sig):
    try:
        os.killpg(process.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def binary_stream(stream):
    """The binary buffer under a text stream (sys.stdout / sys.stderr), or the stream itself."""
    return getattr(stream, "buffer", stream)
