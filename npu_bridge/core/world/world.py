"""The collective world of this process: how many ranks the job has, which one this process is, where the
others run.

As on Ascend, every rank is its own OS process driving one (here simulated) device. The world is read from
the environment, in this order:

1. ``RANK_TABLE_FILE`` (source "rank_table"): the rank table (``npu_bridge.core.world.rank_table``) lists every rank.
   ``RANK_SIZE``, when set, must equal the number of ranks in the table, except that ``RANK_SIZE=1`` next to a
   larger table (a 1p wrapper that exports the 8p table, as zoo scripts do) is a one-rank job that does not use
   the table, said once; Ascend's would start HCCL on the table and run until a collective waited for the ranks
   that never start. This process's rank is chosen by
   ``RANK_ID``; else, for a template 2 table, by ``POD_NAME`` (narrowed by device id when the pod has several
   devices); else by the device id when it is set explicitly and appears exactly once in the table; a table
   with a single rank needs none of them. ``RANK_ID`` and ``POD_NAME`` must agree when both are set.
2. ``CM_*`` variables (source "cm"; upstream's rank-table-free cluster setup): ``CM_CHIEF_IP``,
   ``CM_CHIEF_PORT`` (0-65520), ``CM_CHIEF_DEVICE`` and ``CM_WORKER_SIZE`` (1-32768, the number of ranks) are
   required, ``CM_WORKER_IP`` is optional. ``RANK_SIZE`` together with ``CM_WORKER_SIZE`` is an error, and
   so is any ``CM_*`` variable together with ``RANK_TABLE_FILE``. Upstream lets the chief hand out rank
   ids at start-up; here no process talks to another before the collectives start, so the rank id is
   known from the environment: ``RANK_ID`` when set, else 0 when this process runs on the chief's device
   (device id set explicitly and equal to ``CM_CHIEF_DEVICE``). The chief is rank 0; a ``RANK_ID`` that
   contradicts the device is an error. A worker other than the chief must set its device id (the chief's
   defaults to ``CM_CHIEF_DEVICE``). All ranks must run on the chief's machine (``CM_WORKER_IP`` unset or
   equal to ``CM_CHIEF_IP``), since nothing else tells where the other workers are; a different
   ``CM_WORKER_IP`` raises ``NotAvailableError``: across machines, one npu-run per machine meets the others at the
   chief (``world.rendezvous``) and gives its ranks a rank table.
   ``World.chief_address`` is ``CM_CHIEF_IP:CM_CHIEF_PORT``.
3. ``RANK_SIZE`` / ``RANK_ID`` (source "env"): integers with 0 <= RANK_ID < RANK_SIZE <= 32768. Unset
   ``RANK_SIZE`` means 1; ``RANK_ID`` may be left unset only when ``RANK_SIZE`` is 1. All ranks run on this
   machine (server "127.0.0.1", host 127.0.0.1), so the local rank is the rank.
4. A job scheduler's or launcher's variables (``scheduler_env``): torchrun-style ``RANK`` / ``WORLD_SIZE``, MPI
   launchers, Slurm ``srun`` tasks, ``TF_CONFIG``, Volcano; the innermost launcher wins (in that order) and
   gives the source its name ("torchrun", "mpi", "slurm", "tf_config", "volcano"). A world on one machine runs
   on 127.0.0.1 like the "env" world; across machines the source must say where every rank runs (Slurm's node
   list, ``TF_CONFIG``'s addresses, Volcano's host lists); torchrun and MPI ranks that know only ``MASTER_ADDR`` /
   ``MASTER_PORT`` meet at rank 0 there and learn every rank's host (``rank_rendezvous``, with the job secret of
   ``NPU_RUN_JOB_SECRET``); else ``NotAvailableError`` names what to use instead.
5. None of the above (source "single"): a world of one rank, rank 0 on this machine. (Upstream sets up no
   HCCL at all in this case, so its queries fail; here they answer 1 / 0, which is what scripts that shard
   data by ``get_rank_size()`` expect.)

Every scheduler source present is checked against the world chosen: one that describes a world of the same size
must give the same rank (a ``RANK_ID`` that contradicts ``SLURM_PROCID`` is an error naming both). A source of
another size is an outer launcher (one ``srun`` task per machine that starts the machine's ranks) and is not
checked. Ranks started by npu-run (``LAUNCHER_VARIABLE`` set) take their world from npu-run alone.
A rank table whose ``status`` is "initializing" is read again until the scheduler completes it, for up to
``HCCL_CONNECT_TIMEOUT`` seconds.

An empty variable counts as unset. The device id is resolved by ``npu_bridge.core.device.device_id`` (session_device_id
> ASCEND_DEVICE_ID > DEVICE_ID); when none is set it is the rank table's device of this rank, else the
local rank in a multi-rank "env" world (so ranks do not share a device, and their artifact paths differ;
logged as a warning), else 0. An explicit device id is not checked against the rank table's: on Ascend
ASCEND_DEVICE_ID is a logical id and the table's a physical one, so they may legitimately differ.

Local ranks are the ranks with this rank's ``server_id``; ``local_rank_id`` is this rank's position among
them in rank order.

For the collective runtime (one ``tf.distribute.Server`` per rank): ``World.ranks[i].host`` is where rank
``i``'s process can be reached (see ``npu_bridge.core.world.rank_table`` for the rank table rule; "127.0.0.1" in the
"env" and "single" worlds; ``CM_CHIEF_IP`` in the "cm" world). Ports are not part of the world: the
collective layer chooses them. A base port plus the rank id never collides; a base port plus the local
rank id would when two servers of a table are the same machine (e.g. server ids "127.0.0.1" and
"localhost" in a test table).
"""

