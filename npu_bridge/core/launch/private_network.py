"""A private network for a job whose ranks all run on this machine.

TensorFlow's gRPC server listens on every interface (``0.0.0.0:port``, whatever the cluster spec says) and
authenticates nobody, so any process that reaches a rank's port can run graphs in that rank. A job that lives on
one machine needs no network but loopback: ``enter`` moves the launcher into a new network namespace holding only
its own loopback interface (plus the rank table's host addresses, put on that loopback), before any rank starts,
so that every rank inherits it. No process outside the job, on this machine or another, can then connect to a
rank's server, not even through 127.0.0.1; the ranks in turn cannot reach other machines.

Mechanisms, tried in order: as root, a new network namespace (``unshare(CLONE_NEWNET)``); otherwise a new user
namespace that maps this user to itself together with the network namespace (needs unprivileged user
namespaces, on by default in most Linux distributions). ``enter`` must run while the process has one thread.
"""

import ctypes
import ctypes.util
import dataclasses
import fcntl
import ipaddress
import os
import socket
import struct
from typing import Optional

_CLONE_NEWUSER = 0x10000000
_CLONE_NEWNET = 0x40000000
_SIOCGIFFLAGS = 0x8913
_SIOCSIFFLAGS = 0x8914
_SIOCSIFADDR = 0x8916
_SIOCSIFNETMASK = 0x891C
_IFF_UP = 0x1
_LOOPBACK = "lo"


@dataclasses.dataclass(frozen=True)
class Outcome:
    """What ``enter`` did.

    Attributes:
      private: True when this process now has a network of its own.
      mechanism: "a network namespace" or "a user and network namespace" when private (or how it was joined).
      reason: why the network is not private (an OS error, in words), when it is not.
    """

    private: bool
    mechanism: Optional[str] = None
    reason: Optional[str] = None


def enter(hosts):
    """Moves this process into a private network with only loopback, holding ``hosts`` as local addresses.

    Args:
      hosts: the IP addresses the job's ranks listen at and connect to (rank table host addresses).
    Returns:
      An ``Outcome``; on failure nothing has changed (the process keeps this machine's network).
    """
    extra = [str(a) for a in (ipaddress.ip_address(h) for h in dict.fromkeys(hosts)) if not a.is_loopback]
    libc = _libc()
    if libc is None:
        return Outcome(False, reason="this system has no unshare() (Linux only)")
    # The ids must be read before unshare(CLONE_NEWUSER): afterwards, until the maps are written, this process
    # sees itself as the overflow user (65534), and the kernel refuses a map of that id.
    uid, gid = os.geteuid(), os.getegid()
    if uid == 0:
        mechanism, flags = "a network namespace", _CLONE_NEWNET
    else:
        mechanism, flags = "a user and network namespace", _CLONE_NEWUSER | _CLONE_NEWNET
    if libc.unshare(flags) != 0:
        number = ctypes.get_errno()
        hint = "" if uid == 0 else " (unprivileged user namespaces may be off: kernel.unprivileged_userns_clone)"
        return Outcome(False, reason=f"unshare: {os.strerror(number)}{hint}")
    try:
        if flags & _CLONE_NEWUSER:
            _map_to_self(uid, gid)
        _bring_up_loopback()
        for index, address in enumerate(extra, 1):
            _add_address(address, index)
    except OSError as e:
        # The namespace exists but is unusable: a job in it could not talk. Fail loudly rather than run ranks
        # that would wait for each other until HCCL_CONNECT_TIMEOUT.
        raise OSError(e.errno, f"cannot set up the job's private network: {e.strerror or e}") from None
    return Outcome(True, mechanism=mechanism)


def _libc():
    name = ctypes.util.find_library("c")
    if not name or not hasattr(os, "geteuid"):
        return None
    libc = ctypes.CDLL(name, use_errno=True)
    return libc if hasattr(libc, "unshare") else None


def _map_to_self(uid, gid):
    """Maps user ``uid`` and group ``gid`` (this process's, read before unshare) to themselves in the new user
    namespace, so that files keep their owner."""
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w", encoding="ascii") as f:
            f.write(text)


def _interface_request(name, payload=b""):
    return struct.pack("16s", name.encode()) + payload.ljust(24, b"\0")


def _sockaddr_in(packed):
    return struct.pack("=H2s4s8s", socket.AF_INET, b"\0\0", packed, b"")


def _bring_up_loopback():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        flags = struct.unpack_from("H", fcntl.ioctl(s, _SIOCGIFFLAGS, _interface_request(_LOOPBACK)), 16)[0]
        fcntl.ioctl(s, _SIOCSIFFLAGS, _interface_request(_LOOPBACK, struct.pack("H", flags | _IFF_UP)))


def _add_address(address, index):
    """Puts ``address`` on the loopback interface (IPv4 under the alias label ``lo:index``, IPv6 as a /128)."""
    ip = ipaddress.ip_address(address)
    if ip.version == 4:
        label = f"{_LOOPBACK}:{index}"
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            fcntl.ioctl(s, _SIOCSIFADDR, _interface_request(label, _sockaddr_in(ip.packed)))
            fcntl.ioctl(s, _SIOCSIFNETMASK, _interface_request(label, _sockaddr_in(b"\xff" * 4)))
    else:
        request = struct.pack("16sIi", ip.packed, 128, socket.if_nametoindex(_LOOPBACK))
        with socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as s:
            fcntl.ioctl(s, _SIOCSIFADDR, request)
