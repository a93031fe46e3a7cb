"""The same-host collective ops (C++ ``HcomShm*``, ops/runtime/shm_engine.h) and when a group uses them.

A group uses the job's shared-memory segment when ``NPU_BRIDGE_COLLECTIVES`` allows it, this process has the
segment (npu-run's, or the host keeper's for ranks started one by one: ``shm_keeper``), and every member runs on
this host (the rank table's server of this rank). The ops take the same group and instance keys as TensorFlow's
collectives, carry the timeout attribute the NpuOptimizer pass sets, and run asynchronously on one progress thread
per group, in the order the group's leader runs them.
"""

import dataclasses
import os

import tensorflow as tf

from npu_bridge.core.collectives import shm_keeper, shm_segment
from npu_bridge.core.runtime import native_library
from npu_bridge.core.runtime.errors import CollectiveError
from npu_bridge.core.world import world

# What the engine moves as bytes; reductions take primitives.REDUCE_DTYPES.
MOVE_DTYPES = (
    tf.bfloat16,
    tf.float16,
    tf.float32,
    tf.float64,
    tf.int8,
    tf.uint8,
    tf.int16,
    tf.uint16,
    tf.int32,
    tf.uint32,
    tf.int64,
    tf.uint64,
    tf.bool,
)
_REDUCTIONS = {"Add": "sum", "Mul": "prod", "Max": "max", "Min": "min"}


@dataclasses.dataclass(frozen=True)
class Placement:
    """Where a group's members sit in the segment.

    Attributes:
      slots: each member's place among this host's ranks, in group-rank order.
      world_ranks: the members' world ranks.
      group_rank: this process's group rank.
      local_size: the number of ranks on this host.
      group_key: the group's collective key.
    """

    slots: tuple
    world_ranks: tuple
    group_rank: int
    local_size: int
    group_key: int


def placement(members, environ=None, host_tensors=True):
    """Returns the ``Placement`` of ``members`` when the group runs on the segment, else None.

    Args:
      host_tensors: False on the gpu backend, whose tensors take NCCL instead unless ``NPU_BRIDGE_COLLECTIVES=shm``.

    Raises:
      CollectiveError: ``NPU_BRIDGE_COLLECTIVES=shm`` and the group cannot use the segment.
      EnvironmentVariableError: ``NPU_BRIDGE_COLLECTIVES`` has another value than auto, shm or tf.
    """
    environ = os.environ if environ is None else environ
    choice = shm_segment.path_choice(environ)
    if choice == "tf" or (choice == "auto" and not host_tensors):
        return None
    reason = None
    current = world.environment_world()
    local = current.local_rank_ids
    if not shm_keeper.available(current, environ):
        reason = f"this process has no shared-memory segment (npu-run's {shm_segment.FD_VARIABLE} or a host keeper's)"
    elif not set(members.ranks) <= set(local):
        reason = f"not every rank of group {members.group!r} (ranks {list(members.ranks)}) runs on this host"
    if reason is None:
        return Placement(
            tuple(local.index(r) for r in members.ranks),
            tuple(members.ranks),
            members.rank,
            len(local),
            members.key,
        )
    if choice == "shm":
        raise CollectiveError(f"{shm_segment.PATH_VARIABLE}=shm, but {reason}; use auto or tf")
    return None


def carries_every_group(current, host_tensors=True, environ=None):
    """True when every collective the job's ranks build runs on the segment, so none needs TensorFlow's runtime:
    all ranks on this host, the segment present or coming from the host's keeper, ``NPU_BRIDGE_COLLECTIVES`` not
    ``tf``, and host tensors (the gpu backend's take NCCL unless ``shm`` was asked for).

    Args:
      current: this process's ``World``.
    """
    environ = os.environ if environ is None else environ
    choice = shm_segment.path_choice(environ)
    if choice == "tf" or (choice == "auto" and not host_tensors):
        return False
    return len(current.local_rank_ids) == current.rank_size and shm_keeper.available(current, environ)


def _attrs(place, instance_key, timeout):
    return dict(
        group_key=place.group_key,
        slots=list(place.slots),
        world_ranks=list(place.world_ranks),
        group_rank=place.group_rank,
        local_size=place.local_size,
        instance_key=instance_key,
        timeout_seconds=float(timeout),
    )


def all_reduce(x, place, merge_op, instance_key, timeout):
    """Element-wise ``merge_op`` ("Add", "Mul", "Max", "Min") of ``x`` over the group."""
    return native_library.ops().hcom_shm_all_reduce(
        x, reduction=_REDUCTIONS[merge_op], name="HcomAllReduce", **_attrs(place, instance_key, timeout)
    )


def reduce_scatter(x, place, merge_op, instance_key, timeout):
    """Slice ``group_rank`` (of ``len(slots)`` along dimension 0) of the element-wise ``merge_op`` of ``x``."""
    return native_library.ops().hcom_shm_reduce_scatter(
        x, reduction=_REDUCTIONS[merge_op], name="HcomReduceScatter", **_attrs(place, instance_key, timeout)
    )


def all_gather(x, place, instance_key, timeout):
    """Every member's ``x`` concatenated along dimension 0 in group-rank order."""
    return native_library.ops().hcom_shm_all_gather(x, name="HcomAllGather", **_attrs(place, instance_key, timeout))


def all_to_all(x, place, instance_key, timeout):
    """Slice k of ``x`` (of ``len(slots)`` along dimension 0) goes to member k; slice k of the result is member k's."""
    return native_library.ops().hcom_shm_all_to_all(x, name="HcomAllToAll", **_attrs(place, instance_key, timeout))


def broadcast_send(x, place, instance_key, timeout):
    """The root's side of a broadcast."""
    return native_library.ops().hcom_shm_broadcast_send(
        x, name="HcomBroadcastSend", **_attrs(place, instance_key, timeout)
    )


def broadcast_recv(shape, dtype, place, root, instance_key, timeout):
    """A receiver's side of a broadcast from group rank ``root``."""
    return native_library.ops().hcom_shm_broadcast_recv(
        T=dtype, shape=shape, root=root, name="HcomBroadcastRecv", **_attrs(place, instance_key, timeout)
    )
