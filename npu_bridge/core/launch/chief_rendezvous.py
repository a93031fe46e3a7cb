"""The chief's rendezvous: the launchers of a job whose machines nothing lists find each other at one address.

Upstream's ``CM_CHIEF_IP`` / ``CM_CHIEF_PORT`` mean a chief that every worker registers with; torchrun-style
launchers (Kubeflow's PyTorchJob: ``MASTER_ADDR`` / ``MASTER_PORT``, ``WORLD_SIZE`` pods, ``RANK`` the pod) name
one too. One ``npu-run`` per machine: the one at the chief's address listens there; every other one connects,
proves the job secret (``job_secret``'s handshake, keyed by the job id) and says where it runs and how many ranks
it starts. Once all have registered, the chief sends everyone the same list of machines, from which each launcher
writes the same rank table (``scheduler_plan.write_rank_table``) and starts its share as with ``--rank-table``.

Order of the machines: the chief's first, then by the launchers' own order (torchrun's ``RANK``) or, for CM, by
address. Bounded: at most ``MAX_LAUNCHERS`` connections are served at once, each must finish its handshake and
registration within ``HANDSHAKE_SECONDS``, a registration is one line of at most ``MAX_LINE`` bytes, and the whole
rendezvous ends with ``HCCL_CONNECT_TIMEOUT``, naming who has not arrived.
"""

import dataclasses
import errno
import ipaddress
import json
import re
import socket
import threading
import time
from typing import Optional

from npu_bridge.core.launch import job_secret
from npu_bridge.core.runtime.errors import JobAuthenticationError, LaunchError, RankTableError, shortened
from npu_bridge.core.world import scheduler_env, world

MAX_LAUNCHERS = 256
MAX_LINE = 4096
HANDSHAKE_SECONDS = 10.0
_HOST = re.compile(r"[A-Za-z0-9._:-]{1,253}")  # a host name, an IPv4 or an IPv6 address


@dataclasses.dataclass(frozen=True)
class Chief:
    """Where the launchers meet and what completes the job.

    Attributes:
      source: "cm" or "torchrun", for messages.
      host: the chief's address (the chief's launcher listens there).
      port: the rendezvous port.
      is_chief: True for the launcher that serves the rendezvous.
      my_host: this machine's address in the job (None: the address it reaches the chief from).
      total_ranks: the job's ranks (CM), or None.
      launchers: the job's launchers (torchrun), or None.
      order: this launcher's place among them (torchrun's ``RANK``), or None.
    """

    source: str
    host: str
    port: int
    is_chief: bool
    my_host: Optional[str]
    total_ranks: Optional[int] = None
    launchers: Optional[int] = None
    order: Optional[int] = None


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
    except RankTableError as e:
        raise LaunchError(str(e)) from None
    if placement is None or placement.one_host or "MASTER_ADDR" not in env or "MASTER_PORT" not in env:
        return None
    port = _int(env, "MASTER_PORT", 1, 65535)
    host = env["MASTER_ADDR"].strip()
    if not _HOST.fullmatch(host):
        raise LaunchError(f"MASTER_ADDR={shortened(env['MASTER_ADDR'])} must be a host name or an IP address")
    return Chief(
        "torchrun",
        host,
        port,
        placement.rank_id == 0,
        host if placement.rank_id == 0 else None,
        launchers=placement.rank_size,
        order=placement.rank_id,
    )


def _read_line(sock, deadline):
    data = b""
    while not data.endswith(b"\n"):
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        chunk = sock.recv(MAX_LINE + 1 - len(data))
        if not chunk:
            raise ConnectionError("the connection closed before a whole line arrived")
        data += chunk
        if len(data) > MAX_LINE:
            raise LaunchError(f"a registration line longer than {MAX_LINE} bytes")
    return json.loads(data.decode("utf-8"))


def _send(sock, value):
    sock.sendall(json.dumps(value).encode("utf-8") + b"\n")


