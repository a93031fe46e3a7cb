"""Runs the rank processes of a ``JobPlan`` and decides the launcher's exit code.

Each rank runs in its own session (process group), so the launcher alone decides how ranks stop, and through
``rank_guard`` the kernel ends every rank if the launcher itself dies (even by SIGKILL). When a rank
exits with a non-zero code (or is killed), the others get SIGTERM, then SIGKILL after ``stop_timeout``
seconds, and the launcher exits with that first failing rank's code (128 + signal for a killed rank). Ctrl-C
(SIGINT) or SIGTERM to the launcher is forwarded to every rank the same way; the exit code is then
128 + that signal. Every line a rank writes is copied to the launcher's stdout / stderr with a
``[rank N] `` prefix, whole lines at a time.
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

_POLL = 0.05
_PUMP_JOIN = 5.0  # seconds to wait for a rank's output after it ended (a grandchild may hold the pipe)


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
    """

    def __init__(self, command, ranks, stop_timeout, stdout, stderr, report):
        self._command = list(command)
        self._ranks = list(ranks)
        self._stop_timeout = stop_timeout
        self._streams = (stdout, stderr)
        self._report = report
        self._write_lock = threading.Lock()
        self._processes = {}
        self._threads = []
        self._exits = queue.Queue()  # (rank, returncode) in the order the ranks end
        self._signal = None

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
        self._signal = self._signal or signum

    def _start_all(self):
        for launch in self._ranks:
            # rank_guard execs the command; a missing one is reported here, before any rank starts.
            if shutil.which(self._command[0], path=launch.env.get("PATH", os.defpath)) is None:
                raise FileNotFoundError(errno.ENOENT, "no such executable", self._command[0])
            guarded = [sys.executable, "-m", "npu_bridge.core.launch.rank_guard", str(os.getpid()), "--"]
            process = subprocess.Popen(
                guarded + self._command,
                env=launch.env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
            self._processes[launch.rank_id] = process
            prefix = f"[rank {launch.rank_id}] ".encode()
            for pipe, stream in zip((process.stdout, process.stderr), self._streams):
                self._spawn(self._pump, pipe, stream, prefix)
            self._spawn(lambda rank=launch.rank_id, p=process: self._exits.put((rank, p.wait())))

    def _spawn(self, target, *args):
        thread = threading.Thread(target=target, args=args, daemon=True)
        thread.start()
        self._threads.append(thread)

    def _pump(self, pipe, stream, prefix):
        with pipe:
            for line in iter(pipe.readline, b""):
                if not line.endswith(b"\n"):
                    line += b"\n"
                with self._write_lock:
                    stream.write(prefix + line)
                    stream.flush()

    def _wait(self):
        finished = 0
        while finished < len(self._processes):
            if self._signal is not None:
                self._report(f"received {signal.Signals(self._signal).name}; stopping all ranks")
                self._stop(signal.SIGINT if self._signal == signal.SIGINT else signal.SIGTERM)
                return 128 + self._signal
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

    def _stop(self, first_signal):
        alive = [p for p in self._processes.values() if p.poll() is None]
        for process in alive:
            _signal_group(process, first_signal)
        deadline = time.monotonic() + self._stop_timeout
        for process in alive:
            try:
                process.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal_group(process, signal.SIGKILL)
                process.wait()


def _signal_group(process, sig):
    try:
        os.killpg(process.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def binary_stream(stream):
    """The binary buffer under a text stream (sys.stdout / sys.stderr), or the stream itself."""
    return getattr(stream, "buffer", stream)
