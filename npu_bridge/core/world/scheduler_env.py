"""Worlds described by the variables job schedulers and launchers set, each read with its own semantics.

Sources, innermost launcher first (``precedence``): torchrun-style (``RANK``, ``WORLD_SIZE``, ...), MPI launchers
(Open MPI's ``OMPI_COMM_WORLD_*``, MPICH / Hydra's ``PMI_RANK`` / ``PMI_SIZE``), Slurm's ``srun`` tasks
(``SLURM_PROCID``, step node list, tasks per node), Kubernetes' ``TF_CONFIG`` (Kubeflow TFJob, Volcano's
tensorflow plugin) and Volcano's ``VC_TASK_INDEX`` with ``VC_<TASK>_HOSTS``. Each reader returns a ``Placement``:
this process's rank, the size, and where every rank runs when the source says. ``world.py`` decides which one
forms the world.
"""

import dataclasses
import ipaddress
import json
import re
import socket
from typing import Optional

from npu_bridge.core.device.device_id import parse_int
from npu_bridge.core.runtime.errors import NotAvailableError, RankTableError, shortened
from npu_bridge.core.world import hostlist

MAX_RANKS = 32768
# every variable a reader below reads (Volcano also reads VC_<TASK>_HOSTS, one per task)
SCHEDULER_VARIABLES = (
    "RANK",
    "WORLD_SIZE",
    "LOCAL_RANK",
    "LOCAL_WORLD_SIZE",
    "MASTER_ADDR",
    "MASTER_PORT",
    "TORCHELASTIC_RUN_ID",
    "OMPI_COMM_WORLD_RANK",
    "OMPI_COMM_WORLD_SIZE",
    "OMPI_COMM_WORLD_LOCAL_SIZE",
    "PMI_RANK",
    "PMI_SIZE",
    "MPI_LOCALNRANKS",
    "SLURM_PROCID",
    "SLURM_STEP_ID",
    "SLURM_STEP_NUM_TASKS",
    "SLURM_NTASKS",
    "SLURM_STEP_NODELIST",
    "SLURM_JOB_NODELIST",
    "SLURM_NODELIST",
    "SLURM_STEP_TASKS_PER_NODE",
    "SLURM_TASKS_PER_NODE",
    "SLURM_DISTRIBUTION",
    "SLURM_DIST_PLANESIZE",
    "SLURM_NODEID",
    "SLURM_LOCALID",
    "SLURM_JOB_ID",
    "TF_CONFIG",
    "VC_TASK_INDEX",
    "VK_TASK_INDEX",
    "HOSTNAME",
)
LOCAL_NAMES = ("localhost", "127.0.0.1", "::1")


@dataclasses.dataclass(frozen=True)
class Placement:
    """One source's view of this process in the job.

    Attributes:
      source: "torchrun", "mpi", "slurm", "tf_config" or "volcano".
      variables: "NAME=value" texts of the variables that said so (shortened), for messages and ``npu-bridge info``.
      rank_id: this process's rank.
      rank_size: the number of ranks.
      hosts: the host of every rank, in rank order; None when the source does not say (then ``one_host`` tells
        whether all ranks run here).
      one_host: True when the source says every rank runs on this process's machine.
      job_id: the scheduler's job id when it gives one.
    """

    source: str
    variables: tuple
    rank_id: int
    rank_size: int
    hosts: Optional[tuple]
    one_host: bool
    job_id: Optional[str] = None

    def describe(self):
        """e.g. ``slurm (SLURM_PROCID=1, SLURM_STEP_NUM_TASKS=4)``."""
        return f"{self.source} ({', '.join(self.variables)})"


def _said(env, names):
    return tuple(f"{n}={shortened(env[n])}" for n in names if n in env)


def env_int(env, name, low, high=None):
    """``env[name]`` as an integer in [low, high] (no upper bound when high is None), else RankTableError."""
    value = parse_int(env[name])
    if value is None or value < low or (high is not None and value > high):
        allowed = f"an integer in [{low}, {high}]" if high is not None else f"an integer >= {low}"
        raise RankTableError(f"{name} has invalid value {shortened(env[name])}: must be {allowed}")
    return value


