"""Upstream import path ``npu_bridge.estimator.npu.npu_plugin`` (facade)."""

from npu_bridge.pending import pending
from npu_bridge.resource import npu_close, npu_resource_init, npu_resource_shutdown

_MODULE = "npu_bridge.estimator.npu.npu_plugin"
set_device_sat_mode = pending(f"{_MODULE}.set_device_sat_mode", "compute")
is_inf_nan_enabled = pending(f"{_MODULE}.is_inf_nan_enabled", "compute")
init_rdma_pool = pending(f"{_MODULE}.init_rdma_pool", "collectives")
rdma_remote_register = pending(f"{_MODULE}.rdma_remote_register", "collectives")
rdma_remote_init = pending(f"{_MODULE}.rdma_remote_init", "collectives")
get_var_addr_and_size = pending(f"{_MODULE}.get_var_addr_and_size", "collectives")
malloc_shared_memory = pending(f"{_MODULE}.malloc_shared_memory", "collectives")
get_rdma_cache = pending(f"{_MODULE}.get_rdma_cache", "collectives")
