"""npu-run started by a scheduler, one per machine: the rank table it derives from the scheduler's variables, and
the launch errors of steps that do not fit (several launchers on a machine, machines not named)."""

import json

import pytest

from npu_bridge.core.launch import cli, scheduler_plan
from npu_bridge.core.runtime.errors import LaunchError

STEP = {"SLURM_JOB_ID": "9", "SLURM_STEP_ID": "0", "SLURM_STEP_NUM_TASKS": "3"}


def slurm(procid, nodes, per_node):
    return dict(STEP, SLURM_PROCID=str(procid), SLURM_STEP_NODELIST=nodes, SLURM_STEP_TASKS_PER_NODE=per_node)


def test_no_scheduler_or_a_one_task_step_is_a_one_machine_job():
    assert scheduler_plan.outer_placement({}) is None
    one = dict(
        STEP, SLURM_PROCID="0", SLURM_STEP_NUM_TASKS="1", SLURM_STEP_NODELIST="n1", SLURM_STEP_TASKS_PER_NODE="1"
    )
    assert scheduler_plan.outer_placement(one) is None


def test_one_launcher_per_node_gets_the_step_s_rank_table(tmp_path):
    placement = scheduler_plan.outer_placement(slurm(1, "n[1-3]", "1(x3)"))
    assert placement.hosts[placement.rank_id] == "n2"  # this launcher's machine
    path = scheduler_plan.write_rank_table(scheduler_plan.machines_of(placement, 2), str(tmp_path))
    table = json.loads(open(path).read())
    assert table["server_count"] == "3"
    assert [(s["server_id"], [(d["device_id"], d["rank_id"]) for d in s["device"]]) for s in table["server_list"]] == [
        ("n1", [("0", "0"), ("1", "1")]),
        ("n2", [("0", "2"), ("1", "3")]),
        ("n3", [("0", "4"), ("1", "5")]),
    ]
    with pytest.raises(LaunchError, match=r"say how many ranks to start on each machine with -n N"):
        scheduler_plan.machines_of(placement, None)


@pytest.mark.parametrize(
    "environ, message",
    [
        (slurm(0, "n1", "3"), "the scheduler started 3 launchers on this machine"),
        (slurm(0, "n[1-2]", "2,1"), "several launchers on 'n1'"),
        ({"RANK": "0", "WORLD_SIZE": "2", "LOCAL_WORLD_SIZE": "1"}, "does not say where the other machines"),
        (slurm(5, "n[1-3]", "1(x3)"), "the scheduler's variables: Slurm: SLURM_PROCID='5' must be less than"),
    ],
)
def test_steps_that_do_not_fit_one_launcher_per_machine_are_refused(environ, message):
    with pytest.raises(LaunchError) as info:
        scheduler_plan.outer_placement(environ)
    assert message in str(info.value)


def test_npu_run_under_a_multi_node_step_needs_a_job_secret(capsys, monkeypatch):
    for name, value in slurm(1, "10.255.0.[1-3]", "1(x3)").items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("NPU_RUN_JOB_SECRET", raising=False)
    monkeypatch.delenv("JOB_ID", raising=False)
    assert cli.main(["-n", "2", "--", "true"]) == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert "server '10.255.0.2' of the rank table" in err  # this launcher's server, from SLURM_PROCID
    assert "without a job secret their ranks' ports would be open" in err
