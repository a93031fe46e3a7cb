"""Upstream import path for distributed and loss-scaling optimizer wrappers (facade)."""

from npu_bridge.core.training.distributed.averaging import allreduce, npu_allreduce, reduce
from npu_bridge.core.training.distributed.optimizers import (
    KerasDistributeOptimizer,
    NPUDistributedOptimizer,
    npu_distributed_optimizer_wrapper,
)
from npu_bridge.core.training.loss_scale.npu_optimizer import NPUOptimizer

__all__ = [
    "allreduce",
    "npu_allreduce",
    "reduce",
    "KerasDistributeOptimizer",
    "NPUDistributedOptimizer",
    "npu_distributed_optimizer_wrapper",
    "NPUOptimizer",
]