import dataclasses
import functools
import os
import threading
from typing import Optional

from npu_bridge.core.device import device_id
from npu_bridge.core.runtime import log, system
from npu_bridge.core.runtime.errors import NotAvailableError, RankTableError, shortened, shortened_text
from npu_bridge.core.world import rank_rendezvous, rank_table, scheduler_env, timeouts
from npu_bridge.core.world.rank_table import LOOPBACK, RankInfo

MAX_RANKS = 32768
CM_VARIABLES = ("CM_CHIEF_IP", "CM_CHIEF_PORT", "CM_CHIEF_DEVICE", "CM_WORKER_IP", "CM_WORKER_SIZE")
CM_REQUIRED = ("CM_CHIEF_IP", "CM_CHIEF_PORT", "CM_CHIEF_DEVICE", "CM_WORKER_SIZE")
CM_MAX_PORT = 65520
LAUNCHER_VARIABLE = "NPU_RUN_NETWORK"  # npu-run sets it for every rank it starts


@dataclasses.dataclass(frozen=True)
class World:
    """Who is in the job and who this process is.

    Attributes:
      rank_size: number of ranks (processes) in the job.
      rank_id: this process's rank, 0 <= rank_id < rank_size.
      device_id: this process's device id.
      local_rank_size: number of ranks on this process's server.
      local_rank_id: this process's position among the ranks on its server (in rank order).
      server_id: this process's server; ``ranks[i].server_id == server_id`` means rank i is local.
      ranks: tuple of ``rank_table.RankInfo``, one per rank, ``ranks[i].rank_id == i``.
      source: where the world came from: "rank_table", "cm", "env", a scheduler source ("torchrun", "mpi",
        "slurm", "tf_config", "volcano") or "single".
      source_variables: the "NAME=value" texts a scheduler source read (empty for the other sources).
      rank_table_path: the rank table file (source "rank_table"), else None.
      job_id: ``JOB_ID`` when set, else None.
      pod_name: this rank's pod (template 2 rank table, else ``POD_NAME``), None when unknown.
      chief_address: "ip:port" of the CM chief (source "cm"), or "host:port" of rank 0's rendezvous (torchrun or
        MPI ranks across machines), else None.
      hosts_pending: the ranks' hosts are learned at rank 0's rendezvous, which this world did not join
        (``load_world(meet=False)``): only rank 0's host is known.
    """

    rank_size: int
    rank_id: int
    device_id: int
    local_rank_size: int
    local_rank_id: int
    server_id: str
    ranks: tuple
    source: str
    rank_table_path: Optional[str] = None
    job_id: Optional[str] = None
    pod_name: Optional[str] = None
    chief_address: Optional[str] = None
    source_variables: tuple = ()
    hosts_pending: bool = False

    @property
    def local_rank_ids(self):
        """The world rank ids on this process's server, ascending."""
        return tuple(r.rank_id for r in self.ranks if r.server_id == self.server_id)


