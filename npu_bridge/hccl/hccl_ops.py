"""Upstream import path for HCCL collective ops (facade over ``npu_bridge.core.collectives``)."""

from npu_bridge.core.collectives.operations import (
    all_to_all_v,
    all_to_all_v_c,
    allgather,
    allreduce,
    broadcast,
    receive,
    reduce,
    reduce_scatter,
    send,
)
from npu_bridge.core.collectives.remote_memory import (
    gather_all_to_all_v,
    remote_read,
    remote_ref_read,
    remote_scatter_write,
    remote_write,
)

__all__ = [
    "allreduce",
    "allgather",
    "broadcast",
    "reduce",
    "reduce_scatter",
    "send",
    "receive",
    "remote_read",
    "remote_ref_read",
    "remote_write",
    "remote_scatter_write",
    "gather_all_to_all_v",
    "all_to_all_v",
    "all_to_all_v_c",
]