def env_ip(env, name):
    """``env[name]`` as a normalized IPv4 or IPv6 address, else RankTableError."""
    text = env[name].strip()
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        raise RankTableError(
            f'{name} has invalid value {shortened(env[name])}: must be an IPv4 or IPv6 address such as "10.0.0.1"'
        ) from None


def _rank_and_size(env, rank_name, size_name, source):
    size = env_int(env, size_name, 1, MAX_RANKS)
    rank = env_int(env, rank_name, 0, MAX_RANKS - 1)
    if rank >= size:
        raise RankTableError(
            f"{source}: {rank_name}={shortened(env[rank_name])} must be less than "
            f"{size_name}={shortened(env[size_name])}"
        )
    return rank, size


HOST_PATTERN = re.compile(r"[A-Za-z0-9._:-]{1,253}")  # a host name, an IPv4 or an IPv6 address


def master_address(env):
    """torchrun-style ``MASTER_ADDR`` and ``MASTER_PORT``: (host, port), or None when either is unset.

    Raises:
      RankTableError: the host is not a host name or an IP address, or the port is not in [1, 65535].
    """
    if "MASTER_ADDR" not in env or "MASTER_PORT" not in env:
        return None
    port = env_int(env, "MASTER_PORT", 1, 65535)
    host = env["MASTER_ADDR"].strip()
    if not HOST_PATTERN.fullmatch(host):
        raise RankTableError(f"MASTER_ADDR={shortened(env['MASTER_ADDR'])} must be a host name or an IP address")
    return host, port


def _local_size_says_one_host(env, local_name, size, source):
    """True when the launcher's local size covers the whole world; refuses a local size larger than the world."""
    if local_name not in env:
        return size == 1
    local = env_int(env, local_name, 1, MAX_RANKS)
    if local > size:
        raise RankTableError(
            f"{source}: {local_name}={shortened(env[local_name])} is more than the world's {size} ranks; it must "
            f"be at most {size}"
        )
    return local == size


def torchrun(env):
    """torchrun / Kubeflow PyTorchJob: ``RANK`` and ``WORLD_SIZE`` (both needed), ``LOCAL_WORLD_SIZE`` (all ranks
    are here when it equals the world size), ``TORCHELASTIC_RUN_ID`` as the job id."""
    if "RANK" not in env and "WORLD_SIZE" not in env:
        return None
    if "RANK" not in env or "WORLD_SIZE" not in env:
        have, lack = ("RANK", "WORLD_SIZE") if "RANK" in env else ("WORLD_SIZE", "RANK")
        raise RankTableError(
            f"torchrun-style variables: {have}={shortened(env[have])} is set but {lack} is not; both must be set (a "
            "launcher sets both), so set the missing one or unset the stray one"
        )
    rank, size = _rank_and_size(env, "RANK", "WORLD_SIZE", "torchrun-style variables")
    one_host = _local_size_says_one_host(env, "LOCAL_WORLD_SIZE", size, "torchrun-style variables")
    names = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
    return Placement("torchrun", _said(env, names), rank, size, None, one_host, env.get("TORCHELASTIC_RUN_ID"))


_MPI_KINDS = (
    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE"),
    ("PMI_RANK", "PMI_SIZE", "MPI_LOCALNRANKS"),
)


def mpi(env):
    """MPI launchers: Open MPI's ``OMPI_COMM_WORLD_RANK`` / ``_SIZE`` / ``_LOCAL_SIZE``, else MPICH / Hydra's
    ``PMI_RANK`` / ``PMI_SIZE`` / ``MPI_LOCALNRANKS``."""
    for rank_name, size_name, local_name in _MPI_KINDS:
        if rank_name in env or size_name in env:
            if rank_name not in env or size_name not in env:
                lack, have = (size_name, rank_name) if rank_name in env else (rank_name, size_name)
                raise RankTableError(f"MPI launcher variables: {lack} is not set next to {have}; both must be set")
            rank, size = _rank_and_size(env, rank_name, size_name, "MPI launcher variables")
            one_host = _local_size_says_one_host(env, local_name, size, "MPI launcher variables")
            return Placement("mpi", _said(env, (rank_name, size_name, local_name)), rank, size, None, one_host)
    return None


