"""Upstream import path ``npu_bridge.estimator.npu.npu_plugin`` (facade)."""

from npu_bridge.device_mode import is_inf_nan_enabled, set_device_sat_mode
from npu_bridge.pending import unsupported
from npu_bridge.resource import npu_close, npu_resource_init, npu_resource_shutdown

_MODULE = "npu_bridge.estimator.npu.npu_plugin"
_RDMA = "it registers NPU device memory for RDMA between NPUs; there is no device memory off the NPU"
init_rdma_pool = unsupported(f"{_MODULE}.init_rdma_pool", _RDMA)
rdma_remote_register = unsupported(f"{_MODULE}.rdma_remote_register", _RDMA)
rdma_remote_init = unsupported(f"{_MODULE}.rdma_remote_init", _RDMA)
get_var_addr_and_size = unsupported(f"{_MODULE}.get_var_addr_and_size", _RDMA)
malloc_shared_memory = unsupported(f"{_MODULE}.malloc_shared_memory", _RDMA)
get_rdma_cache = unsupported(f"{_MODULE}.get_rdma_cache", _RDMA)
