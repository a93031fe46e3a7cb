"""A real single-node Slurm (``helpers.slurm``): ranks ``srun`` starts form their world from Slurm's own variables and
reduce, as root and as an unprivileged user; ``examples/slurm_job.sh`` runs under ``sbatch`` as written (on one
node). Skipped where Slurm is not installed (``.ci/run`` installs it as root)."""

import os
import re
import subprocess
import sys

import helpers.unprivileged_users
import pytest
from helpers import slurm
from helpers.paths import REPO_ROOT, TESTS_DIR, WORKERS

from npu_bridge.core.launch import plan


@pytest.fixture(scope="module")
def slurm_env():
    with slurm.cluster() as env:
        yield env


def _run(argv, env, cwd, timeout):
    process = subprocess.Popen(
        argv, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, 9)
        process.communicate()
        raise
    return process.returncode, out, err


@pytest.mark.slow
@pytest.mark.timeout(200)
@pytest.mark.parametrize("who", ["root", "unprivileged user"])
def test_ranks_srun_starts_form_the_world_from_slurm_and_reduce(slurm_env, who):
    user = helpers.unprivileged_users.chosen(who)
    env = dict(
        slurm_env,
        PYTHONPATH=os.pathsep.join([REPO_ROOT, TESTS_DIR]),
        HCCL_IF_BASE_PORT=str(plan.find_free_ports(2)),
        TF_CPP_MIN_LOG_LEVEL="2",
    )
    for name in ("RANK_ID", "RANK_SIZE", "NPU_RUN_NETWORK", "DEVICE_ID", "ASCEND_DEVICE_ID"):
        env.pop(name, None)
    with user.directory() as directory:
        env.update(HOME=str(directory), TMPDIR=str(directory))
        argv = [*user.prefix(view=False), "srun", "-n", "2", "--label", sys.executable]
        code, out, err = _run([*argv, os.path.join(WORKERS, "allreduce_worker.py")], env, directory, 180)
    assert code == 0, out[-3000:] + err[-3000:]
    results = {}
    for rank, name, value in re.findall(r'^(\d): RESULT \{"name": "(\w+)", "value": (.*)\}$', out, re.M):
        results.setdefault(int(rank), {})[name] = value
    # rank, size, local rank, local size (DEVICE_ID unset: -1): the world Slurm's variables describe
    assert [results[r]["world"] for r in (0, 1)] == ["[0, 2, 0, 2, -1]", "[1, 2, 1, 2, -1]"], out[-3000:]
    assert [results[r]["sum"] for r in (0, 1)] == ["[3.0]", "[3.0]"]


@pytest.mark.slow
@pytest.mark.timeout(260)
def test_the_slurm_batch_script_runs_under_sbatch(slurm_env, tmp_path):
    secret = tmp_path / "job.secret"
    subprocess.run([sys.executable, "-m", "npu_bridge.core.launch", "--make-secret", str(secret)], check=True)
    env = dict(
        slurm_env,
        PATH=os.pathsep.join([os.path.dirname(sys.executable), os.environ["PATH"]]),
        PYTHONPATH=os.pathsep.join([REPO_ROOT, TESTS_DIR]),
        NPU_RUN_JOB_SECRET=str(secret),
        RANKS_PER_NODE="2",
    )
    output = tmp_path / "job.out"
    # one node here: --nodes=1 overrides the script's #SBATCH --nodes=2 (and its --cpus-per-task)
    argv = ["sbatch", "--wait", "--nodes=1", "--cpus-per-task=1", f"--output={output}", "examples/slurm_job.sh"]
    code, out, err = _run(argv, env, REPO_ROOT, 240)
    text = output.read_text(errors="replace") if output.exists() else ""
    assert code == 0, out + err + text[-3000:]
    assert re.search(r"job slurm-\d+: starting 2 of 2 ranks", text), text[-3000:]
    assert "all 2 ranks finished" in text and re.search(r"step 19: loss \d", text), text[-3000:]