def _slurm_order(nodes, counts, env):
    """The node of every rank under the step's task distribution: block fills each node in turn; cyclic gives one
    task to each node in turn; plane gives each node in turn a block of up to ``SLURM_DIST_PLANESIZE`` consecutive
    tasks (``plane=N`` may also carry the size). None for a distribution the variables cannot place (arbitrary)."""
    distribution = env.get("SLURM_DISTRIBUTION") or "block"
    kind = distribution.split(":")[0].split(",")[0]
    if kind == "block":
        return [n for n, c in zip(nodes, counts) for _ in range(c)]
    if kind == "cyclic":
        return _round_robin(nodes, counts, 1)
    if kind.split("=")[0] == "plane":
        name, text = ("SLURM_DISTRIBUTION", kind.split("=", 1)[1]) if "=" in kind else ("SLURM_DIST_PLANESIZE", None)
        if text is None:
            if name not in env:
                raise RankTableError(
                    "Slurm: SLURM_DISTRIBUTION='plane' needs SLURM_DIST_PLANESIZE (the tasks each node gets in turn); "
                    "it is not set"
                )
            text = env[name]
        if not (text.isascii() and text.isdigit() and 0 < int(text) <= MAX_RANKS):
            raise RankTableError(
                f"Slurm: the plane size {shortened(text)} (from {name}) must be a whole number from 1 to {MAX_RANKS}"
            )
        return _round_robin(nodes, counts, int(text))
    return None


def _round_robin(nodes, counts, block):
    left, order = list(counts), []
    while any(left):
        for i, node in enumerate(nodes):
            taken = min(block, left[i])
            order.extend([node] * taken)
            left[i] -= taken
    return order


def slurm(env):
    """A task started by ``srun`` (``SLURM_STEP_ID`` set: a batch script's own process is not a rank):
    ``SLURM_PROCID``, ``SLURM_STEP_NUM_TASKS`` (else ``SLURM_NTASKS``), ``SLURM_STEP_NODELIST`` (else
    ``SLURM_JOB_NODELIST``), ``SLURM_STEP_TASKS_PER_NODE`` (else ``SLURM_TASKS_PER_NODE``), ``SLURM_DISTRIBUTION``
    (block, cyclic or plane across nodes, with ``SLURM_DIST_PLANESIZE``), checked against ``SLURM_NODEID`` and
    ``SLURM_LOCALID``."""
    if "SLURM_PROCID" not in env or "SLURM_STEP_ID" not in env:
        return None
    size_name = "SLURM_STEP_NUM_TASKS" if "SLURM_STEP_NUM_TASKS" in env else "SLURM_NTASKS"
    if size_name not in env:
        raise RankTableError(
            "Slurm: SLURM_PROCID is set but neither SLURM_STEP_NUM_TASKS nor SLURM_NTASKS; a task srun started needs "
            "one of them (the number of tasks)"
        )
    rank, size = _rank_and_size(env, "SLURM_PROCID", size_name, "Slurm")
    node_name = next((n for n in ("SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST") if n in env), None)
    count_name = next((n for n in ("SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE") if n in env), None)
    used = (
        "SLURM_PROCID",
        size_name,
        node_name,
        count_name,
        "SLURM_NODEID",
        "SLURM_LOCALID",
        "SLURM_DISTRIBUTION",
        "SLURM_DIST_PLANESIZE",
    )
    said = _said(env, [n for n in used if n])
    job_id = env.get("SLURM_JOB_ID")
    if node_name is None or count_name is None:
        if size == 1:
            return Placement("slurm", said, rank, size, None, True, job_id)
        raise RankTableError(
            f"Slurm: a step of {size} tasks needs its node list and tasks per node (SLURM_STEP_NODELIST and "
            f"SLURM_STEP_TASKS_PER_NODE, or the job's); set: {', '.join(said)}"
        )
    nodes = hostlist.expand_nodes(env[node_name], node_name)
    counts = hostlist.expand_counts(env[count_name], count_name)
    if len(nodes) != len(counts) or sum(counts) != size:
        raise RankTableError(
            f"Slurm: {node_name} names {len(nodes)} nodes and {count_name} gives {len(counts)} counts adding up to "
            f"{sum(counts)}, for {size_name}={size}: they must describe the same nodes and tasks"
        )
    order = _slurm_order(nodes, counts, env)
    if order is None:
        if len(nodes) == 1:
            order = nodes * size
        else:
            raise NotAvailableError(
                f"Slurm: SLURM_DISTRIBUTION={shortened(env['SLURM_DISTRIBUTION'])} does not say which node runs each "
                "task; run the step with --distribution=block, cyclic or plane=<size>"
            )
    _check_slurm_node(env, nodes, order, rank)
    return Placement("slurm", said, rank, size, tuple(order), len(nodes) == 1, job_id)


