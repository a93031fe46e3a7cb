"""Whether a rank table's host address belongs to this machine.

An address is this machine's when a socket can be bound to it: the kernel refuses (EADDRNOTAVAIL) an address
no interface of this machine (in this network namespace) holds. A host name counts when one of its resolved
addresses does. Loopback addresses belong to every machine. With Linux's ``ip_nonlocal_bind`` /
``ip_freebind`` settings every address binds; the launcher then finds several servers of a multi-machine rank
table local and asks for ``--server-id``.
"""

import socket


def is_local(host):
    """Returns True when ``host`` (an IP address or host name) is an address of this machine.

    Args:
      host: IPv4 / IPv6 address or host name, as the rank table gives it.
    """
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return False
    return any(_bindable(family, sockaddr) for family, _, _, _, sockaddr in infos)


def _bindable(family, sockaddr):
    try:
        with socket.socket(family, socket.SOCK_STREAM) as s:
            s.bind((sockaddr[0], 0, *sockaddr[2:]))
    except OSError:
        return False
    return True
