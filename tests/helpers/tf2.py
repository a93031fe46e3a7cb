"""Running TF2 scripts of ``tests/data/tf2/scripts`` (or examples) in fresh interpreters, as a user runs them."""

import json
import os
import subprocess
import sys

from helpers.paths import REPO_ROOT

SCRIPTS = os.path.join(REPO_ROOT, "tests", "data", "tf2", "scripts")


def run_script(script, tmp_path, *args, env=None, launcher=(), pythonpath=(), expect_ok=True):
    """Runs a script (a name in SCRIPTS or an absolute path) in ``tmp_path`` with a 240 s bound.

    Args:
      env: variables to set; launcher: arguments between the interpreter and the script (e.g. ``-m
        npu_bridge.tf2``); pythonpath: more PYTHONPATH entries.
      expect_ok: assert a zero exit and one RESULT line; False returns the ``CompletedProcess`` as it is.
    Returns:
      (the RESULT line's JSON, stderr), or the ``CompletedProcess`` when ``expect_ok`` is False.
    """
    environ = dict(os.environ, PYTHONPATH=os.pathsep.join([REPO_ROOT, SCRIPTS, *pythonpath]), TF_CPP_MIN_LOG_LEVEL="2")
    environ.update(env or {})
    path = script if os.path.isabs(script) else os.path.join(SCRIPTS, script)
    argv = [sys.executable, *launcher, path, *args]
    result = subprocess.run(argv, cwd=tmp_path, env=environ, capture_output=True, text=True, timeout=240, check=False)
    if not expect_ok:
        return result
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-6000:]
    lines = [line for line in result.stdout.splitlines() if line.startswith("RESULT ")]
    assert len(lines) == 1, result.stdout[-3000:]
    return json.loads(lines[0][len("RESULT ") :]), result.stderr
