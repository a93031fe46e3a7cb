"""The chief's rendezvous: members of a job whose places nothing lists find each other at one address.

Two kinds of members meet this way. Launchers (one ``npu-run`` per machine, ``launch.chief_rendezvous`` reads the
chief from ``CM_*`` or torchrun-style variables) register where they run and how many ranks they start; the chief
answers every one with the same list of machines. Ranks that a scheduler started one per process (torchrun across
machines, ``mpirun -x MASTER_ADDR -x MASTER_PORT``: ``rank_rendezvous``) register their own rank; rank 0 answers
with every rank's host.

Every connection first proves the job secret (``runtime.job_secret``'s handshake, keyed by the job id). The chief
is the member with order 0 (or the launcher at the chief's address). Order of the list: the chief's first, then by
the members' own order (torchrun's ``RANK``) or, for CM launchers, by address. Bounded: at most ``MAX_MEMBERS``
connections are served at once, each must finish its handshake and registration within ``HANDSHAKE_SECONDS``, a
registration is one line of at most ``MAX_LINE`` bytes, and the whole rendezvous ends with
``HCCL_CONNECT_TIMEOUT``, naming who has not arrived.
"""

import dataclasses
import errno
import ipaddress
import json
import socket
import threading
import time
from typing import Optional

from npu_bridge.core.runtime import job_secret
from npu_bridge.core.runtime.errors import JobAuthenticationError, RendezvousError
from npu_bridge.core.world import scheduler_env

MAX_MEMBERS = 256
MAX_LINE = 4096
HANDSHAKE_SECONDS = 10.0


@dataclasses.dataclass(frozen=True)
class Chief:
    """Where the members meet and what completes the job.

    Attributes:
      source: "cm", "torchrun" or "mpi", for messages.
      host: the chief's address, where the members connect (a launcher chief listens there; rank 0 listens on
        every interface).
      port: the rendezvous port.
      is_chief: True for the member that serves the rendezvous.
      my_host: this member's address in the job (None: the address it reaches the chief from).
      total_ranks: the job's ranks (CM), or None.
      launchers: the number of members that complete the job (torchrun's ``WORLD_SIZE``), or None.
      order: this member's place among them (torchrun's ``RANK``), or None.
      per_rank: the members are ranks, several per machine, instead of one launcher per machine.
    """

    source: str
    host: str
    port: int
    is_chief: bool
    my_host: Optional[str]
    total_ranks: Optional[int] = None
    launchers: Optional[int] = None
    order: Optional[int] = None
    per_rank: bool = False

    @property
    def member(self):
        return "rank" if self.per_rank else "launcher"

    @property
    def secret_hint(self):
        if self.per_rank:
            return "every rank needs the same job secret file in NPU_RUN_JOB_SECRET and the same job id"
        return "every launcher needs the same --job-secret file and --job-id"

    @property
    def start_hint(self):
        if self.per_rank:
            return "start rank 0 on the host MASTER_ADDR names, or check MASTER_ADDR / MASTER_PORT"
        return "start the chief's npu-run, or check the address"


def _read_line(sock, deadline):
    data = b""
    while not data.endswith(b"\n"):
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        chunk = sock.recv(MAX_LINE + 1 - len(data))
        if not chunk:
            raise ConnectionError("the connection closed before a whole line arrived")
        data += chunk
        if len(data) > MAX_LINE:
            raise RendezvousError(f"a registration line longer than {MAX_LINE} bytes")
    return json.loads(data.decode("utf-8"))


def _send(sock, value):
    sock.sendall(json.dumps(value).encode("utf-8") + b"\n")


