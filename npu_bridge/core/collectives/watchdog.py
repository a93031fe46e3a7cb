"""Ends this rank when it waits in a collective for a peer that is gone, or waits far past every timeout.

TensorFlow bounds each collective by its timeout, with one exception: when the leader rank (rank 0, which
hands out step ids) is gone before a rank's first run of a new graph, that run can wait forever, whatever
the timeouts. And a peer that died is often only noticed when the timeout expires. So while a run with
collectives is in flight for more than ``PROBE_AFTER`` seconds, the watchdog probes the collective servers
of the ranks the run waits for, and of the leader (the leader every ``PROBE_INTERVAL`` seconds, the others
less often in big jobs: at most ``PROBES_PER_SECOND`` probes a second). A rank whose server refuses
``GONE_AFTER`` probes in a row
is gone; if the run is still in flight ``GRACE`` seconds later (TensorFlow had its chance to raise an error)
the process ends with ``EXIT_CODE`` and a message naming the rank. A hung peer still accepts connections:
that case ends with TensorFlow's timeout error, and the watchdog only steps in after ``2 * timeout + 30``
seconds, as a last resort.

The same thread drives the stall report (``stall_watch``, once ``watch_stalls`` attached one): the runs in flight
and the last one that ended are what it reports and publishes.

Ending the process (``os._exit``) is deliberate: TensorFlow cannot interrupt the waiting run, and after a
collective failure it cannot run collectives again in this process anyway.
"""

import logging
import os
import socket
import sys
import threading
import time

from npu_bridge.core.collectives import exposure
from npu_bridge.core.runtime import interrupt, log

EXIT_CODE = 70
PROBE_AFTER = 1.0
PROBE_INTERVAL = 0.5
PROBES_PER_SECOND = 32
GONE_AFTER = 2
GRACE = 1.0
LEADER = 0


def probe(address, timeout=1.0):
    """Returns True when the collective server at ``address`` ("host:port", IPv6 hosts in brackets) answers.

    A TCP connection that succeeds is enough, except behind npu-run's relay between machines
    (``NPU_RUN_NETWORK=authenticated``), whose inside end accepts every connection at once: there the server
    must also send its first bytes (a gRPC server sends its HTTP/2 settings as soon as a connection opens,
    and the relay closes the connection when it cannot reach the server's machine).
    """
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout) as sock:
            if os.environ.get(exposure.NETWORK_VARIABLE) != exposure.AUTHENTICATED:
                return True
            return bool(sock.recv(1))
    except OSError:
        return False


def abort(message):
    """Reports ``message`` and ends the process with ``EXIT_CODE`` (default action of the watchdog).

    While npu-run stops the job (Ctrl-C), the rank waited for is gone because of that: the process ends as
    interrupted instead, with one line and exit code 130 (``npu_bridge.core.runtime.interrupt``).
    """
    if interrupt.stop_reason() is not None:
        interrupt.exit_interrupted(interrupt.where_main_thread())
    if log.logger.isEnabledFor(logging.CRITICAL):
        log.logger.critical(message)
    else:
        sys.stderr.write(f"[npu_bridge] CRITICAL {message}\n")
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    for handler in log.logger.handlers:
        handler.flush()
    os._exit(EXIT_CODE)


class _Run:
    def __init__(self, describe, ranks, timeout, started, collectives=None, step=None, bounded=True):
        self.describe = describe
        self.ranks = ranks
        self.timeout = timeout
        self.bounded = bounded
        self.started = started
        self.collectives = collectives
        self.step = step
        self.stalled = False
        self.ended = None


