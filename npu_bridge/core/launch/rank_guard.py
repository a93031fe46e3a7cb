"""Ties a rank process to its launcher: ``python -I .../rank_guard.py PID -- COMMAND...``.

The launcher starts every rank through this module, which asks the kernel to send the process SIGTERM when the
launcher dies (Linux's parent-death signal, kept across exec), checks that the launcher (PID) is still its
parent -- it may have died in between -- and then replaces itself with the rank's command. So a launcher
killed by any signal, SIGKILL included, takes its ranks with it instead of leaving them running in their own
sessions.

It runs as a file in isolated mode, importing only the standard library (not the npu_bridge package), so it
starts fast; Ctrl-C (SIGINT from the launcher) before the exec ends it quietly, as the signal's default does
(the command's own Python sets up its KeyboardInterrupt after the exec).
"""

import ctypes
import ctypes.util
import os
import signal
import sys

_PR_SET_PDEATHSIG = 1


def set_parent_death_signal(sig):
    """Returns True when the kernel will send ``sig`` to this process when its parent ends."""
    name = ctypes.util.find_library("c")
    if not sys.platform.startswith("linux") or not name:
        return False
    libc = ctypes.CDLL(name, use_errno=True)
    return libc.prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0


def main(argv):
    """Sets the parent-death signal and execs the command; exits 1 if the launcher is already gone."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # no KeyboardInterrupt traceback from this module
    if len(argv) < 3 or argv[1] != "--":
        sys.stderr.write("usage: python -I rank_guard.py LAUNCHER_PID -- COMMAND...\n")
        return 2
    launcher = int(argv[0])
    if set_parent_death_signal(signal.SIGTERM) and os.getppid() != launcher:
        return 1  # the launcher died before the signal was set: nothing would stop this rank later
    try:
        os.execvp(argv[2], argv[2:])
    except OSError as e:
        sys.stderr.write(f"npu-run: cannot start {argv[2]!r}: {e.strerror}\n")
    return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
