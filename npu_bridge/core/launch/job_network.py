"""The network a job's ranks run in, chosen and set up by npu-run before the first rank starts.

- A job whose ranks all run on this machine: a private network with only loopback (``private_network``), unless
  ``--share-network``; where none can be made, this machine's network, with a warning.
- A job across machines with a job secret (``--job-secret``): a private network holding every server's address,
  joined to the other machines' through the authenticated relay (``relay``); the gate listens at this machine's
  rank table address only.
- A job across machines without a secret: this machine's network, with a warning naming the open ports.

The warnings' texts and the value npu-run gives its ranks in ``NPU_RUN_NETWORK`` are ``collectives.exposure``'s.
"""

import dataclasses
from typing import Optional

from npu_bridge.core.collectives import exposure
from npu_bridge.core.launch import job_secret, private_network, relay
from npu_bridge.core.runtime.errors import LaunchError
from npu_bridge.core.world import rank_table


@dataclasses.dataclass
class Network:
    """What ``choose`` set up.

    Attributes:
      kind: ``exposure.PRIVATE``, ``AUTHENTICATED`` or ``SHARED`` (the ranks' ``NPU_RUN_NETWORK``).
      warning: what to tell the user about open ports, or None.
      gate: the running ``relay.Gate`` of a job across machines with a secret (stop it when the job ends).
    """

    kind: str
    warning: Optional[str] = None
    gate: Optional[relay.Gate] = None


def choose(job, share, secret_path, report):
    """Moves this process (and so the ranks it starts) into the job's network.

    Args:
      job: the ``plan.JobPlan``.
      share: ``--share-network`` was given.
      secret_path: the job secret file (``--job-secret``), or None.
      report: function(text) for the gate's messages.
    Returns:
      A ``Network``.
    Raises:
      LaunchError: the job secret is unusable, or a job across machines with a secret cannot be authenticated
        here (host names in the table, no private network possible).
      OSError: a private network or the gate could not be set up.
    """
    secret = None if secret_path is None else job_secret.load(secret_path)  # checked even where not needed
    ports = [job.port_base + r.rank_id for r in job.ranks]
    who = f"rank {job.ranks[0].rank_id}" if len(job.ranks) == 1 else f"the {len(job.ranks)} ranks of job {job.job_id}"
    one_host = len(job.ranks) == job.rank_size
    if not one_host and secret is not None:
        return _authenticated(job, secret, report)
    if not one_host:
        reason = "The job spans several machines, whose ranks must reach each other, and no --job-secret was given."
        return Network(exposure.SHARED, exposure.exposed_text(who, ports, reason, one_host=False))
    if share:
        return Network(exposure.SHARED, exposure.exposed_text(who, ports, "--share-network was given.", one_host=True))
    names = [h for h in job.hosts if not rank_table.is_ip(h)]
    if names:
        reason = (
            f"The rank table names its server by the host name {names[0]!r}, which ranks in a private network "
            "could not resolve; give its IP address instead."
        )
        return Network(exposure.SHARED, exposure.exposed_text(who, ports, reason, one_host=True))
    outcome = private_network.enter(job.hosts)
    if outcome.private:
        return Network(exposure.PRIVATE)
    reason = f"npu-run could not give them a private network ({outcome.reason})."
    return Network(exposure.SHARED, exposure.exposed_text(who, ports, reason, one_host=True))


def _authenticated(job, secret, report):
    key = job_secret.job_key(secret, job.job_id)
    names = sorted({h for _, h in job.rank_hosts if not rank_table.is_ip(h)})
    if names:
        raise LaunchError(
            f"with --job-secret every server of the rank table needs an IP address (host_ip or server_id); "
            f"{names[0]!r} is a host name, which the ranks could not resolve in their private network"
        )
    mine = {r.rank_id for r in job.ranks}
    host = next(h for r, h in job.rank_hosts if r in mine)
    shared = sorted({r for r, h in job.rank_hosts if h == host and r not in mine})
    if shared:
        raise LaunchError(
            f"with --job-secret every server of the rank table needs an address of its own; rank {shared[0]} of "
            f"another server has this server's address {host}"
        )
    gate = relay.Gate([(host, job.port_base + r) for r in sorted(mine)], key, report)
    gate.start()
    try:
        outcome = private_network.enter(job.hosts)
        if not outcome.private:
            raise LaunchError(
                f"--job-secret needs a private network for the ranks, and npu-run could not make one "
                f"({outcome.reason}); run npu-run as root, or allow unprivileged user namespaces"
            )
        gate.serve_inside([(h, job.port_base + r) for r, h in job.rank_hosts if h != host])
    except BaseException:
        gate.stop()
        raise
    return Network(exposure.AUTHENTICATED, gate=gate)
