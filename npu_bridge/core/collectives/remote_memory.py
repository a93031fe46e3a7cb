"""Upstream's remote NPU memory access (RDMA by device address): not supported off the NPU.

``hccl_ops.remote_read`` & co take rows of [remote rank, device address, length] and ``npu_plugin``'s RDMA
functions register device memory. There are no device addresses in this emulation, so each function raises
``NotSupportedOffNpuError`` saying so and what to use instead (and docs/fidelity.md lists them).
"""

from npu_bridge.core.runtime.unsupported import unsupported

_ADDRESSES = "it accesses NPU memory by device address (RDMA); there are no such addresses off the NPU"
_HCCL = f"{_ADDRESSES}. Use hccl_ops.send / receive or all_to_all_v to move tensors between ranks"
_PLUGIN = f"{_ADDRESSES}. Keep such tables in TensorFlow variables and exchange them with hccl_ops collectives"

remote_read = unsupported("npu_bridge.hccl.hccl_ops.remote_read", _HCCL)
remote_ref_read = unsupported("npu_bridge.hccl.hccl_ops.remote_ref_read", _HCCL)
remote_write = unsupported("npu_bridge.hccl.hccl_ops.remote_write", _HCCL)
remote_scatter_write = unsupported("npu_bridge.hccl.hccl_ops.remote_scatter_write", _HCCL)
gather_all_to_all_v = unsupported("npu_bridge.hccl.hccl_ops.gather_all_to_all_v", _HCCL)
init_rdma_pool = unsupported("npu_bridge.estimator.npu.npu_plugin.init_rdma_pool", _PLUGIN)
rdma_remote_register = unsupported("npu_bridge.estimator.npu.npu_plugin.rdma_remote_register", _PLUGIN)
rdma_remote_init = unsupported("npu_bridge.estimator.npu.npu_plugin.rdma_remote_init", _PLUGIN)
get_var_addr_and_size = unsupported("npu_bridge.estimator.npu.npu_plugin.get_var_addr_and_size", _PLUGIN)
malloc_shared_memory = unsupported("npu_bridge.estimator.npu.npu_plugin.malloc_shared_memory", _PLUGIN)
get_rdma_cache = unsupported("npu_bridge.estimator.npu.npu_plugin.get_rdma_cache", _PLUGIN)