def register(chief, key, ranks, timeout, report):
    """A member that is not the chief: registers with the chief and returns the job's machines.

    Returns:
      ([(host, ranks), ...] in the job's order, this member's host among them).
    Raises:
      RendezvousError: the chief could not be reached, refused this member, or did not answer in time.
    """
    deadline = time.monotonic() + timeout
    last = None
    told = False
    pause = 0.05  # doubled up to half a second while the chief is not there yet
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((chief.host, chief.port), timeout=HANDSHAKE_SECONDS) as sock:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # small messages, each awaited
                job_secret.client_handshake(sock, key, chief.port)
                host = chief.my_host or sock.getsockname()[0]
                _send(sock, {"host": host, "ranks": ranks, "order": chief.order})
                answer = _read_line(sock, deadline)
            if "error" in answer:
                raise RendezvousError(f"the chief at {chief.host}:{chief.port} answered: {answer['error']}")
            return [(str(h), int(n)) for h, n in answer["machines"]], host
        except (OSError, ValueError, KeyError, TypeError) as e:
            if isinstance(e, JobAuthenticationError) and e.errno == errno.EACCES:  # a closed one is tried again
                raise RendezvousError(
                    f"the chief at {chief.host}:{chief.port}: {e.strerror or e} ({chief.secret_hint})"
                ) from None
            last = e
            if not told:
                report(f"waiting for the chief's rendezvous at {chief.host}:{chief.port} ({chief.source})")
                told = True
            time.sleep(pause)
            pause = min(0.5, pause * 2)
    raise RendezvousError(
        f"the chief's rendezvous at {chief.host}:{chief.port} ({chief.source}) did not answer within "
        f"HCCL_CONNECT_TIMEOUT={timeout} s (last: {last}); {chief.start_hint}"
    )


class _Registry:
    """The chief's view of the members so far; complete when they cover the job."""

    def __init__(self, chief, own_host, ranks):
        self.chief = chief
        self.own_host = own_host
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.entries = {self._key(own_host, chief.order): (0 if chief.order is None else chief.order, own_host, ranks)}
        self.waiting = []  # the registered members' connections, answered once the job is complete

    def _key(self, host, order):
        return order if self.chief.per_rank else host

    def add(self, host, ranks, order, sock):
        """Registers a member; returns why it is refused, or None."""
        with self.lock:
            if not self.chief.per_rank and host in self.entries:
                return f"a launcher for {host} has registered already (one npu-run per machine)"
            if self.chief.launchers is not None:
                if not isinstance(order, int) or not 0 <= order < self.chief.launchers:
                    return f"its RANK {order!r} is not a {self.chief.member} of the {self.chief.launchers}"
                if order in [o for o, _, _ in self.entries.values()]:
                    return f"another {self.chief.member} has RANK {order} already"
            total = sum(n for _, _, n in self.entries.values()) + ranks
            if self.chief.total_ranks is not None and total > self.chief.total_ranks:
                return f"its {ranks} ranks would make the job larger than CM_WORKER_SIZE={self.chief.total_ranks}"
            self.entries[self._key(host, order)] = (order if order is not None else 1, host, ranks)
            self.waiting.append(sock)
            if total == self.chief.total_ranks or len(self.entries) == self.chief.launchers:
                self.done.set()
            return None

    def machines(self):
        if self.chief.per_rank:  # by rank alone: several ranks share a host
            ordered = sorted(self.entries.values(), key=lambda e: e[0])
        else:
            ordered = sorted(self.entries.values(), key=lambda e: (e[1] != self.own_host, e[0], _address_key(e[1])))
        return [(host, n) for _, host, n in ordered]

    def came(self):
        """Who has registered, for the message of a rendezvous that did not complete."""
        if self.chief.per_rank:
            have = sorted(self.entries.values())
            missing = sorted(set(range(self.chief.launchers)) - {o for o, _, _ in have})
            listed = ", ".join(f"{o} ({h})" for o, h, _ in have)
            return f"registered {len(have)} ranks: {listed}; missing ranks: {', '.join(map(str, missing))}"
        have = sorted(h for _, h, _ in self.entries.values())
        return f"registered {len(have)} machines ({', '.join(have)})"


def _address_key(host):
    try:
        address = ipaddress.ip_address(host)
        return (0, address.version, int(address), host)
    except ValueError:
        return (1, 0, 0, host)


