"""The network a job's ranks run in, chosen and set up by npu-run before the first rank starts.

- A job whose ranks all run on this machine: a private network with only loopback (``private_network``), unless
  ``--share-network``; where none can be made, this machine's network, where the ranks' servers
  (``collectives.job_server``) serve the job's user alone.
- A rank table with several servers, all of them on this machine (one launcher per server): one private network
  that the launchers share (``shared_private_network``), unless ``--share-network`` or
  ``--insecure-open-ports``.
- A job across machines with a job secret (``--job-secret``): a private network holding every server's address,
  joined to the other machines' through the authenticated relay (``relay``); the gate listens at this machine's
  rank table address only.
- A job across machines without a secret: refused, unless ``--insecure-open-ports`` opens this machine's network
  to it (with a warning naming the open ports).

The warnings' texts and the value npu-run gives its ranks in ``NPU_RUN_NETWORK`` are ``collectives.exposure``'s.
"""

import dataclasses
import ipaddress
import socket
from typing import Optional

from npu_bridge.core.collectives import exposure
from npu_bridge.core.launch import addresses, private_network, relay, shared_private_network
from npu_bridge.core.runtime import job_secret
from npu_bridge.core.runtime.errors import LaunchError
from npu_bridge.core.world import rank_table


@dataclasses.dataclass
class Network:
    """What ``choose`` set up.

    Attributes:
      kind: ``exposure.PRIVATE``, ``AUTHENTICATED`` or ``SHARED`` (the ranks' ``NPU_RUN_NETWORK``).
      warning: what to tell the user about open ports, or None.
      gate: the running ``relay.Gate`` of a job across machines with a secret.
      offer: the ``shared_private_network.Offer`` of the launcher that made the private network of a table whose
        servers are all on this machine.
      mechanism: how the network is private (for the start message), when it is.
      reason: why the ranks run in this machine's network (a sentence, for the start message), when they do.
    """

    kind: str
    warning: Optional[str] = None
    gate: Optional[relay.Gate] = None
    offer: Optional[shared_private_network.Offer] = None
    mechanism: Optional[str] = None
    reason: Optional[str] = None

    def close(self):
        """Stops what serves the job's network (call when the job ends)."""
        if self.gate is not None:
            self.gate.stop()
        if self.offer is not None:
            self.offer.close()


def choose(job, share, secret_path, report, insecure_open_ports=False):
    """Moves this process (and so the ranks it starts) into the job's network.

    Args:
      job: the ``plan.JobPlan``.
      share: ``--share-network`` was given.
      secret_path: the job secret file (``--job-secret``), or None.
      report: function(text) for the gate's messages.
      insecure_open_ports: ``--insecure-open-ports`` was given.
    Returns:
      A ``Network``.
    Raises:
      LaunchError: the job secret is unusable; a job across machines has neither a secret nor
        ``--insecure-open-ports``; or a job across machines with a secret cannot be authenticated here (host
        names in the table, no private network possible).
      OSError: a private network or the gate could not be set up.
    """
    secret = None if secret_path is None else job_secret.load(secret_path)  # checked even where not needed
    ports = [job.port_base + r.rank_id for r in job.ranks]
    who = f"rank {job.ranks[0].rank_id}" if len(job.ranks) == 1 else f"the {len(job.ranks)} ranks of job {job.job_id}"
    one_host = len(job.ranks) == job.rank_size
    if not one_host:
        return _several_servers(job, share, secret, report, insecure_open_ports, who, ports)
    if share or insecure_open_ports:
        flag = "--share-network" if share else "--insecure-open-ports"
        return _machine_network(who, ports, f"{flag} was given.", True)
    names = [h for h in job.hosts if not rank_table.is_ip(h)]
    if names:
        reason = (
            f"The rank table names its server by the host name {names[0]!r}, which ranks in a private network "
            "could not resolve; give its IP address instead."
        )
        return _machine_network(who, ports, reason, True)
    outcome = private_network.enter(job.hosts)
    if outcome.private:
        return Network(exposure.PRIVATE, mechanism=outcome.mechanism)
    reason = f"npu-run could not give them a private network ({outcome.reason})."
    return _machine_network(who, ports, reason, True)


def _machine_network(who, ports, reason, one_host):
    """This machine's network. The ranks' servers (``job_server``) serve only the job: a job on one machine is its
    user's alone; one across machines gets the warning that names the ports its other machines can reach."""
    return Network(exposure.SHARED, exposure.exposed_text(who, ports, reason, one_host), reason=reason)


def _several_servers(job, share, secret, report, insecure_open_ports, who, ports):
    """The network of this machine's share of a rank table with several servers."""
    names = [h for h in job.hosts if not rank_table.is_ip(h)]
    here = all(addresses.is_local(h) for h in job.hosts)
    if here and not (share or insecure_open_ports):
        unresolvable = [h for h in names if not _resolves_to_loopback(h)]
        if unresolvable:
            raise LaunchError(
                f"every server of the rank table is on this machine, and npu-run runs such a job in one private "
                f"network; the server name {unresolvable[0]!r} could not be "
                "resolved there: give its IP address in the table (or --share-network to run in this machine's "
                "network)"
            )
        directory = shared_private_network.rendezvous_directory()
        ips = [h for h in job.hosts if rank_table.is_ip(h)]
        outcome, offer = shared_private_network.join_or_create(job.job_id, job.rank_table_path, ips, directory)
        if outcome.private:
            return Network(exposure.PRIVATE, offer=offer, mechanism=outcome.mechanism)
        reason = f"npu-run could not give the job's launchers a private network ({outcome.reason})."
        return _machine_network(who, ports, reason, True)
    if secret is not None and not here:
        return _authenticated(job, secret, report)
    if share or insecure_open_ports:
        flag = "--insecure-open-ports" if insecure_open_ports else "--share-network"
        return _machine_network(who, ports, f"{flag} was given.", here)
    raise LaunchError(
        "the rank table has servers on other machines, and without a job secret their ranks' ports would be open "
        "to anyone who can reach them: make a secret with npu-run --make-secret FILE, copy it to every machine and "
        "give each npu-run --job-secret FILE; or pass --insecure-open-ports to run without authentication"
    )


def _resolves_to_loopback(name):
    try:
        infos = socket.getaddrinfo(name, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return False
    return bool(infos) and all(ipaddress.ip_address(info[4][0]).is_loopback for info in infos)


def _authenticated(job, secret, report):
    key = job_secret.job_key(secret, job.job_id)
    names = sorted({h for _, h in job.rank_hosts if not rank_table.is_ip(h)})
    if names:
        raise LaunchError(
            "with --job-secret every server of the rank table needs an IP address (container_ip, host_ip or "
            f"server_id); {names[0]!r} is a host name, which the ranks could not resolve in their private network"
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
