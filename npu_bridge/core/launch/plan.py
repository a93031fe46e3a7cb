"""What the launcher starts: one ``RankLaunch`` (rank id, device id, environment) per rank on this machine.

Local job (``-n N``): ranks 0..N-1 on devices 0..N-1, described by a generated rank table (template 1, one
server, 127.0.0.1) so that scripts reading ``RANK_TABLE_FILE`` find one. Multi-machine job (``--rank-table
FILE [--server-id ID]``): the ranks of FILE whose server is ID, on their devices from the table; every machine
runs the same command. Without ``--server-id`` the server is the one whose host address (``container_ip``, else
``host_ip``, else ``server_id``) is an address of this machine (``addresses.is_local``); a table with a single
server is this machine whatever its id. None or several such servers is an error that lists the table's servers.

Every rank gets RANK_ID, RANK_SIZE, DEVICE_ID, ASCEND_DEVICE_ID, JOB_ID, RANK_TABLE_FILE and
HCCL_IF_BASE_PORT; ``CM_*`` and ``POD_NAME`` are removed (the launcher describes the world), and
``PYTHONUNBUFFERED=1`` is set unless chosen otherwise so output arrives line by line. When an HTTP proxy is
set (``grpc_proxy``, ``https_proxy`` or ``http_proxy``, which TensorFlow's gRPC channels obey), the job's
hosts are added to ``no_grpc_proxy`` (starting from ``no_proxy`` when it is unset; gRPC reads only the
first of the two), so that ranks talk to each other directly: through a proxy every collective would wait
until its timeout. Other programs keep using ``no_proxy``.
"""

import dataclasses
import json
import os
import random
import socket
from typing import Optional

from npu_bridge.core.collectives import settings
from npu_bridge.core.launch import addresses
from npu_bridge.core.runtime.errors import EnvironmentVariableError, LaunchError
from npu_bridge.core.world import rank_table, timeouts