def load_world(environ=os.environ, session_device_id=None, meet=True):
    """Reads the world from the environment (rules in the module docstring).

    Args:
      environ: mapping of environment variables to read.
      session_device_id: the ``session_device_id`` option (None or -1: not set).
      meet: join rank 0's rendezvous when the world needs it; False for a tool that only shows the world, which must
        not take a rank's place there (the world is then ``hosts_pending``).
    Returns:
      A ``World``.
    Raises:
      RankTableError: the rank table or a rank variable is malformed, or they disagree.
      DeviceIdError: the device id option or variable is malformed.
      NotAvailableError: CM mode with workers on several machines.
    """
    env = {k: v for k, v in environ.items() if v != ""}
    table_path = env.get("RANK_TABLE_FILE")
    cm_set = [name for name in CM_VARIABLES if name in env]
    if table_path is not None and cm_set:
        raise RankTableError(
            f"RANK_TABLE_FILE={shortened(table_path)} and {_assignments(env, cm_set)} both describe the world; "
            "set only one of them (CM_* is upstream's rank-table-free setup)"
        )
    device, device_source = device_id.resolve_with_source(session_device_id, env)
    found = [] if LAUNCHER_VARIABLE in env else scheduler_env.placements(env)
    if table_path is not None:
        world = _rank_table_world(env, table_path, device, device_source)
    elif cm_set:
        world = _cm_world(env, cm_set, device, device_source)
    elif "RANK_SIZE" in env or "RANK_ID" in env:
        world = _env_world(env, device, device_source)
    elif found:
        _check_schedulers_agree(found[0].rank_id, found[0].rank_size, found[0].describe(), found[1:])
        world = _scheduler_world(env, found, device, device_source, meet)
    else:
        world = _world([RankInfo(0, LOOPBACK, device, None, LOOPBACK)], 0, device, "single", env)
    if world.source not in scheduler_env.SOURCES:  # a scheduler world checked its sources as it formed
        _check_schedulers_agree(world.rank_id, world.rank_size, f"the {world.source} world", found)
    log.logger.debug("collective world: %s", world)
    return world


def _check_schedulers_agree(rank, size, chosen, found):
    """Refuses a scheduler source that describes a world of ``size`` ranks with another rank for this process."""
    for placement in found:
        if placement.rank_size == size and placement.rank_id != rank:
            raise RankTableError(
                f"{placement.describe()} makes this process rank {placement.rank_id} of {placement.rank_size}, "
                f"but {chosen} makes it rank {rank}: two descriptions of the job disagree; unset the "
                "variables that are wrong (often a RANK_ID exported by hand next to the scheduler's own)"
            )


