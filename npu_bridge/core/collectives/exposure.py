"""Who can reach a job's collective servers, and the one warning that says so when it is more than the job.

TensorFlow's gRPC server listens on every interface (``0.0.0.0:HCCL_IF_BASE_PORT + rank``) and authenticates nobody:
whoever connects can run graphs in the rank, with its privileges. A job whose ranks all meet at 127.0.0.1 gets the
library's server instead (``loopback_server``), which listens there alone and serves only processes of the job's
user: nobody else can reach it, however its ranks were started. ``npu-run`` also runs a job that lives on one machine
in a private network (``launch.private_network``). Where the servers are open (a job across machines without
``--job-secret``, or a rank table naming this machine by another address), the user is told once: by ``npu-run`` for
its ranks (it sets ``NETWORK_VARIABLE``), otherwise by each rank when its server starts. The texts are built here for
both.
"""

from npu_bridge.core.world import world

# set by npu-run for its ranks (it has reported what they are exposed to); the world also reads it
NETWORK_VARIABLE = world.LAUNCHER_VARIABLE
PRIVATE = "private"  # one machine, private network
AUTHENTICATED = "authenticated"  # several machines, private networks joined by npu-run's authenticated relay
SHARED = "shared"  # this machine's network: the rank ports are open
DOCS_ONE_HOST = "docs/distributed.md#who-can-reach-a-rank"
DOCS_MULTI_HOST = "docs/multi_host.md#trust-model"


def is_private(net_dev="/proc/self/net/dev"):
    """Returns True when this process's network has no interface but loopback (as in npu-run's private network).

    Args:
      net_dev: the interface list of this process's network namespace.
    """
    try:
        with open(net_dev, encoding="ascii") as f:
            names = [line.split(":", 1)[0].strip() for line in f.readlines()[2:] if ":" in line]
    except (OSError, UnicodeError):
        return False
    return names == ["lo"]


def port_span(ports):
    """ "60000" or "60000-60003" for the listed ports."""
    first, last = min(ports), max(ports)
    return str(first) if first == last else f"{first}-{last}"


def exposed_text(who, ports, reason, one_host):
    """The warning for servers anyone can reach (on every interface: ``loopback_server``'s need none).

    Args:
      who: whose servers, e.g. "the 2 ranks of job J" or "rank 0".
      ports: their ports.
      reason: why they are reachable (a sentence).
      one_host: True when the whole job is on this machine (it could run in a private network).
    Returns:
      The text.
    """
    span = port_span(ports)
    if one_host:
        remedy = (
            "A job on one machine needs no open port: npu-run runs its ranks in a private network (as root, or "
            f"where unprivileged user namespaces are allowed); see {DOCS_ONE_HOST}"
        )
    else:
        remedy = (
            "Give every machine's npu-run the same --job-secret file (npu-run --make-secret FILE makes one): the "
            "ranks then run in private networks that only connections proving the secret can reach; or allow TCP "
            f"ports {span.replace('-', ':')} only from the job's machines with a firewall; see {DOCS_MULTI_HOST}"
        )
    servers = f"servers of {who} listen on TCP ports" if len(ports) > 1 else f"server of {who} listens on TCP port"
    return (
        f"the collective {servers} {span} of every interface without authentication: any process that can "
        "connect (another user of this machine, or any machine that reaches it) can run code in the rank with its "
        f"privileges. {reason} {remedy}"
    )


def rank_warning(environ, rank, port, one_host, loopback=False, private=is_private):
    """The warning a rank logs when its server started, or None when nobody outside the job can reach it (a
    private network, or the loopback server) or npu-run has already said so.

    Args:
      environ: the rank's environment.
      rank: its rank id.
      port: its server's port.
      one_host: True when every rank of the world is on this machine.
      loopback: True when its server is ``loopback_server``'s (127.0.0.1, its user's processes alone).
      private: the check for a private network (injectable for tests).
    """
    if loopback or environ.get(NETWORK_VARIABLE) or private():
        return None
    reason = "The ranks were not started by npu-run." if one_host else "The job spans several machines."
    return exposed_text(f"rank {rank}", [port], reason, one_host)
