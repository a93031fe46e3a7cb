"""Authenticated connections between the private networks of a job's machines (``npu-run --job-secret``).

With a job secret, npu-run runs the ranks of every machine in a private network (``private_network``), whose
loopback also holds the addresses of the other machines' servers, and joins the machines through two relays:

- the *gate*, a process npu-run forks before it enters the private network (so it keeps this machine's network),
  listens on this machine's rank ports at the rank table's address only. A connection that proves it knows the
  job's secret (``job_secret``'s handshake) is handed to the inside relay; any other is closed and reported
  (``gate_admission``, which also bounds what hostile clients can make the gate hold). The gate also opens, and
  proves itself on, the connections the inside relay asks for. If the gate process ends while the job runs,
  the launcher says so and stops the job (no rank of another machine could reach this one's any more).
- the *inside relay*, threads of the launcher in the private network, listens at the other machines' rank
  addresses on the private loopback. A rank's connection there is joined to a connection the gate opened to
  that rank's machine; a connection the gate hands over is joined to this machine's rank server.

So a rank's server can be reached only from its own private network, and a machine's relay only by a party that
knows the secret. Bytes are copied as they are: the traffic is authenticated at the start of each connection,
not encrypted.
"""

import json
import os
import signal
import socket
import threading

from npu_bridge.core.launch import gate_admission, rank_guard
from npu_bridge.core.runtime import job_secret

CONNECT_TIMEOUT = 5.0  # seconds to reach another machine's gate
HANDSHAKE_TIMEOUT = gate_admission.HANDSHAKE_TIMEOUT
_BUFFER = 1 << 20
_MESSAGE = 4096


def _spawn(target, *args):
    threading.Thread(target=target, args=args, daemon=True).start()


def _no_delay(sock):
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except OSError:
        pass


def _join(a, b):
    """Copies bytes both ways between sockets ``a`` and ``b`` until both directions end, then closes them."""
    ended = []
    lock = threading.Lock()

    def pump(source, target):
        buffer = bytearray(_BUFFER)
        view = memoryview(buffer)
        try:
            while True:
                count = source.recv_into(buffer)
                if not count:
                    break
                target.sendall(view[:count])
            target.shutdown(socket.SHUT_WR)
        except OSError:
            for sock in (a, b):  # a reset on one side resets the other
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        with lock:
            ended.append(source)
            if len(ended) == 2:
                a.close()
                b.close()

    for sock in (a, b):
        _no_delay(sock)
    _spawn(pump, a, b)
    _spawn(pump, b, a)


