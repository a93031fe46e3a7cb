"""Collective instance keys that every rank computes alike, without talking to the others.

TensorFlow matches the members of one collective by (group key, instance key), and remembers the shape and
type of an instance for the life of the process. So keys must be equal on every rank for the same
collective, and never reused for a different one. The rule, SPMD as on Ascend (every rank builds the same
collectives of a group in the same order):

* the n-th collective a process builds in a group gets ``hash(group key, n)``;
* the n-th send from rank a to rank b with tag t pairs with the n-th receive at b from a with tag t;
* an exchange whose size varies between runs (``all_to_all_v``) gets a block of ``BUCKETS`` consecutive
  keys, one per power-of-two size, so a changing size never meets a remembered shape.

Static keys lie in [1, 2**30), blocks in [2**30, 2**31 - 1): the two never collide.
"""

import hashlib
import threading

from npu_bridge.core.world import groups

BUCKETS = 64
_STATIC_RANGE = 2**30 - 1
_BLOCK_RANGE = 2**30 - 1 - BUCKETS

_lock = threading.Lock()
_counters = {}


def _next(counter_key):
    with _lock:
        n = _counters.get(counter_key, 0)
        _counters[counter_key] = n + 1
    return n


def _digest(*parts):
    text = "\0".join(str(p) for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def instance_key(group_key):
    """Returns the key of the next collective of the group with ``group_key``."""
    n = _next(("instance", group_key))
    return 1 + _digest("instance", group_key, n) % _STATIC_RANGE


def send_recv_key(group_key, source, destination, tag):
    """Returns the key of the next transfer with ``tag`` from world rank ``source`` to ``destination``."""
    n = _next(("send_recv", group_key, source, destination, tag))
    return 1 + _digest("send_recv", group_key, source, destination, tag, n) % _STATIC_RANGE


def bucket_block(group_key):
    """Returns the first key of a block of ``BUCKETS`` keys for the next size-varying collective of a group."""
    n = _next(("block", group_key))
    return 2**30 + _digest("block", group_key, n) % _BLOCK_RANGE


def pair_group_key(group_name, rank_a, rank_b):
    """Returns the group key of the two-member group that carries send/receive between two world ranks."""
    return groups.group_key("\0send_recv\0" + group_name, (rank_a, rank_b))


def transfer_group_key(group_name, source, destination):
    """Returns the key of the shared-memory channel that carries sends from world rank ``source`` to ``destination``."""
    return groups.group_key(f"\0transfer\0{group_name}\0{source}>{destination}", (source, destination))
