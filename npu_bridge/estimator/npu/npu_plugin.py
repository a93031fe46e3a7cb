"""Upstream import path ``npu_bridge.estimator.npu.npu_plugin`` (facade)."""

from npu_bridge.core.collectives.remote_memory import (
    get_rdma_cache,
    get_var_addr_and_size,
    init_rdma_pool,
    malloc_shared_memory,
    rdma_remote_init,
    rdma_remote_register,
)
from npu_bridge.core.device.device_mode import is_inf_nan_enabled, set_device_sat_mode
from npu_bridge.core.session.resource import npu_close, npu_resource_init, npu_resource_shutdown

__all__ = [
    "get_rdma_cache",
    "get_var_addr_and_size",
    "init_rdma_pool",
    "malloc_shared_memory",
    "rdma_remote_init",
    "rdma_remote_register",
    "is_inf_nan_enabled",
    "set_device_sat_mode",
    "npu_close",
    "npu_resource_init",
    "npu_resource_shutdown",
]