class Watchdog:
    """Watches the in-flight collective runs of this process.

    Args:
      addresses: "host:port" of every rank's collective server, indexed by rank.
      rank: this process's rank.
      probe: function(address) -> bool, True when the rank's server accepts a connection.
      abort: function(message) called (once) to end the process.
      clock: monotonic clock.
      interval: seconds between checks.
    """

    def __init__(self, addresses, rank, probe=probe, abort=abort, clock=time.monotonic, interval=0.25):
        self._addresses = list(addresses)
        self._rank = rank
        self._probe = probe
        self._abort = abort
        self._clock = clock
        self._interval = interval
        self._lock = threading.Lock()
        self._runs = {}
        self._next_token = 0
        self._failed_probes = {}
        self._gone_since = {}
        self._last_probe = {}
        self._thread = None
        self._aborted = False
        self._last = None
        self._stalls = None

    def enter(self, describe, ranks, timeout, collectives=None, step=None, bounded=True):
        """Registers a run with collectives that is about to start.

        Args:
          describe: function() -> what the run executes, for the message (called only when needed).
          ranks: the world ranks its collectives wait for.
          timeout: the collective execution timeout of its session, in seconds.
          collectives: its ``registry.RunCollectives`` (for the stall report), or None.
          step: the run's step (how many runs its session had before it), or None.
          bounded: the whole run is bounded by ``timeout`` (a session run is); False for a TF2 function call,
            which may loop over many steps: the rank is then not ended however long the call runs.
        Returns:
          A token for ``leave``.
        """
        with self._lock:
            token = self._next_token
            self._next_token += 1
            started = self._clock()
            run = _Run(describe, frozenset(ranks) | {LEADER}, timeout, started, collectives, step, bounded)
            self._runs[token] = run
            self._start_thread()
        return token

    def leave(self, token):
        """Unregisters a run that ended (successfully or not); it becomes the last run of the stall report."""
        with self._lock:
            run = self._runs.pop(token, None)
            if run is not None:
                run.ended = self._clock()
                self._last = run

    def watch_stalls(self, stalls):
        """Drives ``stalls`` (a ``stall_watch.StallWatch``) from now on, also while no run is in flight."""
        with self._lock:
            self._stalls = stalls
            self._start_thread()

    def _start_thread(self):
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="npu_bridge-collective-watchdog", daemon=True)
            self._thread.start()

    def _loop(self):
        while not self._aborted:
            time.sleep(self._interval)
            self.check()

    def check(self):
        """One round of checks (the thread calls it every ``interval`` seconds; tests call it directly)."""
        now = self._clock()
        with self._lock:
            runs = list(self._runs.values())
            last = self._last
        if self._stalls is not None:
            try:
                self._stalls.tick(now, runs, last)
            except Exception as e:  # the report must never stop the watchdog
                log.warn_once(("stall-watch", type(e)), "the stall report failed: %r", e)
        watched = set()
        for run in runs:
            if run.bounded and now - run.started > 2 * run.timeout + 30:
                return self._end(
                    f"rank {self._rank}: {run.describe()} has not finished after "
                    f"{now - run.started:.0f} s although every collective is bounded by "
                    f"{run.timeout} s (hccl_timeout / HCCL_EXEC_TIMEOUT); ending this rank"
                )
            if now - run.started > PROBE_AFTER:
                watched |= run.ranks
        watched.discard(self._rank)
        self._probe_ranks(sorted(watched), now)
        for run in runs:
            for rank in sorted(run.ranks):
                since = self._gone_since.get(rank)
                if since is not None and now - since >= GRACE:
                    role = " (the leader, which coordinates every collective)" if rank == LEADER else ""
                    return self._end(
                        f"rank {self._rank}: rank {rank}{role} at {self._addresses[rank]} is gone (its collective "
                        f"server refuses connections) while this rank waits for it in {run.describe()}; "
                        f"ending this rank with exit code {EXIT_CODE}"
                    )
        return None

    def _probe_ranks(self, ranks, now):
        others_interval = max(PROBE_INTERVAL, len(ranks) / PROBES_PER_SECOND)
        for rank in ranks:
            interval = PROBE_INTERVAL if rank == LEADER else others_interval
            if now - self._last_probe.get(rank, -1e9) < interval:
                continue
            self._last_probe[rank] = now
            if self._probe(self._addresses[rank]):
                self._failed_probes.pop(rank, None)
                self._gone_since.pop(rank, None)
                continue
            self._failed_probes[rank] = self._failed_probes.get(rank, 0) + 1
            if self._failed_probes[rank] >= GONE_AFTER:
                self._gone_since.setdefault(rank, now)

    def _end(self, message):
        if not self._aborted:
            self._aborted = True
            self._abort(message)
        return message