def _scheduler_world(env, found, device, device_source, meet):
    placement = found[0]
    size, rank = placement.rank_size, placement.rank_id
    # an MPI launcher under srun (--mpi=pmi2) does not say where the ranks run; Slurm's node list, of the same
    # world, does
    same = [p for p in found if p.rank_size == size and (p.one_host or p.hosts is not None)]
    chief = None  # rank 0's rendezvous, for ranks that know only MASTER_ADDR
    if placement.one_host or (same and same[0].one_host):
        hosts = (LOOPBACK,) * size
    elif same:
        hosts = same[0].hosts
    elif (chief := rank_rendezvous.chief_of(env, placement)) is not None:
        if meet:
            hosts = rank_rendezvous.hosts_at_chief(env, placement, chief)
        else:
            hosts = (chief.host,) + ("",) * (size - 1)
    else:
        raise NotAvailableError(
            f"{placement.describe()} puts the {size} ranks on several machines without saying where each runs, "
            "which a rank needs to find the others; set MASTER_ADDR and MASTER_PORT (rank 0's host and a port "
            "there) and a job secret in NPU_RUN_JOB_SECRET for every rank, so that the ranks meet at rank 0; or "
            "start one npu-run per machine (npu-run -n N --job-id J --job-secret FILE), use a rank table (npu-run "
            "--rank-table on every machine), or start the job with srun, whose node list says where each rank runs"
        )
    local = [i for i in range(size) if hosts[i] == hosts[rank]]
    if device_source == device_id.DEFAULT and len(local) > 1:
        device = _local_rank_as_device(rank, size, local.index(rank))
    ranks = [RankInfo(i, hosts[i], device if i == rank else None, None, hosts[i]) for i in range(size)]
    job_id = env.get("JOB_ID") or placement.job_id
    return dataclasses.replace(
        _world(ranks, rank, device, placement.source, env),
        job_id=job_id,
        source_variables=placement.variables,
        chief_address=f"{chief.host}:{chief.port}" if chief is not None else None,
        hosts_pending=chief is not None and not meet,
    )


_cache_lock = threading.Lock()
_cache = {}


def environment_world(session_device_id=None, environ=None):
    """The world the environment describes, read and validated once for each environment.

    The session bridge calls it when a session is created (so a bad rank table fails then rather than at the first
    HCCL query), ``npu_resource_init`` and ``initialize_system`` before they start the system, and the collectives
    before initialization; it reads the environment and the rank table again only when a variable, the
    ``session_device_id`` or the rank table file changed.

    Args:
      session_device_id: the ``session_device_id`` option (None or -1: not set).
      environ: mapping of environment variables to read (default: ``os.environ``).
    Returns:
      The ``World`` the environment describes.
    Raises:
      RankTableError, DeviceIdError, NotAvailableError: as ``load_world``.
    """
    environ = os.environ if environ is None else environ
    key = (tuple(sorted(environ.items())), session_device_id, _file_stamp(environ.get("RANK_TABLE_FILE")))
    with _cache_lock:
        if _cache.get("key") == key:
            return _cache["world"]
    world = load_world(environ, session_device_id)
    with _cache_lock:
        _cache.update(key=key, world=world)
    return world


def _file_stamp(path):
    if not path:
        return None
    try:
        status = os.stat(path)
    except OSError:
        return None  # load_world reports it
    return (status.st_ino, status.st_size, status.st_mtime_ns)


def rank_id_from_environment(environ=os.environ):
    """``RANK_ID`` where upstream reads it directly (``int(os.getenv("RANK_ID", "0"))``: npu_hooks_append,
    NPUEstimator's broadcast hook), validated as the world validates it.

    Args:
      environ: mapping of environment variables to read.
    Returns:
      The rank id; 0 when RANK_ID is unset or empty, or labels the device of a RANK_SIZE=1 job.
    Raises:
      RankTableError: RANK_ID is not an integer in [0, 32767], or not below a valid RANK_SIZE other than 1.
    """
    env = {k: v for k, v in environ.items() if v != ""}
    if "RANK_ID" not in env:
        return 0
    rank = scheduler_env.env_int(env, "RANK_ID", 0, MAX_RANKS - 1)
    if _single_rank_label(env):
        return 0
    if "RANK_SIZE" in env and rank >= scheduler_env.env_int(env, "RANK_SIZE", 1, MAX_RANKS):
        raise RankTableError(
            f"RANK_ID={shortened(env['RANK_ID'])} must be less than RANK_SIZE={shortened(env['RANK_SIZE'])}"
        )
    return rank


