"""Helpers for multi-rank tests: inputs every rank and the test agree on, starting jobs with npu-run, and
reading what each rank reported.

Workers (``tests/workers/*.py``) print ``RESULT {"name": ..., "value": ...}`` lines; ``launch`` returns them
per rank. Every job runs under npu-run with a hard timeout, so no rank outlives its test.
"""

import json
import os
import re
import socket
import subprocess
import sys

import numpy as np

from helpers.paths import REPO_ROOT, TESTS_DIR, WORKERS
from npu_bridge.core.collectives import shm_segment
from npu_bridge.core.world import scheduler_env

VECTOR = np.array([1.0, -2.0, 3.0, 0.5, 4.0, -1.0])
_RESULT = re.compile(r"^\[rank (\d+)\] RESULT (.*)$")


def outward_address():
    """An address of this machine other than loopback (the source of its route out), or None: what another
    machine would connect to."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # TEST-NET-1: picks the outgoing interface, sends nothing
        except OSError:
            return None
        address = s.getsockname()[0]
    return None if address.startswith("127.") else address


# A client outside the job (python -c OUTSIDE_CLIENT HOST:PORT FILE): it connects to a rank's server and runs a
# graph there that writes FILE, with the rank's privileges. Exit 3 and a REFUSED line when it cannot.
OUTSIDE_CLIENT = """
import sys
import tensorflow as tf
tf.compat.v1.disable_eager_execution()
address, victim = sys.argv[1:3]
graph = tf.Graph()
with graph.as_default():
    write = tf.io.write_file(victim, "written by a client outside the job")
config = tf.compat.v1.ConfigProto(operation_timeout_in_ms=15000)
try:
    with tf.compat.v1.Session(f"grpc://{address}", graph=graph, config=config) as sess:
        sess.run(write)
except Exception as e:
    print("REFUSED", type(e).__name__, str(e).splitlines()[0][:200])
    sys.exit(3)
print("RAN")
"""

# bash -c FIRST_FRAME_PROBE ADDRESS PORT: connects, sends the HTTP/2 preface and prints how many of the 9 bytes of the
# server's first frame header arrive (0: the server closed the connection). Bash and coreutils only, so that it runs
# as any user, in any network namespace, without an interpreter.
FIRST_FRAME_PROBE = (
    'trap "" PIPE; exec 3<>"/dev/tcp/$0/$1" || exit 9; '
    'printf "PRI * HTTP/2.0\\r\\n\\r\\nSM\\r\\n\\r\\n" >&3 2>/dev/null; '
    "timeout 20 head -c 9 <&3 | wc -c"
)


def vector(rank, dtype="float32"):
    """The 6-element input of ``rank``: (rank + 1) * VECTOR, with element 5 zero on rank 0 (for prod grads)."""
    value = (rank + 1) * VECTOR
    if rank == 0:
        value[5] = 0.0
    if np.dtype(dtype).kind in "iu":
        value = np.round(value)
    return value.astype(dtype)


def weights(rank, n=6):
    """A rank-dependent weight vector for losses whose gradients the tests check."""
    return (rank + 1.0) * np.arange(1, n + 1, dtype=np.float32)


def launch(worker, size, args=(), env=None, timeout=180, launcher_args=()):
    """Runs ``tests/workers/<worker>`` (or the script at an absolute path) on ``size`` ranks with npu-run.

    Args:
      env: variables to set; a value of None removes the variable (e.g. TF_CPP_MIN_LOG_LEVEL, which is 2 unless
        given).
    Returns:
      (CompletedProcess, {rank: {name: value}}).
    """
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = os.pathsep.join([REPO_ROOT, TESTS_DIR])
    full_env.setdefault("HCCL_CONNECT_TIMEOUT", "120")
    full_env.setdefault("HCCL_EXEC_TIMEOUT", "120")
    full_env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    for name, value in (env or {}).items():
        if value is None:
            full_env.pop(name, None)
        else:
            full_env[name] = value
    cmd = [
        sys.executable,
        "-m",
        "npu_bridge.core.launch",
        "-n",
        str(size),
        "--stop-timeout",
        "5",
        *launcher_args,
        "--",
        sys.executable,
        os.path.join(WORKERS, worker),
        *args,
    ]  # join keeps an absolute worker path
    result = subprocess.run(
        cmd, env=full_env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=timeout, check=False
    )
    return result, parse_results(result.stdout)


def job_failure(result, tail=4000):
    """What to show when a job failed: the end of its output, and before it every line of the stall reports
    (which ranks waited in which collective for which others), wherever they were printed."""
    stalls = [line for line in result.stderr.splitlines() if re.search(r"stalled|not arrived|waiting:", line)]
    head = "stall reports:\n" + "\n".join(stalls[:60]) + "\n---\n" if stalls else ""
    return head + result.stdout[-tail:] + result.stderr[-tail:]


def parse_results(stdout):
    """Collects the RESULT lines of every rank: {rank: {name: value}}."""
    per_rank = {}
    for line in stdout.splitlines():
        match = _RESULT.match(line)
        if match:
            record = json.loads(match.group(2))
            per_rank.setdefault(int(match.group(1)), {})[record["name"]] = record["value"]
    return per_rank


def report(name, value):
    """Used by workers: prints one RESULT line (numpy values become lists)."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    elif isinstance(value, (list, tuple)):
        value = [v.tolist() if isinstance(v, np.ndarray) else v for v in value]
    elif isinstance(value, np.generic):
        value = value.item()
    print("RESULT " + json.dumps({"name": name, "value": value}), flush=True)