MAX_RANKS = 32768
# Local jobs search for free ports above Linux's ephemeral range (32768-60999), from a random point, so that
# jobs started at the same moment (parallel test runs) rarely pick the same range.
_PORT_SEARCH_RANGE = (61000, settings.MAX_PORT)
_GRPC_PROXY_VARIABLES = ("grpc_proxy", "https_proxy", "http_proxy")  # what gRPC reads, in its order
_NO_GRPC_PROXY = "no_grpc_proxy"
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
      server_id: the rank table server these ranks belong to; None for a local job.
      server_found: how the server was chosen: "--server-id", "address" (its address is this machine's),
        "only server" (the table has one) or "scheduler" (``scheduler_plan``); None for a local job.
      warnings: things the launcher should tell the user before starting (texts).
      hosts: the host address of every server of the job, once each, in table order.
      rank_hosts: (rank id, host address) of every rank of the job.
    """

    job_id: str
    rank_size: int
    rank_table_path: str
    port_base: int
    ranks: tuple
    server_id: Optional[str] = None
    server_found: Optional[str] = None
    warnings: tuple = ()
    hosts: tuple = ()
    rank_hosts: tuple = ()


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
        [rank_table.LOOPBACK],
        [(r, rank_table.LOOPBACK) for r in range(size)],
    )


def plan_from_table(path, server_id, environ, size=None, job_id=None, port_base=None):
    """Plans the ranks of ``server_id`` in the rank table at ``path``.

    Args:
      path: the rank table file.
      server_id: this machine's server id in the table; None to find it by address (``local_server``).
      environ: the launcher's environment.
      size: the ``-n`` argument, None when not given; must equal the number of ranks of ``server_id``.
      job_id: JOB_ID, default environ JOB_ID, else an error (all machines must agree on it).
      port_base: HCCL_IF_BASE_PORT, default environ's or 60000 (all machines must agree on it).
    Raises:
      LaunchError: the table is malformed (or still "initializing" after HCCL_CONNECT_TIMEOUT, for which it
        waits as a rank does), has no server ``server_id`` (or, without it, no or several servers
        with an address of this machine), or disagrees with ``size``.
    """
    try:
        table = rank_table.load_completed(path, timeouts.connect_timeout(environ))
    except (rank_table.RankTableError, EnvironmentVariableError) as e:
        raise LaunchError(str(e)) from None
    warnings = []
    if server_id is None:
        server_id, found = local_server(table, path)
    else:
        found = "--server-id"
        hosts = _server_hosts(table)
        if server_id not in hosts:
            raise LaunchError(
                f"--server-id {server_id!r} is not a server of the rank table {path}; its servers are "
                f"{_listed_servers(hosts)}"
            )
        if len(hosts) > 1 and not addresses.is_local(hosts[server_id]):
            warnings.append(
                f"server {server_id!r} of the rank table is reached at {hosts[server_id]}, which is not an address "
                "of this machine; the other machines' ranks will not find its ranks unless that address leads "
                "here (check --server-id or the scheduler's node list, or the server's container_ip / host_ip in "
                "the table)"
            )
    mine = [r for r in table.ranks if r.server_id == server_id]
    if size is not None and size != len(mine):
        raise LaunchError(
            f"-n {size} disagrees with the rank table {path}, which has {len(mine)} ranks on server "
            f"{server_id!r}; leave -n out or make them agree"
        )
    job_id = job_id or environ.get("JOB_ID")
    if not job_id:
        raise LaunchError("a multi-machine job needs the same JOB_ID on every machine: pass --job-id or set JOB_ID")
    base = _port_base(port_base, table.rank_size, environ, search=False)
    warnings.extend(_ephemeral_port_warnings([base + r.rank_id for r in mine], base))
    return dataclasses.replace(
        _plan(
            job_id,
            table.rank_size,
            os.path.abspath(path),
            base,
            [(r.rank_id, r.device_id) for r in mine],
            environ,
            _server_hosts(table).values(),
            [(r.rank_id, r.host) for r in table.ranks],
        ),
        server_id=server_id,
        server_found=found,
        warnings=tuple(warnings),
    )


def local_server(table, path):
    """Finds the server of ``table`` that is this machine.

    Args:
      table: a loaded ``rank_table.RankTable``.
      path: its file, for messages.
    Returns:
      (server_id, how): how is "only server" for a one-server table, else "address".
    Raises:
      LaunchError: no server, or more than one, has an address of this machine.
    """
    hosts = _server_hosts(table)
    if len(hosts) == 1:
        return next(iter(hosts)), "only server"
    local = [server for server, host in hosts.items() if addresses.is_local(host)]
    if len(local) == 1:
        return local[0], "address"
    if not local:
        raise LaunchError(
            f"no server of the rank table {path} has an address of this machine (servers: "
            f"{_listed_servers(hosts)}); pass --server-id, or fix the table's server_id / host_ip / container_ip values"
        )
    raise LaunchError(
        f"several servers of the rank table {path} have addresses of this machine "
        f"({_listed_servers({s: hosts[s] for s in local})}); pass --server-id to say which one this launcher starts"
    )


def _server_hosts(table):
    """{server_id: host address} in the order of the servers' first ranks."""
    hosts = {}
    for r in table.ranks:
        hosts.setdefault(r.server_id, r.host)
    return hosts


_SERVERS_LISTED = 8  # a message names this many servers of a big table, then counts the rest


def _listed_servers(hosts):
    listed = [repr(s) if s == host else f"{s!r} ({host})" for s, host in list(hosts.items())[:_SERVERS_LISTED]]
    if len(hosts) > _SERVERS_LISTED:
        listed.append(f"and {len(hosts) - _SERVERS_LISTED} more")
    return ", ".join(listed)


def _plan(job_id, rank_size, table_path, base, ranks_and_devices, environ, hosts, rank_hosts):
    common = {k: v for k, v in environ.items() if k not in _REMOVED_VARIABLES}
    common.setdefault("PYTHONUNBUFFERED", "1")
    if any(environ.get(name, "").strip() for name in _GRPC_PROXY_VARIABLES):
        listed = environ.get(_NO_GRPC_PROXY) if _NO_GRPC_PROXY in environ else environ.get("no_proxy", "")
        entries = [e.strip() for e in listed.split(",") if e.strip()]
        common[_NO_GRPC_PROXY] = ",".join(entries + [h for h in dict.fromkeys(hosts) if h not in entries])
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
    return JobPlan(
        job_id,
        rank_size,
        table_path,
        base,
        tuple(ranks),
        hosts=tuple(dict.fromkeys(hosts)),
        rank_hosts=tuple(rank_hosts),
    )


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


def _ephemeral_port_warnings(ports, base, proc="/proc/sys/net/ipv4"):
    """Warns about rank ports that outgoing connections of this machine may take first.

    The kernel picks the local port of an outgoing connection from ``ip_local_port_range`` (Linux default
    32768-60999, which holds HCCL's default ports 60000+), skipping ``ip_local_reserved_ports``. A connection
    holding a rank's port (even towards another machine) makes that rank's collective server fail to start.
    """
    try:
        with open(os.path.join(proc, "ip_local_port_range"), encoding="ascii") as f:
            low, high = (int(v) for v in f.read().split())
        with open(os.path.join(proc, "ip_local_reserved_ports"), encoding="ascii") as f:
            reserved = [
                (int(first), int(last or first))
                for first, _, last in (item.partition("-") for item in f.read().strip().split(",") if item)
            ]
    except (OSError, ValueError):
        return []  # not Linux, no access, or a format this does not know: nothing to say
    exposed = [p for p in ports if low <= p <= high and not any(a <= p <= b for a, b in reserved)]
    if not exposed:
        return []
    first, last = min(ports), max(ports)
    return [
        f"the ports of this machine's ranks ({first}-{last}: HCCL_IF_BASE_PORT {base} + rank id) lie in its range "
        f"for outgoing connections ({low}-{high}, net.ipv4.ip_local_port_range), so an outgoing connection may "
        "take one before its rank listens on it, and that rank then fails with 'cannot start the collective "
        f"server'. Reserve them (sysctl -w net.ipv4.ip_local_reserved_ports={first}-{last}) or give every machine "
        f"the same --port-base above {high}"
    ]


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