def once_per_initialization(api_name):
    """Decorator: caches a factory's result for one initialization of the NPU system.

    The wrapped function requires an initialized system, and calls the factory again after a shutdown and
    re-initialization (a new ``system.state().init_count``), so world, groups and split strategies are
    re-read or reset then, as on Ascend.

    Args:
      api_name: named in the error when the system is not initialized.
    Returns:
      A decorator for a function without arguments.
    """

    def decorator(factory):
        lock = threading.Lock()
        cache = {}

        @functools.wraps(factory)
        def get():
            system.require_initialized(api_name)
            count = system.state().init_count
            with lock:
                if cache.get("init_count") != count:
                    cache["value"] = factory()
                    cache["init_count"] = count
                return cache["value"]

        return get

    return decorator


@once_per_initialization("current_world")
def current_world():
    """Returns the world of this process, loaded once per initialization of the NPU system.

    Reads ``os.environ`` and the ``session_device_id`` init option.

    Returns:
      A ``World``.
    Raises:
      NotInitializedError: the system is not initialized.
      RankTableError, DeviceIdError, NotAvailableError: as ``load_world``.
    """
    return environment_world(system.state().init_options.get("session_device_id"))


def _rank_table_world(env, path, device, device_source):
    table = rank_table.load_completed(path, timeouts.connect_timeout(env))
    size = table.rank_size
    if "RANK_SIZE" in env:
        rank_size = scheduler_env.env_int(env, "RANK_SIZE", 1, MAX_RANKS)
        if rank_size == 1 and size > 1:
            log.warn_once(
                ("world_one_rank_with_a_table", path),
                "RANK_SIZE=1 with the rank table %s of %d ranks: a one-rank job; it runs as rank 0 of 1 without "
                "the table (on Ascend this process would be a rank of the table's world whose other ranks never "
                "start: a collective would wait for them)",
                shortened_text(path),
                size,
            )
            return _env_world(env, device, device_source)
        if rank_size != size:
            raise RankTableError(
                f"RANK_SIZE={shortened(env['RANK_SIZE'])} disagrees with the rank table {shortened_text(path)}, "
                f"which has {size} ranks; "
                f"set RANK_SIZE={size} or unset it"
            )
    rank = _rank_in_table(env, table, device, device_source)
    me = table.ranks[rank]
    if device_source == device_id.DEFAULT:
        device = me.device_id
    return _world(table.ranks, rank, device, "rank_table", env, rank_table_path=path, pod_name=me.pod_name)


def _rank_in_table(env, table, device, device_source):
    size, path = table.rank_size, table.path
    pod = env.get("POD_NAME")
    pods_known = table.template == 2 and any(r.pod_name for r in table.ranks)
    if size == 1 and _single_rank_label(env):
        scheduler_env.env_int(env, "RANK_ID", 0, MAX_RANKS - 1)  # still a number in range
        return 0
    if "RANK_ID" in env:
        rank = scheduler_env.env_int(env, "RANK_ID", 0, MAX_RANKS - 1)
        if rank >= size:
            raise RankTableError(
                f"RANK_ID={shortened(env['RANK_ID'])} is not a rank of the rank table {shortened_text(path)}, "
                f"which has ranks 0..{size - 1}"
            )
        if pod is not None and pods_known and table.ranks[rank].pod_name != pod:
            raise RankTableError(
                f"RANK_ID={shortened(env['RANK_ID'])} and POD_NAME={shortened(pod)} disagree: in the rank table "
                f"{shortened_text(path)} rank {rank} "
                f"belongs to pod {shortened(table.ranks[rank].pod_name)}"
            )
        return rank
    explicit = device_source != device_id.DEFAULT
    if pod is not None and pods_known:
        in_pod = [r for r in table.ranks if r.pod_name == pod]
        if not in_pod:
            pods = sorted({r.pod_name for r in table.ranks if r.pod_name})
            raise RankTableError(
                f"POD_NAME={shortened(pod)} names no pod of the rank table {shortened_text(path)} (pods: {pods})"
            )
        if len(in_pod) == 1:
            return in_pod[0].rank_id
        on_device = [r for r in in_pod if explicit and r.device_id == device]
        if len(on_device) == 1:
            return on_device[0].rank_id
        raise RankTableError(
            f"POD_NAME={shortened(pod)} has ranks {[r.rank_id for r in in_pod]} "
            f"(devices {[r.device_id for r in in_pod]}) in the rank table {shortened_text(path)}; set RANK_ID, or "
            "ASCEND_DEVICE_ID to one of those devices, to pick one"
        )
    if size == 1:
        return 0
    on_device = [r.rank_id for r in table.ranks if r.device_id == device]
    if explicit and len(on_device) == 1:
        return on_device[0]
    ways = "set RANK_ID to this process's rank_id in the table"
    if pods_known:
        ways += ", or POD_NAME to its pod_name"
    if explicit:
        found = f"matches ranks {on_device}" if on_device else "matches no rank"
        detail = f"the device id {device} (from {device_source}) {found}"
    else:
        detail = "no device id is set either (ASCEND_DEVICE_ID would select the rank using that device)"
    raise RankTableError(
        f"the rank table {shortened_text(path)} has {size} ranks and nothing says which one this process is: "
        f"{ways}; {detail}"
    )


