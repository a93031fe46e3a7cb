"""Shared test setup: a clean rank environment, graph mode, and process state reset after every test."""

import atexit
import logging
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap

import pytest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Tests describe the world they need themselves; the developer's environment must not leak in (this also
# applies to the subprocesses tests start, which inherit os.environ).
_AMBIENT_VARIABLES = (
    "RANK_TABLE_FILE",
    "RANK_SIZE",
    "RANK_ID",
    "DEVICE_ID",
    "ASCEND_DEVICE_ID",
    "POD_NAME",
    "JOB_ID",
    "CM_CHIEF_IP",
    "CM_CHIEF_PORT",
    "CM_CHIEF_DEVICE",
    "CM_WORKER_IP",
    "CM_WORKER_SIZE",
    "ASCEND_GLOBAL_LOG_LEVEL",
    "ASCEND_SLOG_PRINT_TO_STDOUT",
    "HCCL_CONNECT_TIMEOUT",
    "HCCL_EXEC_TIMEOUT",
    "PROFILING_MODE",
    "PROFILING_OPTIONS",
    "NPU_BRIDGE_DEVICE_TARGET",
)
for _name in _AMBIENT_VARIABLES:
    os.environ.pop(_name, None)
# The temporary files of the processes tests start go to a directory of this test run, removed when the run
# ends: an npu-run that a test kills with SIGKILL cannot remove its own work directory. pytest's own temporary
# directories stay where they are (the temporary directory of this process is looked up first).
tempfile.gettempdir()
_CHILD_TMPDIR = tempfile.mkdtemp(prefix="npu-bridge-tests-")
os.environ["TMPDIR"] = _CHILD_TMPDIR
atexit.register(shutil.rmtree, _CHILD_TMPDIR, ignore_errors=True)
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # noqa: E402

import npu_bridge  # noqa: E402,F401
from npu_bridge.core.runtime import system  # noqa: E402
from npu_bridge.core.session import bridge, config_proto  # noqa: E402
from npu_bridge.core.world import pending_split  # noqa: E402

# TF1-style tests: graph mode, as after `from npu_bridge.npu_init import *`.
tf.compat.v1.disable_eager_execution()


@pytest.fixture(autouse=True)
def _reset_process_state():
    """Each test starts with the NPU system down, no split strategy waiting for it, without npu_init's
    session injection, and with the environment the previous test found (library code such as the TF1 mode's
    activation writes to os.environ, which the rank processes of later tests would inherit)."""
    environ = dict(os.environ)
    network = os.readlink("/proc/self/ns/net")
    yield
    # npu-run's private network is entered by unshare() in the calling process: a test that runs it in-process
    # would leave this worker, and the rank processes of later tests, in a network with loopback only.
    assert os.readlink("/proc/self/ns/net") == network, "the test moved the test process into another network"
    if os.environ != environ:
        os.environ.clear()
        os.environ.update(environ)
    bridge.inject_npu_config(False)
    system.shutdown(force=True)
    pending_split.take()


@pytest.fixture
def npu_log():
    """Messages the ``npu_bridge`` logger emits during the test (it does not propagate to the root logger)."""
    messages = []

    class _Collect(logging.Handler):
        def emit(self, record):
            messages.append(record.getMessage())

    handler = _Collect(level=logging.DEBUG)
    logger = logging.getLogger("npu_bridge")
    logger.addHandler(handler)
    yield messages
    logger.removeHandler(handler)


def npu_config(**options):
    """A ConfigProto with an NpuOptimizer entry holding ``options`` (bool -> .b, int -> .i, str -> .s)."""
    config = tf.compat.v1.ConfigProto()
    config_proto.append_npu_optimizer(config, options)
    return config


def python_files(*tops):
    """The project's .py files below the repository folders ``tops`` (e.g. "npu_bridge", "hccl"), sorted."""
    return sorted(p for top in tops for p in pathlib.Path(REPO_ROOT, top).rglob("*.py"))


def run_python(code, env=None, timeout=300, cwd=REPO_ROOT, args=()):
    """Runs Python ``code`` (a snippet, dedented) or a script path in a fresh interpreter.

    Args:
      env: variables to set (a value of None removes the variable, e.g. this file's TF_CPP_MIN_LOG_LEVEL=2, to
        run a script in the environment a user has).
    Returns:
      The ``subprocess.CompletedProcess`` (text mode, stdout and stderr captured).
    """
    full_env = dict(os.environ)
    # Scripts run from any directory must import this checkout (CI installs it editable anyway).
    full_env["PYTHONPATH"] = os.pathsep.join(p for p in (REPO_ROOT, os.environ.get("PYTHONPATH")) if p)
    update_environment(full_env, env)
    if code.endswith(".py") and "\n" not in code:
        cmd = [sys.executable, code, *args]
    else:
        cmd = [sys.executable, "-c", textwrap.dedent(code), *args]
    return subprocess.run(cmd, env=full_env, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)


# What a user runs an example in: none of the variables this file sets for the tests.
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
