"""Upstream's remote NPU memory access (RDMA by device address): not available here.

``hccl_ops.remote_read`` & co take rows of [remote rank, device address, length] and ``npu_plugin``'s RDMA
functions register device memory. There are no device addresses in this emulation, so each function raises
``NotAvailableError`` saying so and what to use instead.
"""

from npu_bridge.errors import NotAvailableError

_INSTEAD = {
    "hccl_ops": "use hccl_ops.send / receive or all_to_all_v to move tensors between ranks",
    "npu_plugin": "keep such tables in TensorFlow variables and exchange them with hccl_ops collectives",
}


def _unavailable(module, name):
    def unavailable(*args, **kwargs):
        raise NotAvailableError(
            f"npu_bridge.{'hccl.hccl_ops' if module == 'hccl_ops' else 'estimator.npu.npu_plugin'}.{name} accesses "
            f"NPU memory by device address (RDMA); there are no such addresses here, so it cannot work. "
            f"{_INSTEAD[module].capitalize()}.")

    unavailable.__name__ = unavailable.__qualname__ = name
    unavailable.__doc__ = "Not available here: remote NPU memory access by device address (RDMA)."
    return unavailable


remote_read = _unavailable("hccl_ops", "remote_read")
remote_ref_read = _unavailable("hccl_ops", "remote_ref_read")
remote_write = _unavailable("hccl_ops", "remote_write")
remote_scatter_write = _unavailable("hccl_ops", "remote_scatter_write")
gather_all_to_all_v = _unavailable("hccl_ops", "gather_all_to_all_v")
init_rdma_pool = _unavailable("npu_plugin", "init_rdma_pool")
rdma_remote_register = _unavailable("npu_plugin", "rdma_remote_register")
rdma_remote_init = _unavailable("npu_plugin", "rdma_remote_init")
get_var_addr_and_size = _unavailable("npu_plugin", "get_var_addr_and_size")
malloc_shared_memory = _unavailable("npu_plugin", "malloc_shared_memory")
get_rdma_cache = _unavailable("npu_plugin", "get_rdma_cache")
