#!/bin/bash
# A two-node npu_bridge job under Slurm: one npu-run per node starts that node's ranks.
#
#   npu-run --make-secret ~/job.secret        # once, on the shared file system (mode 0600)
#   sbatch examples/slurm_job.sh
#
# npu-run reads the step's variables (SLURM_PROCID, SLURM_STEP_NODELIST, SLURM_STEP_TASKS_PER_NODE): node k runs
# ranks k*RANKS_PER_NODE .. k*RANKS_PER_NODE+RANKS_PER_NODE-1, the job id is slurm-$SLURM_JOB_ID, and the nodes'
# ranks reach each other only through relays that check the job secret (docs/multi_host.md).
#SBATCH --job-name=npu-bridge-train
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=8
#SBATCH --time=01:00:00

set -euo pipefail
RANKS_PER_NODE=${RANKS_PER_NODE:-2}
SECRET=${NPU_RUN_JOB_SECRET:-$HOME/job.secret}

srun --ntasks-per-node=1 npu-run -n "$RANKS_PER_NODE" --job-secret "$SECRET" -- \
    python examples/distributed_training.py