def _check_slurm_node(env, nodes, order, rank):
    node = nodes.index(order[rank])
    local = order[:rank].count(order[rank])
    for name, expected in (("SLURM_NODEID", node), ("SLURM_LOCALID", local)):
        if name in env and env_int(env, name, 0, MAX_RANKS) != expected:
            raise RankTableError(
                f"Slurm: {name}={shortened(env[name])}, but task {rank} of the step runs on node {order[rank]} "
                f"(node {node}) as its local task {local}; the step's variables disagree"
            )


_ADDRESS = re.compile(r"^(\[[0-9a-fA-F:.]+\]|[^\s:\[\]]+):([0-9]{1,5})$")


def tf_config(env):
    """Kubeflow TFJob / Volcano's tensorflow plugin: ``TF_CONFIG``'s chief tasks, then its workers, are the ranks
    (as TensorFlow's multi-worker strategies number them). A ``TF_CONFIG`` without a cluster, or with parameter
    servers (TensorFlow's own parameter-server training), describes no collective world; an evaluator is no
    rank."""
    if "TF_CONFIG" not in env:
        return None
    text = env["TF_CONFIG"]
    try:
        config = json.loads(text)
    except (ValueError, RecursionError):
        raise RankTableError(f"TF_CONFIG has invalid value {shortened(text)}: must be JSON") from None
    if not isinstance(config, dict):
        raise RankTableError(f"TF_CONFIG has invalid value {shortened(text)}: must be a JSON object")
    cluster, task = config.get("cluster") or {}, config.get("task", {})
    if isinstance(cluster, dict) and (not cluster or "ps" in cluster):
        return None  # one process, or TensorFlow's own parameter-server training: no collective world
    if not isinstance(cluster, dict) or not isinstance(task, dict):
        raise RankTableError(
            f'TF_CONFIG has invalid value {shortened(text)}: must be {{"cluster": {{"worker": ["host:port", ...]}}, '
            '"task": {"type": "worker", "index": 0}}'
        )
    members = []
    for kind in ("chief", "master", "worker"):
        addresses = cluster.get(kind, [])
        if not isinstance(addresses, list) or not all(isinstance(a, str) and _ADDRESS.match(a) for a in addresses):
            raise RankTableError(
                f'TF_CONFIG: cluster "{kind}" must be a list of "host:port" strings, not {shortened(addresses)}'
            )
        members.extend((kind, i, a) for i, a in enumerate(addresses))
    kind, index = task.get("type"), task.get("index", 0)
    if kind not in ("chief", "master", "worker"):
        raise NotAvailableError(
            f"TF_CONFIG: this process's task is {shortened(kind)}; a rank's task must be chief, master or worker "
            "(parameter servers and evaluators have no rank in a collective job)"
        )
    if not isinstance(index, int) or isinstance(index, bool):
        raise RankTableError(f"TF_CONFIG: task index must be an integer, not {shortened(index)}")
    ranks = [(k, i) for k, i, _ in members]
    if (kind, index) not in ranks:
        listed = sum(1 for k, _ in ranks if k == kind)
        raise RankTableError(
            f'TF_CONFIG: task {kind} {shortened(index)} is not in the cluster, whose "{kind}" list has {listed} entries'
        )
    if len(members) > MAX_RANKS:
        raise RankTableError(f"TF_CONFIG: {len(members)} tasks, more than {MAX_RANKS} ranks")
    hosts = tuple(_ADDRESS.match(a).group(1).strip("[]") for _, _, a in members)
    one_host = len(set(hosts)) == 1 or all(h in LOCAL_NAMES for h in hosts)
    said = (f"TF_CONFIG task {kind} {index} of {len(members)} chief and worker tasks",)
    return Placement("tf_config", said, ranks.index((kind, index)), len(members), hosts, one_host)