def serve(chief, key, ranks, timeout, report):
    """The chief: serves the rendezvous until every member registered; returns the job's machines.

    Raises:
      RendezvousError: the chief's address cannot be bound, or the job did not complete in time.
    """
    if chief.total_ranks == ranks or chief.launchers == 1:
        return _Registry(chief, chief.host, ranks).machines()
    try:
        listener = _listen(chief)
    except OSError as e:
        raise RendezvousError(
            f"the chief's rendezvous cannot listen at {chief.host}:{chief.port}: {e.strerror}"
        ) from None
    registry = _Registry(chief, chief.host, ranks)
    listener.listen(MAX_MEMBERS)
    listener.settimeout(0.02)  # how soon the loop sees the job complete (a registering thread completes it)
    slots = threading.BoundedSemaphore(MAX_MEMBERS)
    report(f"chief's rendezvous at {chief.host}:{chief.port} ({chief.source}): waiting for the other {chief.member}s")
    deadline = time.monotonic() + timeout
    try:
        while not registry.done.is_set() and time.monotonic() < deadline:
            try:
                sock, peer = listener.accept()
            except TimeoutError:
                continue
            if not slots.acquire(blocking=False):
                sock.close()
                continue
            threading.Thread(target=_admit, args=(sock, peer, key, chief, registry, slots, report), daemon=True).start()
        if not registry.done.is_set():
            problem = (
                f"the chief's rendezvous at {chief.host}:{chief.port} ({chief.source}) was not complete within "
                f"HCCL_CONNECT_TIMEOUT={timeout} s: {registry.came()}; {_what_completes(chief)}"
            )
            _answer_all(registry, {"error": problem})  # the members that came stop now, saying why
            raise RendezvousError(problem)
        machines = registry.machines()
        _answer_all(registry, {"machines": machines})
        return machines
    finally:
        listener.close()
        with registry.lock:
            for sock in registry.waiting:
                sock.close()


def _listen(chief):
    """The chief's listening socket. A launcher's at the chief's address (it is this machine's). Rank 0's on every
    interface, as torchrun's store listens: the name in MASTER_ADDR may resolve to a loopback address on its own
    host (Debian's /etc/hosts) and to the host's address elsewhere."""
    if not chief.per_rank:
        listener = socket.socket(socket.AF_INET6 if ":" in chief.host else socket.AF_INET, socket.SOCK_STREAM)
        try:
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind((chief.host, chief.port))
        except OSError:
            listener.close()
            raise
        return listener
    if socket.has_dualstack_ipv6():
        return socket.create_server(("", chief.port), family=socket.AF_INET6, dualstack_ipv6=True)
    return socket.create_server(("", chief.port))


def _answer_all(registry, answer):
    with registry.lock:
        for sock in registry.waiting:
            try:
                _send(sock, answer)
            except OSError:
                pass


def _what_completes(chief):
    if chief.total_ranks is not None:
        return f"the job is complete when its machines' ranks add up to CM_WORKER_SIZE={chief.total_ranks}"
    return f"the job is complete when all {chief.launchers} {chief.member}s (WORLD_SIZE) have registered"


def _admit(sock, peer, key, chief, registry, slots, report):
    keep = False
    try:
        deadline = time.monotonic() + HANDSHAKE_SECONDS
        sock.settimeout(HANDSHAKE_SECONDS)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        job_secret.server_handshake(sock, key, chief.port)
        entry = _read_line(sock, deadline)
        host, ranks, order = entry.get("host"), entry.get("ranks"), entry.get("order")
        if (
            not isinstance(host, str)
            or not scheduler_env.HOST_PATTERN.fullmatch(host)
            or not isinstance(ranks, int)
            or not 1 <= ranks <= 32768
        ):
            raise RendezvousError("a registration must name its host (a host name or an IP address) and its ranks")
        if chief.per_rank and peer[0] == sock.getsockname()[0]:
            host = registry.own_host  # a rank on rank 0's host (a connection to itself): reached as rank 0 is
        problem = registry.add(host, ranks, order, sock)
        if problem:
            _send(sock, {"error": f"it refused this {chief.member}: {problem}"})
            report(f"chief's rendezvous: refused the {chief.member} of {host!r}: {problem}")
            return
        keep = True
    except JobAuthenticationError as e:
        report(f"chief's rendezvous: refused a connection from {peer[0]}: {e.strerror or e}")
    except (OSError, ValueError, AttributeError, RendezvousError) as e:
        report(f"chief's rendezvous: dropped a connection from {peer[0]}: {e}")
    finally:
        if not keep:
            sock.close()
        slots.release()
