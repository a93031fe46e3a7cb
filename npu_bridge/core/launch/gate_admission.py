"""The gate's door: one thread that accepts every connection to the gate's ports and runs their handshakes.

The gate's ports can be reached by anyone on the network, so what a client can make the gate hold is bounded:

- one event loop serves every listener and every handshake in flight (no thread per connection);
- a handshake has one deadline (``HANDSHAKE_TIMEOUT`` from its accept), however slowly its bytes arrive;
- handshakes in flight are capped per source address (``PER_ADDRESS``: more from that address are closed at
  once) and in total (``capacity``: the oldest is dropped for a new one, so a flood from many addresses cannot
  keep a peer that completes its handshake in milliseconds out);
- an error from ``accept()`` (out of file descriptors included) never ends the loop: it is counted, the oldest
  handshake is dropped to free a descriptor, and accepting pauses briefly;
- ``raise_file_limit`` lifts the process's open-file limit to its hard limit, and ``capacity`` stays well below it;
- refusals are reported: the first from each address at once, then a summary of how many, from where, every
  ``REPORT_INTERVAL`` seconds while they go on.

A connection that proves the job's key is handed over (``hand_over(sock, port)``); the loop no longer owns it.
"""

import collections
import errno
import resource
import selectors
import socket
import time

from npu_bridge.core.runtime import job_secret

HANDSHAKE_TIMEOUT = 10.0
PER_ADDRESS = 16
MAX_IN_FLIGHT = 512
REPORT_INTERVAL = 30.0
_ACCEPT_PAUSE = 0.1
_FILES_KEPT = 64  # descriptors left for everything else of the gate (control socket, outgoing relays, ...)
_ADDRESSES_LISTED = 5


