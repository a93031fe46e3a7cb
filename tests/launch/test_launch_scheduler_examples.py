"""The scheduler examples a user copies, as far as they can be checked without a cluster: ``examples/slurm_job.sh``
is valid bash that starts one npu-run per node (tests/world/test_world_slurm.py runs it under a real sbatch), and
``examples/volcano_job.yaml`` runs npu-run the way docs/multi_host.md says it must (one npu-run per pod, the secret
a regular file mounted with subPath, read as its owner)."""

import os
import re
import subprocess

from helpers.paths import REPO_ROOT

SLURM = os.path.join(REPO_ROOT, "examples", "slurm_job.sh")
VOLCANO = os.path.join(REPO_ROOT, "examples", "volcano_job.yaml")


def test_the_slurm_batch_script_is_valid_bash_and_starts_one_npu_run_per_node():
    subprocess.run(["bash", "-n", SLURM], check=True)
    text = open(SLURM).read()
    assert "#SBATCH --ntasks-per-node=1" in text
    assert re.search(r'^srun --ntasks-per-node=1 npu-run -n "\$RANKS_PER_NODE" --job-secret "\$SECRET" --', text, re.M)


def test_the_volcano_job_runs_one_npu_run_per_pod_with_its_secret_mounted_as_a_file():
    text = open(VOLCANO).read()
    command = re.search(r"command: \[(.*?)\]", text, re.S).group(1)
    argv = [part.strip().strip('"') for part in command.replace("\n", " ").split(",")]
    assert argv[:3] == ["npu-run", "-n", "2"]
    secret = argv[argv.index("--job-secret") + 1]
    mount = re.search(r"mountPath: (\S+)\n\s+subPath: (\S+)", text)
    assert mount and mount.group(1) == secret and secret.endswith("/" + mount.group(2))
    assert re.search(r"runAsUser: 0\b", text) and re.search(r"defaultMode: 0400\b", text)
    assert "env: []" in text and "svc: []" in text  # the plugins that set VC_TASK_INDEX / VC_WORKER_HOSTS
