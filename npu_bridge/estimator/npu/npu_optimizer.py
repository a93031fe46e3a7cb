"""Upstream import path for distributed and loss-scaling optimizer wrappers (facade)."""

from npu_bridge.loss_scale.npu_optimizer import NPUOptimizer
from npu_bridge.pending import pending

NPUDistributedOptimizer = pending("npu_bridge.estimator.npu.npu_optimizer.NPUDistributedOptimizer", "collectives")
KerasDistributeOptimizer = pending("npu_bridge.estimator.npu.npu_optimizer.KerasDistributeOptimizer", "collectives")
npu_distributed_optimizer_wrapper = pending("npu_bridge.estimator.npu.npu_optimizer.npu_distributed_optimizer_wrapper", "collectives")
npu_allreduce = pending("npu_bridge.estimator.npu.npu_optimizer.npu_allreduce", "collectives")
allreduce = pending("npu_bridge.estimator.npu.npu_optimizer.allreduce", "collectives")
reduce = pending("npu_bridge.estimator.npu.npu_optimizer.reduce", "collectives")