def raise_file_limit():
    """Raises this process's soft open-file limit to its hard limit; returns the limit in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError):
            pass
    return soft


def capacity(file_limit):
    """How many handshakes may be in flight with ``file_limit`` open files."""
    return max(8, min(MAX_IN_FLIGHT, (file_limit - _FILES_KEPT) // 2))


class _Pending:
    __slots__ = ("sock", "address", "port", "handshake", "deadline", "buffer", "outgoing", "closed")

    def __init__(self, sock, address, port, key, now):
        self.closed = False
        self.sock = sock
        self.address = address
        self.port = port
        self.handshake = job_secret.ServerHandshake(key, port)
        self.deadline = now + HANDSHAKE_TIMEOUT
        self.buffer = b""
        self.outgoing = b""


class Admission:
    """Accepts and authenticates connections on ``listeners`` until the process ends.

    Args:
      listeners: listening sockets.
      key: the job key.
      hand_over: function(sock, port) for a connection that proved the key.
      report: function(text) for refusals.
      limit: handshakes in flight at most (``capacity(raise_file_limit())`` by default).
    """

    def __init__(self, listeners, key, hand_over, report, limit=None):
        self._key = key
        self._hand_over = hand_over
        self._report = report
        self._limit = capacity(raise_file_limit()) if limit is None else limit
        self._selector = selectors.DefaultSelector()
        self._listeners = {}
        for listener in listeners:
            listener.setblocking(False)
            self._listeners[listener.fileno()] = listener
            self._selector.register(listener, selectors.EVENT_READ, None)
        self._pending = collections.OrderedDict()  # fileno -> _Pending, oldest first
        self._per_address = collections.Counter()
        self._paused_until = 0.0
        self._reported = set()
        self._refused = collections.Counter()  # address -> refusals since the last summary
        self._next_summary = time.monotonic() + REPORT_INTERVAL

    def run(self):
        """Serves forever (returns only by an exception the caller treats as the gate's end)."""
        while True:
            self.step(timeout=1.0)

    def step(self, timeout):
        """One round of the loop: waits up to ``timeout`` seconds for events and serves them."""
        now = time.monotonic()
        if self._paused_until and now >= self._paused_until:
            self._paused_until = 0.0
            for listener in self._listeners.values():
                self._selector.register(listener, selectors.EVENT_READ, None)
        wait = timeout
        if self._pending:
            wait = max(0.0, min(wait, next(iter(self._pending.values())).deadline - now))
        for selected, events in self._selector.select(wait):
            if selected.data is None:
                self._accept(self._listeners[selected.fd])
            else:
                self._serve(selected.data, events)
        self._expire(time.monotonic())
        self._summarize(time.monotonic())

    @property
    def in_flight(self):
        return len(self._pending)

    def _accept(self, listener):
        port = listener.getsockname()[1]
        for _ in range(64):  # a burst at a time, then back to the handshakes in flight
            try:
                sock, peer = listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as e:
                self._accept_failed(e)
                return
            address = peer[0]
            if self._per_address[address] >= PER_ADDRESS:
                sock.close()
                self._refuse(address, port, f"more than {PER_ADDRESS} handshakes in flight from this address")
                continue
            if len(self._pending) >= self._limit:
                self._drop_oldest("the gate was full and it was the oldest handshake in flight")
            self._admit(sock, address, port)

    def _admit(self, sock, address, port):
        sock.setblocking(False)
        pending = _Pending(sock, address, port, self._key, time.monotonic())
        self._pending[sock.fileno()] = pending
        self._per_address[address] += 1
        self._selector.register(sock, selectors.EVENT_READ, pending)

    def _accept_failed(self, error):
        self._refuse("(accept)", None, f"accept() failed: {error.strerror or error}")
        if error.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
            self._drop_oldest("the gate ran out of file descriptors")
            if not self._paused_until:
                self._paused_until = time.monotonic() + _ACCEPT_PAUSE
                for listener in self._listeners.values():
                    self._selector.unregister(listener)

    def _serve(self, pending, events):
        if pending.closed:  # dropped earlier in this round
            return
        try:
            if events & selectors.EVENT_WRITE and pending.outgoing:
                sent = pending.sock.send(pending.outgoing)
                pending.outgoing = pending.outgoing[sent:]
            if events & selectors.EVENT_READ:
                data = pending.sock.recv(pending.handshake.need - len(pending.buffer))
                if not data:
                    raise job_secret.JobAuthenticationError(errno.ECONNRESET, "it closed the connection")
                pending.buffer += data
                if len(pending.buffer) == pending.handshake.need:
                    reply = pending.handshake.feed(pending.buffer)
                    pending.buffer = b""
                    pending.outgoing += reply
                    if pending.outgoing:
                        sent = pending.sock.send(pending.outgoing)
                        pending.outgoing = pending.outgoing[sent:]
        except (BlockingIOError, InterruptedError):
            return
        except OSError as e:
            self._close(pending)
            self._refuse(pending.address, pending.port, e.strerror or str(e))
            return
        if pending.handshake.done and not pending.outgoing:
            self._close(pending, keep=True)
            pending.sock.setblocking(True)
            try:
                self._hand_over(pending.sock, pending.port)
            finally:
                pending.sock.close()
            return
        wanted = selectors.EVENT_READ | (selectors.EVENT_WRITE if pending.outgoing else 0)
        self._selector.modify(pending.sock, wanted, pending)

    def _close(self, pending, keep=False):
        pending.closed = True
        self._pending.pop(pending.sock.fileno(), None)
        self._per_address[pending.address] -= 1
        if self._per_address[pending.address] <= 0:
            del self._per_address[pending.address]
        self._selector.unregister(pending.sock)
        if not keep:
            pending.sock.close()

    def _drop_oldest(self, why):
        if self._pending:
            oldest = next(iter(self._pending.values()))
            self._close(oldest)
            self._refuse(oldest.address, oldest.port, f"dropped: {why}")

    def _expire(self, now):
        while self._pending:
            oldest = next(iter(self._pending.values()))
            if oldest.deadline > now:
                return
            self._close(oldest)
            self._refuse(oldest.address, oldest.port, f"no complete handshake within {HANDSHAKE_TIMEOUT:g} s")

    def _refuse(self, address, port, why):
        self._refused[address] += 1
        if address not in self._reported:
            self._reported.add(address)
            where = f" to port {port}" if port is not None else ""
            self._report(
                f"refused a connection from {address}{where}: {why} (further refusals are summarized every "
                f"{REPORT_INTERVAL:g} s)"
            )

    def _summarize(self, now):
        if now < self._next_summary:
            return
        self._next_summary = now + REPORT_INTERVAL
        if not self._refused:
            return
        total = sum(self._refused.values())
        top = ", ".join(f"{a} ({n})" for a, n in self._refused.most_common(_ADDRESSES_LISTED))
        more = len(self._refused) - _ADDRESSES_LISTED
        self._report(
            f"refused {total} connections from {len(self._refused)} addresses in the last {REPORT_INTERVAL:g} s: "
            f"{top}{f' and {more} more' if more > 0 else ''}; {len(self._pending)} handshakes in flight"
        )
        self._refused.clear()


def listening_socket(host, port, backlog=512):
    """A socket listening at ``host``:``port`` (IPv4 or IPv6 by the address's form).

    Raises:
      OSError: it cannot listen there (the message names the address).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
        listener.listen(backlog)
    except OSError as e:
        listener.close()
        raise OSError(e.errno, f"cannot listen on {host}:{port}: {e.strerror}") from None
    return listener
