"""Where one ``npu-run`` per machine meets the others: the chief a launcher's environment names.

Upstream's ``CM_CHIEF_IP`` / ``CM_CHIEF_PORT`` mean a chief that every worker registers with; torchrun-style
launchers (Kubeflow's PyTorchJob: ``MASTER_ADDR`` / ``MASTER_PORT``, ``WORLD_SIZE`` pods, ``RANK`` the pod) name
one too. The launcher at the chief's address serves the rendezvous (``world.rendezvous``); every other one
registers there, proving the job secret, and says where it runs and how many ranks it starts. With the list of
machines that comes back, each launcher writes the same rank table (``scheduler_plan.write_rank_table``) and
starts its share as with ``--rank-table``.
"""

from npu_bridge.core.runtime.errors import LaunchError, RankTableError
from npu_bridge.core.world import scheduler_env, world
from npu_bridge.core.world.rendezvous import Chief


def _ip(env, name):
    try:
        return scheduler_env.env_ip(env, name)
    except RankTableError as e:
        raise LaunchError(str(e)) from None


def _int(env, name, low, high):
    try:
        return scheduler_env.env_int(env, name, low, high)
    except RankTableError as e:
        raise LaunchError(str(e)) from None


def chief_of(environ, is_local):
    """The rendezvous the environment describes for this launcher, or None.

    Args:
      environ: the launcher's environment.
      is_local: address -> True when it is this machine's (``addresses.is_local``).
    Raises:
      LaunchError: the CM_* or torchrun-style variables are incomplete or malformed.
    """
    env = {k: v for k, v in environ.items() if v != ""}
    cm = [name for name in (*world.CM_REQUIRED, "CM_WORKER_IP") if name in env]
    if "CM_CHIEF_IP" in env:  # without a chief the other CM_* variables are left alone (npu-run keeps them from ranks)
        missing = [name for name in world.CM_REQUIRED if name not in env]
        if missing:
            raise LaunchError(f"CM mode needs {', '.join(missing)} too (set: {', '.join(cm)})")
        chief = _ip(env, "CM_CHIEF_IP")
        mine = _ip(env, "CM_WORKER_IP") if "CM_WORKER_IP" in env else None
        port = _int(env, "CM_CHIEF_PORT", 1, world.CM_MAX_PORT)
        total = _int(env, "CM_WORKER_SIZE", 1, scheduler_env.MAX_RANKS)
        is_chief = mine == chief if mine is not None else is_local(chief)
        return Chief("cm", chief, port, is_chief, mine or (chief if is_chief else None), total_ranks=total)
    try:
        placement = scheduler_env.torchrun(env)
        address = None if placement is None or placement.one_host else scheduler_env.master_address(env)
    except RankTableError as e:
        raise LaunchError(str(e)) from None
    if address is None:
        return None
    host, port = address
    return Chief(
        "torchrun",
        host,
        port,
        placement.rank_id == 0,
        host if placement.rank_id == 0 else None,
        launchers=placement.rank_size,
        order=placement.rank_id,
    )