def check_size_variables(environ):
    """Refuses ``RANK_SIZE`` together with ``CM_WORKER_SIZE`` (both give the number of ranks).

    Args:
      environ: mapping of environment variables (empty values count as unset).
    Raises:
      RankTableError: both are set; the message keeps upstream's words.
    """
    rank_size, worker_size = environ.get("RANK_SIZE") or None, environ.get("CM_WORKER_SIZE") or None
    if rank_size is not None and worker_size is not None:
        raise RankTableError(
            f"RANK_SIZE and CM_WORK_SIZE cannot be configured at the same time (RANK_SIZE={shortened(rank_size)}, "
            f"CM_WORKER_SIZE={shortened(worker_size)}); in CM mode the number of ranks is CM_WORKER_SIZE, so unset "
            "RANK_SIZE"
        )


def _cm_world(env, cm_set, device, device_source):
    check_size_variables(env)
    missing = [name for name in CM_REQUIRED if name not in env]
    if missing:
        raise RankTableError(
            f"CM mode ({_assignments(env, cm_set)}) also needs {', '.join(missing)}; CM mode requires "
            f"{', '.join(CM_REQUIRED)} (CM_WORKER_IP is optional)"
        )
    chief_ip = scheduler_env.env_ip(env, "CM_CHIEF_IP")
    port = scheduler_env.env_int(env, "CM_CHIEF_PORT", 0, CM_MAX_PORT)
    chief_device = scheduler_env.env_int(env, "CM_CHIEF_DEVICE", 0, None)
    size = scheduler_env.env_int(env, "CM_WORKER_SIZE", 1, MAX_RANKS)
    if "CM_WORKER_IP" in env and scheduler_env.env_ip(env, "CM_WORKER_IP") != chief_ip:
        raise NotAvailableError(
            f"CM mode with workers on several machines (CM_WORKER_IP={shortened(env['CM_WORKER_IP'])}, "
            f"CM_CHIEF_IP={shortened(chief_ip)}) needs the chief's rendezvous, which npu-run serves: start one "
            "npu-run per machine with these variables (npu-run -n N --job-id J --job-secret FILE -- ...); a process "
            "started by hand must have the whole job on the chief's machine (CM_WORKER_IP equal to CM_CHIEF_IP)"
        )
    explicit = device_source != device_id.DEFAULT
    on_chief_device = explicit and device == chief_device
    if "RANK_ID" in env:
        rank = scheduler_env.env_int(env, "RANK_ID", 0, MAX_RANKS - 1)
        if rank >= size:
            raise RankTableError(
                f"RANK_ID={shortened(env['RANK_ID'])} must be less than "
                f"CM_WORKER_SIZE={shortened(env['CM_WORKER_SIZE'])}"
            )
        if explicit and (rank == 0) != on_chief_device:
            raise RankTableError(
                f"RANK_ID={shortened(env['RANK_ID'])} contradicts the device id {device} (from {device_source}): "
                "the chief "
                f"runs on CM_CHIEF_DEVICE={chief_device} and is rank 0, every other worker on another device"
            )
    elif on_chief_device:
        rank = 0
    else:
        raise RankTableError(
            "CM mode: cannot tell this worker's rank; set RANK_ID (0..{}; 0 is the chief, the process on "
            "CM_CHIEF_DEVICE={})".format(size - 1, chief_device)
        )
    if not explicit:
        if rank != 0:
            raise RankTableError(
                f"CM mode: worker rank {rank} has no device id; set ASCEND_DEVICE_ID (or DEVICE_ID), since CM "
                "workers are told apart by their device"
            )
        device = chief_device
    ranks = [
        RankInfo(i, chief_ip, device if i == rank else (chief_device if i == 0 else None), None, chief_ip)
        for i in range(size)
    ]
    return _world(ranks, rank, device, "cm", env, chief_address=f"{_bracketed(chief_ip)}:{port}")


