"""What the launcher starts: one ``RankLaunch`` (rank id, device id, environment) per rank on this machine.

Local job (``-n N``): ranks 0..N-1 on devices 0..N-1, described by a generated rank table (template 1, one
server, 127.0.0.1) so that scripts reading ``RANK_TABLE_FILE`` find one. Multi-machine job (``--rank-table
FILE --server-id ID``): the ranks of FILE whose server is ID, on their devices from the table; every machine
runs the same command with its own ``--server-id``.

Every rank gets RANK_ID, RANK_SIZE, DEVICE_ID, ASCEND_DEVICE_ID, JOB_ID, RANK_TABLE_FILE and
HCCL_IF_BASE_PORT; ``CM_*`` and ``POD_NAME`` are removed (the launcher describes the world), and
``PYTHONUNBUFFERED=1`` is set unless chosen otherwise so output arrives line by line.
"""

import dataclasses
import json
import os
import random
import socket

from npu_bridge.core.collectives import settings
from npu_bridge.core.runtime.errors import LaunchError
from npu_bridge.core.world import rank_table

MAX_RANKS = 32768
# Local jobs search for free ports above Linux's ephemeral range (32768-60999), from a random point, so that
# jobs started at the same moment (parallel test runs) rarely pick the same range.
_PORT_SEARCH_RANGE = (61000, settings.MAX_PORT)
_REMOVED_VARIABLES = ("CM_CHIEF_IP", "CM_CHIEF_PORT", "CM_CHIEF_DEVICE", "CM_WORKER_IP", "CM_WORKER_SIZE", "POD_NAME")


@dataclasses.dataclass(frozen=True)
class RankLaunch:
    """One rank process to start.

    Attributes:
      rank_id: the global rank.
      device_id: its device id.
      env: its complete environment.
    """

    rank_id: int
    device_id: int
    env: dict


@dataclasses.dataclass(frozen=True)
class JobPlan:
    """Everything the supervisor starts.

    Attributes:
      job_id: JOB_ID of every rank.
      rank_size: the number of ranks in the whole job.
      rank_table_path: RANK_TABLE_FILE of every rank.
      port_base: HCCL_IF_BASE_PORT of every rank.
      ranks: the ``RankLaunch`` list for this machine, in rank order.
    """

    job_id: str
    rank_size: int
    rank_table_path: str
    port_base: int
    ranks: tuple


def local_rank_table(size):
    """Returns the JSON object of a one-server template 1 rank table with ranks 0..size-1 on devices 0..size-1."""
    devices = [{"device_id": str(i), "rank_id": str(i)} for i in range(size)]
    return {
        "status": "completed",
        "version": "1.0",
        "server_count": "1",
        "server_list": [{"server_id": rank_table.LOOPBACK, "device": devices}],
    }


def plan_local(size, work_dir, environ, job_id=None, port_base=None):
    """Plans ``size`` ranks on this machine.

    Args:
      size: number of ranks, 1..32768.
      work_dir: an existing directory for the generated rank table.
      environ: the launcher's environment (copied into every rank's).
      job_id: JOB_ID, default environ JOB_ID or a generated one.
      port_base: HCCL_IF_BASE_PORT, default environ's or a free range (``find_free_ports``).
    Raises:
      LaunchError: bad size or port base, or no free ports.
    """
    if not 1 <= size <= MAX_RANKS:
        raise LaunchError(f"-n {size}: the number of ranks must be in [1, {MAX_RANKS}]")
    path = os.path.join(work_dir, "rank_table.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(local_rank_table(size), f, indent=1)
    base = _port_base(port_base, size, environ, search=True)
    return _plan(
        job_id or environ.get("JOB_ID") or f"npu-run-{os.getpid()}",
        size,
        path,
        base,
        [(r, r) for r in range(size)],
        environ,
    )


def plan_from_table(path, server_id, environ, size=None, job_id=None, port_base=None):
    """Plans the ranks of ``server_id`` in the rank table at ``path``.

    Args:
      path: the rank table file.
      server_id: this machine's server id in the table.
      environ: the launcher's environment.
      size: the ``-n`` argument, None when not given; must equal the number of ranks of ``server_id``.
      job_id: JOB_ID, default environ JOB_ID, else an error (all machines must agree on it).
      port_base: HCCL_IF_BASE_PORT, default environ's or 60000 (all machines must agree on it).
    Raises:
      LaunchError: the table is malformed, has no server ``server_id``, or disagrees with ``size``.
    """
    try:
        table = rank_table.load(path)
    except rank_table.RankTableError as e:
        raise LaunchError(str(e)) from None
    mine = [r for r in table.ranks if r.server_id == server_id]
    if not mine:
        servers = sorted({r.server_id for r in table.ranks})
        raise LaunchError(
            f"--server-id {server_id!r} is not a server of the rank table {path}; its servers are "
            f"{', '.join(repr(s) for s in servers)}"
        )
    if size is not None and size != len(mine):
        raise LaunchError(
            f"-n {size} disagrees with the rank table {path}, which has {len(mine)} ranks on server "
            f"{server_id!r}; leave -n out or make them agree"
        )
    job_id = job_id or environ.get("JOB_ID")
    if not job_id:
        raise LaunchError("a multi-machine job needs the same JOB_ID on every machine: pass --job-id or set JOB_ID")
    base = _port_base(port_base, table.rank_size, environ, search=False)
    return _plan(
        job_id, table.rank_size, os.path.abspath(path), base, [(r.rank_id, r.device_id) for r in mine], environ
    )


def _plan(job_id, rank_size, table_path, base, ranks_and_devices, environ):
    common = {k: v for k, v in environ.items() if k not in _REMOVED_VARIABLES}
    common.setdefault("PYTHONUNBUFFERED", "1")
    common.update(
        {
            "RANK_SIZE": str(rank_size),
            "JOB_ID": job_id,
            "RANK_TABLE_FILE": table_path,
            settings.PORT_BASE_VARIABLE: str(base),
        }
    )
    ranks = []
    for rank, device in ranks_and_devices:
        env = dict(common, RANK_ID=str(rank), DEVICE_ID=str(device), ASCEND_DEVICE_ID=str(device))
        ranks.append(RankLaunch(rank, device, env))
    return JobPlan(job_id, rank_size, table_path, base, tuple(ranks))


def _port_base(explicit, size, environ, search):
    if explicit is None and not environ.get(settings.PORT_BASE_VARIABLE, "").strip() and search:
        return find_free_ports(size)
    given = dict(environ)
    if explicit is not None:
        given[settings.PORT_BASE_VARIABLE] = str(explicit)
    try:
        return settings.port_base(size, given)
    except ValueError as e:
        raise LaunchError(str(e)) from None


def find_free_ports(count, start=None):
    """Returns a base port such that ``count`` consecutive ports from it can be bound now.

    Args:
      count: the number of ports.
      start: where to start searching; default a random port above the ephemeral range (then, if that
        range is full, everything from 1024 up).
    Raises:
      LaunchError: no such range exists.
    """
    low, high = _PORT_SEARCH_RANGE
    if start is None:
        start = random.randint(low, max(low, high - count + 1)) if count <= high - low + 1 else 1024
    for first in (start, low, 1024):
        base = first
        while base + count - 1 <= settings.MAX_PORT:
            taken = next((i for i in range(count) if not _bindable(base + i)), None)
            if taken is None:
                return base
            base += taken + 1
    raise LaunchError(f"found no {count} consecutive free ports; pass --port-base")


def _bindable(port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as gRPC servers do
            s.bind(("0.0.0.0", port))
        except OSError:
            return False
    return True
