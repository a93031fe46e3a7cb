"""One ``npu-run`` per machine, started by a scheduler: the job's rank table, made from the scheduler's variables.

``srun --ntasks-per-node=1 npu-run -n 8 --job-secret S -- python train.py`` (or a Volcano / Kubeflow pod running
``npu-run -n 8``) starts one launcher on each machine of the step. Each launcher reads the same variables
(``world.scheduler_env``): the machines in order and which one it is. From them it writes the rank table every
launcher would write (server k holds ranks k*N .. k*N+N-1 on devices 0..N-1) and plans this machine's share of it
as for ``--rank-table``, so the multi-machine rules apply unchanged (the job secret, the ports, the relays).
"""

import json
import os

from npu_bridge.core.runtime.errors import LaunchError, NotAvailableError, RankTableError
from npu_bridge.core.world import scheduler_env

TABLE_NAME = "scheduler_rank_table.json"


def outer_placement(environ):
    """The scheduler source that started this launcher as one of several machines' launchers, or None.

    Args:
      environ: the launcher's environment.
    Returns:
      A ``scheduler_env.Placement`` with more than one task and where each task runs, or None when the
      environment holds no scheduler source, or one of a single task (then ``npu-run -n N`` is a one-machine job).
    Raises:
      LaunchError: a scheduler's variables are malformed, or describe several launchers on one machine or on
        machines it does not name.
    """
    env = {k: v for k, v in environ.items() if v != ""}
    try:
        found = scheduler_env.placements(env)
    except (RankTableError, NotAvailableError) as e:
        raise LaunchError(f"the scheduler's variables: {e}") from None
    for placement in found:
        if placement.rank_size == 1:
            return None
        if placement.one_host:
            raise LaunchError(
                f"{placement.describe()}: the scheduler started {placement.rank_size} launchers on this machine; "
                "npu-run starts all of a machine's ranks, so start one npu-run per machine "
                "(srun --ntasks-per-node=1 npu-run -n N ...)"
            )
        if placement.hosts is None:
            continue
        crowded = sorted({h for h in placement.hosts if placement.hosts.count(h) > 1})
        if crowded:
            raise LaunchError(
                f"{placement.describe()}: the scheduler started several launchers on {crowded[0]!r}; npu-run starts "
                "all of a machine's ranks, so start one npu-run per machine (srun --ntasks-per-node=1 npu-run -n N)"
            )
        return placement
    if found:
        raise LaunchError(
            f"{found[0].describe()} does not say where the other machines' launchers run; start npu-run with "
            "--rank-table on every machine, under srun, or with a chief to meet at (MASTER_ADDR and MASTER_PORT, "
            "or the CM_* variables)"
        )
    return None


def job_id_of(environ):
    """``<source>-<id>`` of the first scheduler source that gives a job id (``slurm-4242``), else None."""
    env = {k: v for k, v in environ.items() if v != ""}
    try:
        found = scheduler_env.placements(env)
    except (RankTableError, NotAvailableError):
        return None  # outer_placement reports it where it matters
    return next((f"{p.source}-{p.job_id}" for p in found if p.job_id), None)


def machines_of(placement, size):
    """[(host, ranks)] of a job ``placement`` started one launcher for on each machine, ``size`` ranks each.

    Raises:
      LaunchError: ``size`` is missing or out of range.
    """
    if size is None:
        raise LaunchError(
            f"under {placement.source}, say how many ranks to start on each machine with -n N (the scheduler "
            f"started one npu-run on each of {placement.rank_size} machines)"
        )
    if not 1 <= size or size * placement.rank_size > scheduler_env.MAX_RANKS:
        raise LaunchError(
            f"-n {size} on each of {placement.rank_size} machines: the job must have 1..{scheduler_env.MAX_RANKS} ranks"
        )
    return [(host, size) for host in placement.hosts]


def write_rank_table(machines, work_dir):
    """Writes the rank table of ``machines`` ([(host, ranks)], in the job's order) into ``work_dir``: machine k's
    ranks follow those of the machines before it, on devices 0..ranks-1. Returns the table's path."""
    servers, first = [], 0
    for host, ranks in machines:
        devices = [{"device_id": str(d), "rank_id": str(first + d)} for d in range(ranks)]
        servers.append({"server_id": host, "device": devices})
        first += ranks
    table = {"status": "completed", "version": "1.0", "server_count": str(len(servers)), "server_list": servers}
    path = os.path.join(work_dir, TABLE_NAME)
    with open(path, "x", encoding="utf-8") as f:
        json.dump(table, f, indent=1)
    return path
