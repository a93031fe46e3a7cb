"""Who can reach a job's collective servers, and the one warning that says so when it is more than the job.

TensorFlow's gRPC server listens on every interface (``0.0.0.0:HCCL_IF_BASE_PORT + rank``) and authenticates nobody:
whoever connects can run graphs in the rank, with its privileges. The ranks' servers are the library's
(``job_server``): each closes a connection from this machine unless its other end is the job's user's, and one from
another machine unless it comes from a host of the job. A job on one machine is thereby its user's alone, however its
ranks were started (``npu-run`` also runs it in a private network, ``launch.private_network``). A job across machines
is still open to every process on its other machines, unless ``npu-run --job-secret`` joins them through its
authenticated relays or its ranks, started without npu-run, share the job secret (their servers then vouch for each
other's connections, ``job_server.vouch_with``). Such a job runs open only on request (``npu-run
--insecure-open-ports``, or ``INSECURE_VARIABLE`` for ranks started without it), and the user is told once: by
``npu-run`` for its ranks (it sets ``NETWORK_VARIABLE``), or by each rank when its server starts. The texts are built
here for both.
"""

from npu_bridge.core.runtime import job_secret
from npu_bridge.core.world import world

# set by npu-run for its ranks (it has reported what they are exposed to); the world also reads it
NETWORK_VARIABLE = world.LAUNCHER_VARIABLE
PRIVATE = "private"  # one machine, private network
AUTHENTICATED = "authenticated"  # several machines, private networks joined by npu-run's authenticated relay
SHARED = "shared"  # this machine's network: the rank ports are open to the job's machines (job_server)
DOCS_MULTI_HOST = "docs/multi_host.md#trust-model"
# =1: ranks started across machines without npu-run and without the job secret run open anyway (and warn)
INSECURE_VARIABLE = "NPU_RUN_INSECURE_OPEN_PORTS"
VOUCH, OPEN, REFUSE = "vouch", "open", "refuse"  # how ranks started without npu-run guard a job across machines
GUARD_TEXT = {
    VOUCH: f"the ranks vouch for each other's connections under the job secret ({job_secret.VARIABLE})",
    OPEN: f"open to every process on the job's machines ({INSECURE_VARIABLE}=1)",
    REFUSE: f"no job secret: the ranks will refuse to start (give every rank {job_secret.VARIABLE}=FILE, made by "
    f"npu-run --make-secret FILE, or {INSECURE_VARIABLE}=1 to run open)",
}


def guard(across_machines, environ):
    """How the ranks of a job guard their servers against the other users of the job's other machines.

    Args:
      across_machines: True when the job's ranks run on more than one machine.
      environ: a rank's environment.
    Returns:
      None (one machine, whose owner check suffices; or npu-run started the ranks and chose, saying so), VOUCH (the
      job secret is there), OPEN (``INSECURE_VARIABLE`` is 1) or REFUSE.
    """
    if not across_machines or environ.get(NETWORK_VARIABLE):
        return None
    if environ.get(job_secret.VARIABLE):
        return VOUCH
    return OPEN if environ.get(INSECURE_VARIABLE) == "1" else REFUSE


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


NPU_RUN_ADVICE = (
    "Give every machine's npu-run the same --job-secret file (npu-run --make-secret FILE makes one): the ranks then "
    "run in private networks that only connections proving the secret can reach"
)
RANK_ADVICE = (
    "Give every rank the same job secret file in NPU_RUN_JOB_SECRET (npu-run --make-secret FILE makes one): the "
    "ranks' servers then serve a connection from another machine only when a rank of the job there vouches for it "
    "(or start one npu-run --job-secret per machine)"
)


def exposed_text(who, ports, reason, one_host, advice=NPU_RUN_ADVICE):
    """The warning for servers outside a private network: None for a job on one machine (``job_server`` serves its
    user alone), else the text for a job across machines, which every process on its other machines can reach.

    Args:
      who: whose servers, e.g. "the 2 ranks of job J" or "rank 0".
      ports: their ports.
      reason: why they are reachable (a sentence).
      one_host: True when the whole job is on this machine.
      advice: how to close the job (a sentence without its full stop).
    Returns:
      The text, or None.
    """
    if one_host:
        return None
    span = port_span(ports)
    several = len(ports) > 1
    servers = f"servers of {who} listen on TCP ports" if several else f"server of {who} listens on TCP port"
    return (
        f"the collective {servers} {span} of every interface without authentication: "
        f"{'they close' if several else 'it closes'} connections from "
        "other machines than the job's and from other users of this one, but any process on the job's other "
        f"machines (another user there) can run code in the rank with its privileges. {reason} {advice}; see "
        f"{DOCS_MULTI_HOST}"
    )


def rank_warning(environ, rank, port, one_host, private=is_private):
    """The warning a rank without the job secret logs when its server started, or None when nobody outside the job
    can reach it (a job on one machine, a private network) or npu-run has already said so.

    Args:
      environ: the rank's environment.
      rank: its rank id.
      port: its server's port.
      one_host: True when every rank of the world is on this machine.
      private: the check for a private network (injectable for tests).
    """
    if environ.get(NETWORK_VARIABLE) or private():
        return None
    reason = f"The job spans machines, was not started by npu-run, and its ranks run with {INSECURE_VARIABLE}=1."
    return exposed_text(f"rank {rank}", [port], reason, one_host, RANK_ADVICE)
