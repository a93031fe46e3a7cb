"""Upstream import path ``npu_bridge.estimator.npu.npu_plugin`` (facade)."""

from npu_bridge.collectives.remote_memory import (get_rdma_cache, get_var_addr_and_size, init_rdma_pool,
                                                  malloc_shared_memory, rdma_remote_init, rdma_remote_register)
from npu_bridge.pending import pending
from npu_bridge.resource import npu_close, npu_resource_init, npu_resource_shutdown

_MODULE = "npu_bridge.estimator.npu.npu_plugin"
set_device_sat_mode = pending(f"{_MODULE}.set_device_sat_mode", "compute")
is_inf_nan_enabled = pending(f"{_MODULE}.is_inf_nan_enabled", "compute")
