"""Ranks a scheduler started one per process on several machines learn where the others run, at rank 0.

torchrun (and Kubeflow's PyTorchJob) give each rank ``RANK``, ``WORLD_SIZE`` and the chief's ``MASTER_ADDR`` /
``MASTER_PORT``, and ``mpirun -x MASTER_ADDR -x MASTER_PORT`` does the same for MPI ranks, but nothing says where
the other ranks run. Rank 0 listens on ``MASTER_PORT`` (or the port after it when torchrun's own store holds
``MASTER_PORT``: ``TORCHELASTIC_USE_AGENT_STORE=True``); every other rank registers at ``MASTER_ADDR`` and proves the
job secret (the file ``NPU_RUN_JOB_SECRET`` names, the same for every rank, as for ``npu-run``). Rank 0 answers
every rank with the host of each rank, in rank order (``rendezvous``, per rank). Without a secret the world is not
formed: anyone who reached the chief's port could otherwise join the job or place a rank.

The rendezvous happens once per process: the answer is kept for the same chief, rank and size.
"""

import threading

from npu_bridge.core.runtime import job_secret, log
from npu_bridge.core.runtime.errors import NotAvailableError, RankTableError
from npu_bridge.core.world import rendezvous, scheduler_env, timeouts

AGENT_STORE_VARIABLE = "TORCHELASTIC_USE_AGENT_STORE"

_lock = threading.Lock()
_met = {}  # (source, host, port, rank, size, job id) -> [its lock, every rank's host once met]


def chief_of(env, placement):
    """The rendezvous of ``placement``'s ranks, or None when the environment names no ``MASTER_ADDR`` / ``MASTER_PORT``.

    Raises:
      RankTableError: ``MASTER_ADDR`` or ``MASTER_PORT`` is malformed, or no port is left after torchrun's.
    """
    address = scheduler_env.master_address(env)
    if address is None:
        return None
    host, port = address
    if env.get(AGENT_STORE_VARIABLE) == "True":  # torchrun's agent serves its own store at MASTER_PORT
        if port == 65535:
            raise RankTableError(
                f"MASTER_PORT=65535 is torchrun's store ({AGENT_STORE_VARIABLE}=True), and the ranks' rendezvous "
                "listens on the port after it: MASTER_PORT must be at most 65534 here (torchrun's --master-port)"
            )
        port += 1
    return rendezvous.Chief(
        placement.source,
        host,
        port,
        placement.rank_id == 0,
        None,
        launchers=placement.rank_size,
        order=placement.rank_id,
        per_rank=True,
    )


def hosts_at_chief(env, placement, chief):
    """Every rank's host, in rank order, as rank 0 (``chief``) collects them.

    Raises:
      NotAvailableError: no job secret is named (``NPU_RUN_JOB_SECRET``).
      LaunchError: the secret file cannot be read or is not private to this user.
      RendezvousError: rank 0 cannot listen, refused this rank, or the ranks did not all come within
        ``HCCL_CONNECT_TIMEOUT``.
    """
    secret_path = env.get(job_secret.VARIABLE)
    if not secret_path:
        raise NotAvailableError(
            f"{placement.describe()} puts the {placement.rank_size} ranks on several machines; they meet at rank 0 "
            f"({chief.host}:{chief.port}) once each proves the job secret, and {job_secret.VARIABLE} names no "
            f"secret file: make one with npu-run --make-secret FILE, copy it to every machine, and set "
            f"{job_secret.VARIABLE}=FILE for every rank (a Kubernetes Secret mounted with subPath)"
        )
    job_id = env.get("JOB_ID") or placement.job_id or f"{chief.host}:{chief.port}"
    key = (chief.source, chief.host, chief.port, chief.order, chief.launchers, job_id)
    with _lock:
        entry = _met.setdefault(key, [threading.Lock(), None])
    with entry[0]:  # one rendezvous per chief and rank, even when several threads ask at once
        if entry[1] is None:
            secret = job_secret.job_key(job_secret.load(secret_path), job_id)
            timeout = timeouts.connect_timeout(env)
            if chief.is_chief:
                machines = rendezvous.serve(chief, secret, 1, timeout, log.logger.info)
            else:
                machines, _ = rendezvous.register(chief, secret, 1, timeout, log.logger.info)
            entry[1] = tuple(host for host, _ in machines)
        return entry[1]
