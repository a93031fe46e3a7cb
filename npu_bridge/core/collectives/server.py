"""This rank's collective server and the wait for every other rank.

The job is one TensorFlow cluster: job "worker", task r = rank r, listening on ``host_r:base + r`` (hosts from the
world, ``settings.port_base``), serving its job alone (``job_server``: on 127.0.0.1 alone when every host is
127.0.0.1). Rank 0 is the collective group leader. A process serves one rank for its whole life. For TF1
sessions the server is a ``tf.distribute.Server``, started with the first bridged session of a multi-rank world;
for TF2 code (``npu_device.open()``) the eager context itself joins the cluster, so that collectives run eagerly and
in ``tf.function`` graphs. Either way the rank then waits until every other rank's server accepts connections, or
``HCCL_CONNECT_TIMEOUT`` passes and the error names the ranks that never arrived.
"""

import os
import threading
import time

from npu_bridge.core.collectives import (
    exposure,
    job_server,
    request_ids,
    settings,
    shm_keeper,
    stall_watch,
    thread_spinning,
    watchdog,
)
from npu_bridge.core.runtime import inert_text, job_secret, log
from npu_bridge.core.runtime.errors import CollectiveError

JOB = "worker"
LEADER_DEVICE = f"/job:{JOB}/replica:0/task:0"
REPORT_EVERY = 10.0
_POLL = 0.1
_MAX_LISTED = 16

_lock = threading.Lock()
_runtime = None


class Runtime:
    """The collective side of this process.

    Attributes:
      rank, rank_size: this process's world rank and the number of ranks.
      addresses: "host:port" of every rank's server, indexed by rank.
      target: the gRPC target bridged sessions use.
      device_filter: the session device filter that keeps a session on this rank's own worker (so creating
        a session never waits for other ranks).
      watchdog: the ``watchdog.Watchdog`` of this process.
      failure: the first collective failure of this process (a message), None while there was none.
    """

    def __init__(self, rank, addresses, server):
        self.rank = rank
        self.rank_size = len(addresses)
        self.addresses = tuple(addresses)
        self.target = server.target
        self.device_filter = f"/job:{JOB}/replica:0/task:{rank}"
        self.watchdog = watchdog.Watchdog(addresses, rank)
        self.failure = None
        self.formed = False
        self._server = server  # must stay referenced: the server stops when garbage collected

    def record_failure(self, message):
        """Remembers the first collective failure; later collectives fail fast with it."""
        if self.failure is None:
            self.failure = message

    def describe_rank(self, rank):
        """Returns e.g. "rank 1 (127.0.0.1:60001)"."""
        return f"rank {rank} ({self.addresses[rank]})"


def addresses_of(current_world):
    """Returns the "host:port" of every rank's collective server.

    Raises:
      ValueError: HCCL_IF_BASE_PORT is invalid.
    """
    base = settings.port_base(current_world.rank_size)
    result = []
    for info in current_world.ranks:
        host = f"[{info.host}]" if ":" in info.host else info.host
        result.append(f"{host}:{base + info.rank_id}")
    return result


