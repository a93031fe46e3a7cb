"""Starts the ranks of a one-machine job the way a scheduler does: one process per rank, each with only that
scheduler's variables (no npu-run, no RANK_ID / RANK_SIZE), then waits for all of them.

Usage: scheduler_launch.py SOURCE SIZE PORT_BASE WORKER [ARGS ...]

SOURCE is slurm, torchrun, mpi, tf_config or volcano. Every rank's output is printed with a ``[rank r] `` prefix
(as npu-run does, so ``helpers.collectives.parse_results`` reads it). Exit code: 0 when every rank exited 0, else
the first non-zero code; a rank still running after 150 s is killed (by PID) with the others, and the exit code
is 124.
"""

import json
import os
import subprocess
import sys
import tempfile
import time

from npu_bridge.core.world import scheduler_env


def scheduler_variables(source, rank, size):
    """The variables ``source`` gives rank ``rank`` of ``size`` ranks, all on this machine."""
    if source == "slurm":
        return {
            "SLURM_JOB_ID": "4242",
            "SLURM_STEP_ID": "0",
            "SLURM_PROCID": str(rank),
            "SLURM_LOCALID": str(rank),
            "SLURM_NODEID": "0",
            "SLURM_STEP_NUM_TASKS": str(size),
            "SLURM_STEP_NODELIST": "node01",
            "SLURM_STEP_TASKS_PER_NODE": str(size),
        }
    if source == "torchrun":
        return {"RANK": str(rank), "WORLD_SIZE": str(size), "LOCAL_RANK": str(rank), "LOCAL_WORLD_SIZE": str(size)}
    if source == "mpi":
        return {
            "OMPI_COMM_WORLD_RANK": str(rank),
            "OMPI_COMM_WORLD_SIZE": str(size),
            "OMPI_COMM_WORLD_LOCAL_SIZE": str(size),
        }
    if source == "tf_config":
        cluster = {"chief": ["localhost:2222"], "worker": [f"localhost:{2223 + i}" for i in range(size - 1)]}
        task = {"type": "chief", "index": 0} if rank == 0 else {"type": "worker", "index": rank - 1}
        return {"TF_CONFIG": json.dumps({"cluster": cluster, "task": task})}
    if source == "volcano":
        return {"VC_TASK_INDEX": str(rank), "VC_WORKER_HOSTS": ",".join(["127.0.0.1"] * size)}
    raise SystemExit(f"unknown source {source!r}")


def main():
    source, size, port_base, worker, *args = sys.argv[1:]
    size = int(size)
    inherited = ("RANK_ID", "RANK_SIZE", "NPU_RUN_NETWORK", *scheduler_env.SCHEDULER_VARIABLES)
    env = {k: v for k, v in os.environ.items() if k not in inherited and not k.startswith("VC_")}
    env.update(HCCL_IF_BASE_PORT=port_base, PYTHONUNBUFFERED="1", TF_CPP_MIN_LOG_LEVEL="2")
    logs = [tempfile.TemporaryFile(mode="w+", encoding="utf-8") for _ in range(size)]
    processes = [
        subprocess.Popen(
            [sys.executable, worker, *args],
            env=dict(env, DEVICE_ID=str(rank), **scheduler_variables(source, rank, size)),
            stdout=logs[rank],
            stderr=subprocess.STDOUT,
        )
        for rank in range(size)
    ]
    deadline = time.monotonic() + 150
    code = 0
    try:
        for process in processes:
            try:
                process.wait(timeout=max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                code = 124
                break
            code = code or process.returncode
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
    for rank, log in enumerate(logs):
        log.seek(0)
        for line in log.read().splitlines():
            print(f"[rank {rank}] {line}")
    sys.exit(code)


if __name__ == "__main__":
    main()
