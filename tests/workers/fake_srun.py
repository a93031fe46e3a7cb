"""A stand-in for Slurm's ``srun`` on one node: runs the command as the one task of a one-node job step, with the
variables srun gives a task (the options before the command are accepted and ignored).

Usage: fake_srun.py [--option=value ...] COMMAND [ARGS ...]
"""

import os
import socket
import sys


def main():
    args = sys.argv[1:]
    while args and args[0].startswith("-"):
        args.pop(0)
    env = dict(
        os.environ,
        SLURM_JOB_ID=os.environ.get("SLURM_JOB_ID", "4242"),
        SLURM_STEP_ID="0",
        SLURM_PROCID="0",
        SLURM_LOCALID="0",
        SLURM_NODEID="0",
        SLURM_STEP_NUM_TASKS="1",
        SLURM_STEP_NODELIST=socket.gethostname(),
        SLURM_STEP_TASKS_PER_NODE="1",
    )
    os.execvpe(args[0], args, env)


if __name__ == "__main__":
    main()
