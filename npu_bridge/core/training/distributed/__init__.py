"""Data-parallel training helpers over the HCCL collectives (upstream's npu_optimizer / npu_hook /
npu_callbacks distributed API).

  fusion              cuts a step's gradients into segments by the group's split strategy
  averaging           allreduce-mean of gradients (fused), ``npu_allreduce``, module-level allreduce / reduce
  optimizers          ``NPUDistributedOptimizer``, ``npu_distributed_optimizer_wrapper``,
                      ``KerasDistributeOptimizer``
  variable_broadcast  ``broadcast_global_variables``, ``NPUBroadcastGlobalVariablesHook`` and the Keras callback
"""
