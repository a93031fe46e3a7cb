"""Shared test setup: a clean rank environment, graph mode, and process state reset after every test.

What tests import is in the ``helpers`` package (tests/helpers/); this file holds only the process setup and
the fixtures."""

import atexit
import logging
import os
import shutil
import tempfile

import pytest

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
    "NPU_BRIDGE_STALL_SECONDS",
    "NPU_RUN_STATUS_DIR",
    "PROFILING_MODE",
    "PROFILING_OPTIONS",
    "NPU_BRIDGE_DEVICE_TARGET",
    "NPU_BRIDGE_OPTIONS",
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
from npu_bridge.core.session import bridge  # noqa: E402
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