def _single_rank_label(env):
    """True when the environment says RANK_SIZE=1 and a RANK_ID other than 0: a one-device job whose scripts label
    the device (the zoo's 1p wrappers export RANK_ID=1 next to RANK_SIZE=1; Ascend runs that one device without
    HCCL). Such a job runs as rank 0 of 1; saying so once."""
    if env.get("RANK_SIZE", "").strip() != "1" or env.get("RANK_ID", "0").strip() in ("0", ""):
        return False
    log.warn_once(
        ("world_single_rank_label", env["RANK_ID"]),
        "RANK_SIZE=1 with RANK_ID=%s: a one-rank job; it runs as rank 0 of 1",
        shortened(env["RANK_ID"]),
    )
    return True


def _env_world(env, device, device_source):
    size = scheduler_env.env_int(env, "RANK_SIZE", 1, MAX_RANKS) if "RANK_SIZE" in env else 1
    if _single_rank_label(env):
        scheduler_env.env_int(env, "RANK_ID", 0, MAX_RANKS - 1)  # still a number in range
        rank = 0
    elif "RANK_ID" in env:
        rank = scheduler_env.env_int(env, "RANK_ID", 0, MAX_RANKS - 1)
        if rank >= size:
            size_text = f"RANK_SIZE={shortened(env['RANK_SIZE'])}" if "RANK_SIZE" in env else "RANK_SIZE (unset, so 1)"
            raise RankTableError(f"RANK_ID={shortened(env['RANK_ID'])} must be less than {size_text}")
    elif size == 1:
        rank = 0
    else:
        raise RankTableError(
            f"RANK_SIZE={shortened(env['RANK_SIZE'])} but RANK_ID is not set; set RANK_ID to this process's rank, "
            f"0..{size - 1}"
        )
    if device_source == device_id.DEFAULT and size > 1:
        device = _local_rank_as_device(rank, size, rank)
    ranks = [RankInfo(i, LOOPBACK, device if i == rank else None, None, LOOPBACK) for i in range(size)]
    return _world(ranks, rank, device, "env", env)


def _local_rank_as_device(rank, size, local_rank):
    """The device of a rank that set none: its local rank, so ranks on one machine do not share a device."""
    log.warn_once(
        ("world_default_device", rank),
        "rank %d of %d has no device id (ASCEND_DEVICE_ID / DEVICE_ID unset); using device %d, its "
        "local rank, so ranks do not share a device",
        rank,
        size,
        local_rank,
    )
    return local_rank


def _world(ranks, rank, device, source, env, rank_table_path=None, pod_name=None, chief_address=None):
    ranks = tuple(ranks)
    server_id = ranks[rank].server_id
    local = [r.rank_id for r in ranks if r.server_id == server_id]
    return World(
        rank_size=len(ranks),
        rank_id=rank,
        device_id=device,
        local_rank_size=len(local),
        local_rank_id=local.index(rank),
        server_id=server_id,
        ranks=ranks,
        source=source,
        rank_table_path=rank_table_path,
        job_id=env.get("JOB_ID"),
        pod_name=pod_name or env.get("POD_NAME"),
        chief_address=chief_address,
    )


def _bracketed(ip):
    return f"[{ip}]" if ":" in ip else ip


def _assignments(env, names):
    return ", ".join(f"{name}={shortened(env[name])}" for name in names)