def register(chief, key, ranks, timeout, report):
    """A launcher that is not the chief: registers with the chief and returns the job's machines.

    Returns:
      ([(host, ranks), ...] in the job's order, this machine's host among them).
    Raises:
      LaunchError: the chief could not be reached, refused this launcher, or did not answer in time.
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
                raise LaunchError(f"the chief at {chief.host}:{chief.port} refused this launcher: {answer['error']}")
            return [(str(h), int(n)) for h, n in answer["machines"]], host
        except (OSError, ValueError, KeyError, TypeError) as e:
            if isinstance(e, JobAuthenticationError) and e.errno == errno.EACCES:  # a closed one is tried again
                raise LaunchError(
                    f"the chief at {chief.host}:{chief.port}: {e.strerror or e} (every launcher needs the same "
                    "--job-secret file and --job-id)"
                ) from None
            last = e
            if not told:
                report(f"waiting for the chief's rendezvous at {chief.host}:{chief.port} ({chief.source})")
                told = True
            time.sleep(pause)
            pause = min(0.5, pause * 2)
    raise LaunchError(
        f"the chief's rendezvous at {chief.host}:{chief.port} ({chief.source}) did not answer within "
        f"HCCL_CONNECT_TIMEOUT={timeout} s (last: {last}); start the chief's npu-run, or check the address"
    )


class _Registry:
    """The chief's view of the launchers so far; complete when they cover the job."""

    def __init__(self, chief, ranks):
        self.chief = chief
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.entries = {chief.host: (0 if chief.order is None else chief.order, ranks)}
        self.waiting = []  # the registered launchers' connections, answered once the job is complete

    def add(self, host, ranks, order, sock):
        """Registers a launcher; returns why it is refused, or None."""
        with self.lock:
            if host in self.entries:
                return f"a launcher for {host} has registered already (one npu-run per machine)"
            if self.chief.launchers is not None:
                if not isinstance(order, int) or not 0 <= order < self.chief.launchers:
                    return f"its RANK {order!r} is not a launcher of the {self.chief.launchers}"
                if order in [o for o, _ in self.entries.values()]:
                    return f"another launcher has RANK {order} already"
            total = sum(n for _, n in self.entries.values()) + ranks
            if self.chief.total_ranks is not None and total > self.chief.total_ranks:
                return f"its {ranks} ranks would make the job larger than CM_WORKER_SIZE={self.chief.total_ranks}"
            self.entries[host] = (order if order is not None else 1, ranks)
            self.waiting.append(sock)
            if total == self.chief.total_ranks or len(self.entries) == self.chief.launchers:
                self.done.set()
            return None

    def machines(self):
        ordered = sorted(self.entries.items(), key=lambda e: (e[0] != self.chief.host, e[1][0], _address_key(e[0])))
        return [(host, n) for host, (_, n) in ordered]


def _address_key(host):
    try:
        address = ipaddress.ip_address(host)
        return (0, address.version, int(address), host)
    except ValueError:
        return (1, 0, 0, host)


def serve(chief, key, ranks, timeout, report):
    """The chief's launcher: serves the rendezvous until every launcher registered; returns the job's machines.

    Raises:
      LaunchError: the chief's address cannot be bound, or the job did not complete in time.
    """
    registry = _Registry(chief, ranks)
    if chief.total_ranks == ranks or chief.launchers == 1:
        return registry.machines()
    family = socket.AF_INET6 if ":" in chief.host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((chief.host, chief.port))
    except OSError as e:
        listener.close()
        raise LaunchError(f"the chief's rendezvous cannot listen at {chief.host}:{chief.port}: {e.strerror}") from None
    listener.listen(MAX_LAUNCHERS)
    listener.settimeout(0.02)  # how soon the loop sees the job complete (a registering thread completes it)
    slots = threading.BoundedSemaphore(MAX_LAUNCHERS)
    report(f"chief's rendezvous at {chief.host}:{chief.port} ({chief.source}): waiting for the other launchers")
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
            have = sorted(registry.entries)
            raise LaunchError(
                f"the chief's rendezvous at {chief.host}:{chief.port} ({chief.source}) was not complete within "
                f"HCCL_CONNECT_TIMEOUT={timeout} s: registered {len(have)} machines ({', '.join(have)}); "
                f"{_what_completes(chief)}"
            )
        machines = registry.machines()
        with registry.lock:
            for sock in registry.waiting:
                try:
                    _send(sock, {"machines": machines})
                except OSError:
                    pass
        return machines
    finally:
        listener.close()
        with registry.lock:
            for sock in registry.waiting:
                sock.close()


def _what_completes(chief):
    if chief.total_ranks is not None:
        return f"the job is complete when its machines' ranks add up to CM_WORKER_SIZE={chief.total_ranks}"
    return f"the job is complete when all {chief.launchers} launchers (WORLD_SIZE) have registered"


def _admit(sock, peer, key, chief, registry, slots, report):
    keep = False
    try:
        deadline = time.monotonic() + HANDSHAKE_SECONDS
        sock.settimeout(HANDSHAKE_SECONDS)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        job_secret.server_handshake(sock, key, chief.port)
        entry = _read_line(sock, deadline)
        host, ranks, order = entry.get("host"), entry.get("ranks"), entry.get("order")
        if not isinstance(host, str) or not host or not isinstance(ranks, int) or not 1 <= ranks <= 32768:
            raise LaunchError("a registration must name its host and its ranks")
        problem = registry.add(host, ranks, order, sock)
        if problem:
            _send(sock, {"error": problem})
            report(f"chief's rendezvous: refused the launcher of {host!r}: {problem}")
            return
        keep = True
    except JobAuthenticationError as e:
        report(f"chief's rendezvous: refused a connection from {peer[0]}: {e.strerror or e}")
    except (OSError, ValueError, AttributeError, LaunchError) as e:
        report(f"chief's rendezvous: dropped a connection from {peer[0]}: {e}")
    finally:
        if not keep:
            sock.close()
        slots.release()