def collective_op_types(tensor):
    """Used by workers: the sorted types of the collective ops (TensorFlow's ``Collective*``, the segment's
    ``HcomShm*``) that ``tensor`` is computed through."""
    seen, pending, found = set(), [tensor.op], set()
    while pending:
        op = pending.pop()
        if op.name in seen:
            continue
        seen.add(op.name)
        if op.type.startswith(("Collective", "HcomShm")):
            found.add(op.type)
        pending.extend(list(op.control_inputs) + [t.op for t in op.inputs])
    return sorted(found)


class Ranks:
    """Rank processes started directly (without npu-run), to watch how each one reacts on its own.

    Use as a context manager: every process still running at exit is killed (by PID) and reaped.
    ``shared_memory``: True gives the ranks a shared-memory segment as npu-run gives its ranks; "keeper" lets them
    get one from the host's first rank, as ranks a scheduler or a shell starts do; False keeps them on
    TensorFlow's collectives (``NPU_BRIDGE_COLLECTIVES=tf``, unless ``env`` says otherwise).
    """

    def __init__(self, worker, size, port_base, args=(), env=None, tmp_path=None, shared_memory=False):
        self.size = size
        self.logs = []
        self.processes = []
        base_env = dict(
            os.environ,
            PYTHONPATH=os.pathsep.join([REPO_ROOT, TESTS_DIR]),
            RANK_SIZE=str(size),
            HCCL_IF_BASE_PORT=str(port_base),
            TF_CPP_MIN_LOG_LEVEL="2",
            PYTHONUNBUFFERED="1",
        )
        base_env.pop("NPU_RUN_NETWORK", None)  # what npu-run tells its ranks; these were started without it
        for name in scheduler_env.SCHEDULER_VARIABLES:  # a scheduler running the tests describes another world
            base_env.pop(name, None)
        if shared_memory is False:
            base_env[shm_segment.PATH_VARIABLE] = "tf"
        base_env.update(env or {})
        segment = shm_segment.create() if shared_memory is True else None
        if segment is not None:
            base_env[shm_segment.FD_VARIABLE] = str(segment)
        for rank in range(size):
            log_path = os.path.join(str(tmp_path), f"rank{rank}.log")
            with open(log_path, "w", encoding="utf-8") as log:
                self.processes.append(
                    subprocess.Popen(
                        [sys.executable, os.path.join(WORKERS, worker), *args],
                        env=dict(base_env, RANK_ID=str(rank), DEVICE_ID=str(rank)),
                        cwd=REPO_ROOT,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        pass_fds=() if segment is None else (segment,),
                    )
                )
            self.logs.append(log_path)
        if segment is not None:
            os.close(segment)  # the ranks hold it now

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for process in self.processes:
            if process.poll() is None:
                process.kill()
            process.wait()

    def wait(self, ranks, timeout):
        """Waits until ``ranks`` have exited; returns {rank: (exit code, monotonic time of exit)}."""
        import time

        deadline = time.monotonic() + timeout
        ended = {}
        while len(ended) < len(ranks) and time.monotonic() < deadline:
            for rank in ranks:
                if rank not in ended and self.processes[rank].poll() is not None:
                    ended[rank] = (self.processes[rank].returncode, time.monotonic())
            time.sleep(0.1)
        return ended

    def output(self, rank):
        """Everything ``rank`` printed so far."""
        with open(self.logs[rank], encoding="utf-8", errors="replace") as f:
            return f.read()