_VC_HOSTS = re.compile(r"^VC_(.+)_HOSTS$")


def volcano(env, hostname=None):
    """Volcano: ``VC_TASK_INDEX`` (or ``VK_TASK_INDEX``) is this pod's index in its task; ``VC_<TASK>_HOSTS`` lists
    each task's pods. One rank per pod: a task named master or chief first, then the others by name, as Volcano's
    hcclrank plugin numbers them. This pod's task is the one whose host list holds its host name."""
    index_name = "VC_TASK_INDEX" if "VC_TASK_INDEX" in env else "VK_TASK_INDEX" if "VK_TASK_INDEX" in env else None
    if index_name is None:
        return None
    tasks = {m.group(1): env[n] for n in env if (m := _VC_HOSTS.match(n))}
    if not tasks:
        raise RankTableError(f"Volcano: {index_name} is set but no VC_<TASK>_HOSTS variable lists the job's pods")
    order = sorted(tasks, key=lambda t: (t.lower() not in ("master", "chief"), t))
    pods = {t: [h.strip() for h in tasks[t].split(",") if h.strip()] for t in order}
    index = env_int(env, index_name, 0, MAX_RANKS - 1)
    hostname = hostname or env.get("HOSTNAME") or socket.gethostname()
    mine = [t for t in order if any(p.split(".")[0] == hostname.split(".")[0] for p in pods[t])]
    if len(order) == 1:
        mine = order
    if len(mine) != 1:
        raise RankTableError(
            f"Volcano: cannot tell this pod's task: its host name {shortened(hostname)} is in "
            f"{len(mine)} of the task host lists ({', '.join('VC_' + t + '_HOSTS' for t in order)})"
        )
    task = mine[0]
    if index >= len(pods[task]):
        raise RankTableError(
            f"Volcano: {index_name}={shortened(env[index_name])} but VC_{task}_HOSTS lists {len(pods[task])} pods; "
            f"it must be less than {len(pods[task])}"
        )
    hosts = tuple(p for t in order for p in pods[t])
    rank = sum(len(pods[t]) for t in order[: order.index(task)]) + index
    said = _said(env, (index_name, f"VC_{task}_HOSTS"))
    return Placement("volcano", said, rank, len(hosts), hosts, len(set(hosts)) == 1)


READERS = (torchrun, mpi, slurm, tf_config, volcano)
SOURCES = tuple(read.__name__ for read in READERS)  # each reader is named after the source it reads


def placements(env):
    """Every scheduler source the environment holds, innermost launcher first.

    Args:
      env: environment variables with empty values removed.
    Returns:
      A list of ``Placement``.
    Raises:
      RankTableError: a source's variables are malformed or contradict each other.
      NotAvailableError: a source describes something that is not a rank (a parameter server) or does not say where
        the ranks run.
    """
    return [p for p in (read(env) for read in READERS) if p is not None]