class Gate:
    """The launcher's side of the gate process: ``start`` forks it, ``serve_inside`` starts the inside relay.

    Args:
      local: (host, port) of this machine's ranks, where the gate listens.
      key: the job key (``job_secret.job_key``).
      report: function(text) for the gate's messages (refused connections).
    Raises:
      OSError: a gate port cannot be listened on (the message names it).
    """

    def __init__(self, local, key, report):
        self._key = key
        self._report = report
        self._listeners = [gate_admission.listening_socket(host, port) for host, port in local]
        self._control = None
        self._pending = {}  # request id -> [threading.Event, socket or None]
        self._lock = threading.Lock()
        self._next_id = 0
        self._stopping = False
        self.pid = None

    def start(self):
        """Forks the gate process (call while this process has one thread, before entering the private network)."""
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        launcher = os.getpid()
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                mine.close()
                self._gate_main(theirs, launcher)
            except BaseException:  # a forked child must never return into the launcher's code
                code = 1
            finally:
                os._exit(code)
        theirs.close()
        for listener in self._listeners:
            listener.close()
        self._control = mine
        self.pid = pid

    def stop(self):
        """Ends the gate process."""
        self._stopping = True
        if self.pid is not None:
            try:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
            self.pid = None

    # The gate process, in this machine's network.

    def _gate_main(self, control, launcher):
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the launcher decides when the job ends
        if not rank_guard.set_parent_death_signal(signal.SIGKILL) or os.getppid() != launcher:
            return
        send_lock = threading.Lock()

        def send(message, sock=None):
            with send_lock:
                socket.send_fds(control, [json.dumps(message).encode()], [sock.fileno()] if sock else [])

        admission = gate_admission.Admission(
            self._listeners, self._key, lambda sock, port: send({"op": "incoming", "port": port}, sock), self._report
        )
        _spawn(self._admit_until_failure, admission)
        while True:
            data = control.recv(_MESSAGE)
            if not data:
                return  # the launcher is gone
            _spawn(self._connect_outside, json.loads(data), send)

    def _admit_until_failure(self, admission):
        try:
            admission.run()
        except BaseException as e:  # the gate cannot serve any more: end it, so that the launcher notices
            self._report(f"error: the gate stopped accepting connections: {type(e).__name__}: {e}")
        os._exit(1)

    def _connect_outside(self, request, send):
        try:
            sock = socket.create_connection((request["host"], request["port"]), timeout=CONNECT_TIMEOUT)
        except OSError as e:
            send({"op": "failed", "id": request["id"], "reason": str(e)})
            return
        try:
            sock.settimeout(HANDSHAKE_TIMEOUT)
            job_secret.client_handshake(sock, self._key, request["port"])
            sock.settimeout(None)
            send({"op": "connected", "id": request["id"]}, sock)
        except OSError as e:
            send({"op": "failed", "id": request["id"], "reason": str(e)})
        finally:
            sock.close()

    # The inside relay, in the launcher, in the private network.

    def serve_inside(self, remote):
        """Listens at the other machines' rank addresses (``remote``: (host, port) pairs) in the private network.

        Raises:
          OSError: one of them cannot be listened on.
        """
        listeners = [gate_admission.listening_socket(host, port) for host, port in remote]
        for listener in listeners:
            _spawn(self._accept_inside, listener)
        _spawn(self._read_control)

    def _accept_inside(self, listener):
        host, port = listener.getsockname()[:2]
        while True:
            conn, _ = listener.accept()
            _spawn(self._outbound, conn, host, port)

    def _outbound(self, conn, host, port):
        event = threading.Event()
        with self._lock:
            self._next_id += 1
            request = self._next_id
            self._pending[request] = [event, None]
        try:
            self._control.send(json.dumps({"op": "connect", "id": request, "host": host, "port": port}).encode())
        except OSError:
            event.set()
        event.wait(CONNECT_TIMEOUT + HANDSHAKE_TIMEOUT + 1)
        with self._lock:
            outside = self._pending.pop(request)[1]
        if outside is None:
            conn.close()  # the rank sees its connection closed, as if the peer were not there
            return
        _join(conn, outside)

    def _read_control(self):
        while True:
            try:
                data, fds, _, _ = socket.recv_fds(self._control, _MESSAGE, 1)
            except OSError:
                return
            if not data:
                self._gate_ended()
                return
            message = json.loads(data)
            sock = socket.socket(fileno=fds[0]) if fds else None
            if message["op"] == "incoming":
                _spawn(self._inbound, sock, message["port"])
                continue
            with self._lock:
                entry = self._pending.get(message["id"])
                if entry is None:
                    if sock:
                        sock.close()  # answered too late: the rank's connection was already closed
                    continue
                entry[1] = sock
                entry[0].set()

    def _gate_ended(self):
        """The gate process is gone: no other machine's rank can reach this machine's any more."""
        if self._stopping:
            return
        self._report(
            "error: the gate that admits the other machines' connections has ended; stopping the job (its ranks "
            "could no longer be reached)"
        )
        os.kill(os.getpid(), signal.SIGTERM)  # the supervisor stops the ranks as on any SIGTERM

    @staticmethod
    def _inbound(outside, port):
        try:
            inside = socket.create_connection(("127.0.0.1", port), timeout=CONNECT_TIMEOUT)
            inside.settimeout(None)
        except OSError:
            outside.close()
            return
        _join(outside, inside)
