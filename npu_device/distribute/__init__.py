"""Upstream module path ``npu_device.distribute`` (facade)."""

from npu_bridge.core.tf2.distribute import (
    all_reduce,
    broadcast,
    npu_distributed_keras_optimizer_wrapper,
    shard_and_rebatch_dataset,
)

__all__ = ["all_reduce", "broadcast", "npu_distributed_keras_optimizer_wrapper", "shard_and_rebatch_dataset"]
