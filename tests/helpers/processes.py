"""Fresh interpreters for tests: running a snippet, a script or a module (npu-run, npu-debug) with this checkout
importable, the environment a user runs examples in, and telling an example's own output from TensorFlow's noise."""

import os
import re
import subprocess
import sys
import textwrap

from helpers.paths import REPO_ROOT


def run_python(code, env=None, timeout=300, cwd=REPO_ROOT, args=()):
    """Runs Python ``code`` (a snippet, dedented) or a script path in a fresh interpreter.

    Args:
      env: variables to set (a value of None removes the variable, e.g. conftest.py's TF_CPP_MIN_LOG_LEVEL=2, to
        run a script in the environment a user has).
    Returns:
      The ``subprocess.CompletedProcess`` (text mode, stdout and stderr captured).
    """
    if code.endswith(".py") and "\n" not in code:
        cmd = [sys.executable, code, *args]
    else:
        cmd = [sys.executable, "-c", textwrap.dedent(code), *args]
    return _run(cmd, env, timeout, cwd)


def run_module(module, args=(), env=None, timeout=300, cwd=REPO_ROOT):
    """Runs ``python -m module args`` in a fresh interpreter; ``env`` and the result as for ``run_python``."""
    return _run([sys.executable, "-m", module, *args], env, timeout, cwd)


def npu_run(*args, timeout=60, env=None):
    """Runs npu-run (``python -m npu_bridge.core.launch``) with ``args``; the result as for ``run_python``."""
    return run_module("npu_bridge.core.launch", args, env=env, timeout=timeout)


def npu_debug(args, cwd, timeout=150):
    """Runs npu-debug (``python -m npu_bridge.core.accuracy``) with ``args`` in ``cwd``, on the simulated Ascend
    backend and without NPU_BRIDGE_OPTIONS; the result as for ``run_python``."""
    env = {"NPU_BRIDGE_DEVICE_TARGET": "ascend", "NPU_BRIDGE_OPTIONS": None}
    return run_module("npu_bridge.core.accuracy", args, env=env, timeout=timeout, cwd=cwd)


def _run(cmd, env, timeout, cwd):
    full_env = dict(os.environ)
    # Scripts run from any directory must import this checkout (CI installs it editable anyway).
    full_env["PYTHONPATH"] = os.pathsep.join(p for p in (REPO_ROOT, os.environ.get("PYTHONPATH")) if p)
    update_environment(full_env, env)
    return subprocess.run(cmd, env=full_env, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)


# What a user runs an example in: none of the variables conftest.py sets for the tests.
USER_ENVIRONMENT = {"TF_CPP_MIN_LOG_LEVEL": None, "NPU_BRIDGE_TF_LOGS": None}


# Lines that are not the story of an example: TensorFlow's C++ log lines (I/W/E/F + month and day), the banner absl
# prints before them, and Python warnings.
_NOISE = re.compile(r"^(?:\[rank \d+\] )?(?:[IWEF]\d{4} |WARNING: All log messages before absl|\S.*:\d+: \w*Warning: )")


def update_environment(environ, changes):
    """Applies ``changes`` to the mapping ``environ``: a value of None removes the variable."""
    for name, value in (changes or {}).items():
        if value is None:
            environ.pop(name, None)
        else:
            environ[name] = value


def noise(output):
    """The lines of ``output`` (npu-run's "[rank r] " prefixes allowed) that TensorFlow's C++ code or Python's
    warnings printed."""
    return [line for line in output.splitlines() if _NOISE.match(line)]