def ensure_started(current_world, eager=False):
    """Starts this rank's server (once per process) and waits until every rank has arrived.

    Args:
      current_world: the ``World`` of this process (more than one rank).
      eager: make the eager context the server (TF2 code) instead of a ``tf.distribute.Server``.
    Returns:
      The ``Runtime``.
    Raises:
      CollectiveError: the server cannot start, the process already serves another world, or some ranks did
        not arrive within HCCL_CONNECT_TIMEOUT.
      ValueError: HCCL_IF_BASE_PORT, HCCL_CONNECT_TIMEOUT or NPU_BRIDGE_STALL_SECONDS is invalid.
    """
    global _runtime
    addresses = addresses_of(current_world)
    timeout = settings.connect_timeout()
    stall_seconds = settings.stall_seconds()
    with _lock:
        if _runtime is None:
            start = _join_eager_context if eager else _start_server
            vouching = _vouch_across_machines(current_world, os.environ)
            config = _server_config(current_world)
            request_ids.use_well_seeded()
            _runtime = Runtime(current_world.rank_id, addresses, start(current_world.rank_id, addresses, config))
            if not vouching:
                _warn_if_exposed(current_world, addresses)
        elif (_runtime.rank, _runtime.addresses) != (current_world.rank_id, tuple(addresses)):
            raise CollectiveError(
                f"this process already serves {_runtime.describe_rank(_runtime.rank)} of a {_runtime.rank_size}-rank "
                f"world; the environment now describes rank {current_world.rank_id} of {current_world.rank_size} "
                f"at {addresses[current_world.rank_id]}. A process is one rank for its whole life: start a new "
                "process for another rank"
            )
        if not _runtime.formed:
            # Ranks started without npu-run get the segment their graphs were built for from the host's first rank,
            # which opens its keeper before it waits for the others
            shm_keeper.segment(current_world)
            wait_for_ranks(_runtime.addresses, _runtime.rank, timeout)
            _runtime.formed = True
            if stall_seconds:
                directory = stall_watch.open_status_directory()
                _runtime.watchdog.watch_stalls(stall_watch.StallWatch(_runtime.rank, stall_seconds, directory))
            log.logger.info(
                "rank %d: all %d ranks arrived; collective server %s",
                _runtime.rank,
                _runtime.rank_size,
                _runtime.target,
            )
        return _runtime


def _vouch_across_machines(current_world, environ):
    """Decides how the server of a job across machines started without npu-run serves other machines: with the job
    secret (``job_secret.VARIABLE``) its ranks vouch for each other's connections; without it the job runs only on
    request (``exposure.INSECURE_VARIABLE``=1), open to every process of its machines. Returns whether the ranks
    vouch.

    Raises:
      CollectiveError: the job spans machines and has neither.
      LaunchError: the secret file is missing, unsafe or malformed.
    """
    hosts = sorted({info.host for info in current_world.ranks})
    chosen = exposure.guard(len(hosts) > 1, environ)
    if chosen == exposure.VOUCH:
        job_server.vouch_with(job_secret.vouching_key(job_secret.load(environ[job_secret.VARIABLE])))
        return True
    if chosen != exposure.REFUSE:
        return False
    shown = ", ".join(inert_text.value(h) for h in hosts[:_MAX_LISTED]) + (", ..." if len(hosts) > _MAX_LISTED else "")
    raise CollectiveError(
        f"rank {current_world.rank_id}: the job spans {len(hosts)} machines ({shown}) and its ranks have no job "
        f"secret, so any process on those machines could run code in them. Make one with npu-run --make-secret FILE "
        f"and give it to every rank as {job_secret.VARIABLE}=FILE (the ranks then vouch for each other's "
        f"connections), or start one npu-run --job-secret FILE per machine; to run the job open anyway, set "
        f"{exposure.INSECURE_VARIABLE}=1 for every rank. See {exposure.DOCS_MULTI_HOST}"
    )


def _warn_if_exposed(current_world, addresses):
    hosts = {info.host for info in current_world.ranks}
    port = int(addresses[current_world.rank_id].rpartition(":")[2])
    warning = exposure.rank_warning(os.environ, current_world.rank_id, port, len(hosts) == 1)
    if warning:
        log.logger.warning("%s", warning)


def _server_config(current_world=None):
    """The config of a rank's server (``current_world``: the rank's world, which decides thread spinning)."""
    import tensorflow as tf

    config = tf.compat.v1.ConfigProto()
    config.experimental.collective_group_leader = LEADER_DEVICE
    if current_world is not None:
        thread_spinning.apply(config, current_world)  # the server may create TensorFlow's process-wide pools first
    return config


def _start_server(rank, addresses, config=None):
    import tensorflow as tf

    cluster = tf.train.ClusterSpec({JOB: list(addresses)})
    try:
        return tf.distribute.Server(
            cluster,
            job_name=JOB,
            task_index=rank,
            protocol=job_server.protocol(),
            config=config if config is not None else _server_config(),
            start=True,
        )
    except (tf.errors.OpError, RuntimeError, ValueError) as e:
        raise _start_error(rank, addresses, e) from e


