"""Upstream import path for distributed and loss-scaling optimizer wrappers (facade)."""

from npu_bridge.distributed.averaging import allreduce, npu_allreduce, reduce
from npu_bridge.distributed.optimizers import (KerasDistributeOptimizer, NPUDistributedOptimizer,
                                               npu_distributed_optimizer_wrapper)
from npu_bridge.loss_scale.npu_optimizer import NPUOptimizer
