"""The scheduler examples a user copies: ``examples/slurm_job.sh`` runs (on one node, with a stand-in for srun) and
``examples/volcano_job.yaml`` runs npu-run the way docs/multi_host.md says it must (one npu-run per pod, the secret
a regular file mounted with subPath, read as its owner)."""

import os
import re
import subprocess
import sys

import pytest
from helpers.paths import REPO_ROOT, TESTS_DIR, WORKERS

SLURM = os.path.join(REPO_ROOT, "examples", "slurm_job.sh")
VOLCANO = os.path.join(REPO_ROOT, "examples", "volcano_job.yaml")


def test_the_slurm_batch_script_is_valid_bash_and_starts_one_npu_run_per_node():
    subprocess.run(["bash", "-n", SLURM], check=True)
    text = open(SLURM).read()
    assert "#SBATCH --ntasks-per-node=1" in text
    assert re.search(r'^srun --ntasks-per-node=1 npu-run -n "\$RANKS_PER_NODE" --job-secret "\$SECRET" --', text, re.M)


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_the_slurm_batch_script_trains_on_one_node(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    srun = bin_dir / "srun"
    srun.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{os.path.join(WORKERS, "fake_srun.py")}" "$@"\n')
    srun.chmod(0o755)
    secret = tmp_path / "job.secret"
    subprocess.run([sys.executable, "-m", "npu_bridge.core.launch", "--make-secret", str(secret)], check=True)
    env = dict(
        os.environ,
        PATH=os.pathsep.join([str(bin_dir), os.path.dirname(sys.executable), os.environ["PATH"]]),
        PYTHONPATH=os.pathsep.join([REPO_ROOT, TESTS_DIR]),
        NPU_RUN_JOB_SECRET=str(secret),
        SLURM_JOB_ID="31337",
    )
    result = subprocess.run(["bash", SLURM], env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=220)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "starting 2 of 2 ranks" in result.stderr, result.stderr[-3000:]
    assert "all 2 ranks finished" in result.stderr
    assert re.search(r"step 19: loss \d", result.stdout), result.stdout[-2000:]


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
