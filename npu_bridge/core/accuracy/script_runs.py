"""Running the user's command once, with NpuOptimizer options set through ``NPU_BRIDGE_OPTIONS``.

Each run is a new process group (its own session), so stopping a run -- on a timeout, or when the tool itself is
stopped -- ends the command and every process it started; the command's first process also gets SIGKILL from the
kernel when the tool dies without cleaning up. Output goes to files in the tool's private directory; only their
tails are read back.
"""

import dataclasses
import json
import os
import signal
import subprocess
import time

from npu_bridge.core.launch import rank_guard
from npu_bridge.core.options import environment_options

TAIL_BYTES = 16 << 20  # the metric is read from at most this much of the end of each output
_GRACE_SECONDS = 3


@dataclasses.dataclass(frozen=True)
class RunOutput:
    """What one run of the command gave.

    Attributes:
      returncode: its exit status (negative: killed by that signal); None when it timed out.
      stdout, stderr: the ends of its outputs (``TAIL_BYTES`` each), decoded leniently.
      seconds: how long it ran.
    """

    returncode: object
    stdout: str
    stderr: str
    seconds: float

    @property
    def timed_out(self):
        """True when the run was stopped at the timeout."""
        return self.returncode is None


class ScriptRunner:
    """Runs one command again and again, each time with other options."""

    def __init__(self, command, environ, timeout, work_dir):
        """Args:
        command: the argument list (``command[0]`` is looked up on ``PATH``).
        environ: the environment of every run; NPU_BRIDGE_OPTIONS in it, if any, is the base the runs add to.
        timeout: seconds a run may take.
        work_dir: a private directory for the runs' output files.
        """
        self.command = list(command)
        self.environ = dict(environ)
        self.base_options = environment_options.read(self.environ)
        self.timeout = timeout
        self.work_dir = work_dir
        self.count = 0
        self._process = None

    def run(self, options, extra_env=None):
        """Runs the command once with ``options`` set over the script's (``None`` values unset them).

        Args:
          options: {NpuOptimizer option: value}.
          extra_env: more environment variables for this run.
        Returns:
          ``RunOutput``.
        Raises:
          OSError: the command cannot be started (not found, not executable).
        """
        self.count += 1
        env = dict(self.environ)
        env.update(extra_env or {})
        env[environment_options.VARIABLE] = json.dumps({**self.base_options, **options}, sort_keys=True)
        out_path = os.path.join(self.work_dir, f"run_{self.count}.stdout")
        err_path = os.path.join(self.work_dir, f"run_{self.count}.stderr")
        start = time.monotonic()
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            self._process = subprocess.Popen(
                self.command,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                env=env,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )
            try:
                returncode = self._process.wait(timeout=self.timeout)
            except subprocess.TimeoutExpired:
                returncode = None
            finally:
                self.stop()
        return RunOutput(returncode, _tail(out_path), _tail(err_path), time.monotonic() - start)

    def stop(self):
        """Ends the current run's process group, if any (TERM, then KILL after a grace period)."""
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:
            _signal_group(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=_GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                pass
        _signal_group(process.pid, signal.SIGKILL)  # also what the command left behind in its group
        process.wait()


def _die_with_parent():
    rank_guard.set_parent_death_signal(signal.SIGKILL)


def _signal_group(pid, sig):
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _tail(path):
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        size = f.tell()
        f.seek(max(0, size - TAIL_BYTES))
        return f.read().decode("utf-8", "replace")