class _EagerServer:
    """The eager context's server, as ``Runtime`` sees a server."""

    def __init__(self, address):
        self.target = f"grpc://{address}"


def _join_eager_context(rank, addresses, config):
    import logging

    import tensorflow as tf
    from tensorflow.core.protobuf import tensorflow_server_pb2
    from tensorflow.python.eager import context

    server_def = tensorflow_server_pb2.ServerDef(
        cluster=tf.train.ClusterSpec({JOB: list(addresses)}).as_cluster_def(),
        job_name=JOB,
        task_index=rank,
        protocol=job_server.protocol(),
        default_session_config=config,
    )
    absl_logger = logging.getLogger("absl")
    level = absl_logger.level
    # TensorFlow warns that tensors made before the join may fail: the CPU tensors of this process do not.
    absl_logger.setLevel(logging.ERROR)
    eager = context.context()
    if config.experimental.disable_thread_spinning and eager._context_handle is None:
        # Not yet initialized: its pools are created with the context's config (there is no public setter)
        own = tf.compat.v1.ConfigProto()
        if eager._config is not None:
            own.CopyFrom(eager._config)
        own.experimental.disable_thread_spinning = True
        eager._config = own
    try:
        eager.enable_collective_ops(server_def)
        eager.ensure_initialized()  # an uninitialized context only starts the server now
    except (tf.errors.OpError, RuntimeError, ValueError) as e:
        raise _start_error(rank, addresses, e) from e
    finally:
        absl_logger.setLevel(level)
    return _EagerServer(addresses[rank])


def _start_error(rank, addresses, error):
    port = addresses[rank].rpartition(":")[2]
    return CollectiveError(
        f"rank {rank}: cannot start the collective server on port {port} ({settings.PORT_BASE_VARIABLE} + "
        f"rank id): {error}. Another process probably uses the port; set {settings.PORT_BASE_VARIABLE} to the "
        f"first of {len(addresses)} free ports (npu-run chooses free ports itself)"
    )


def wait_for_ranks(addresses, rank, timeout, probe=watchdog.probe, clock=time.monotonic, sleep=time.sleep):
    """Waits until the server of every other rank accepts connections.

    Args:
      addresses: "host:port" of every rank's server.
      rank: this process's rank (not waited for).
      timeout: seconds to wait (HCCL_CONNECT_TIMEOUT).
      probe, clock, sleep: injectable for tests.
    Raises:
      CollectiveError: some ranks did not arrive in time; the message names them.
    """
    start = clock()
    next_report = start + REPORT_EVERY
    missing = [r for r in range(len(addresses)) if r != rank]
    while True:
        missing = [r for r in missing if not probe(addresses[r])]
        if not missing:
            return
        now = clock()
        if now - start >= timeout:
            raise CollectiveError(
                f"rank {rank}: {_listed(missing, addresses)} never arrived within {settings.CONNECT_TIMEOUT_VARIABLE}="
                f"{timeout} s (their collective servers did not accept connections). Check that every rank was "
                "started (npu-run starts them all), that all ranks see the same rank table / RANK_SIZE and "
                f"{settings.PORT_BASE_VARIABLE}, and that the hosts can reach each other"
            )
        if now >= next_report:
            log.logger.warning(
                "rank %d: waiting for %s to start (%.0f s of %s=%d s)",
                rank,
                _listed(missing, addresses),
                now - start,
                settings.CONNECT_TIMEOUT_VARIABLE,
                timeout,
            )
            next_report += REPORT_EVERY
        sleep(_POLL)


def _listed(ranks, addresses):
    shown = ", ".join(f"{r} ({addresses[r]})" for r in ranks[:_MAX_LISTED])
    more = f" and {len(ranks) - _MAX_LISTED} more" if len(ranks) > _MAX_LISTED else ""
    return f"rank{'s' if len(ranks) > 1 else ''} {shown}{more}"
