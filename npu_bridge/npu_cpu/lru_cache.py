"""Upstream import path ``npu_bridge.npu_cpu.lru_cache``: the host-embedding LRU cache ops (facade).

They keep embedding rows in NPU device memory and run AI CPU kernels that have no counterpart here; any name
looked up in this module raises ``NotSupportedOffNpuError`` when used.
"""

from npu_bridge.core.runtime.unsupported import module_getattr

__all__ = []  # every name is looked up by __getattr__ and raises when used

__getattr__ = module_getattr(
    "npu_bridge.npu_cpu.lru_cache",
    "the host-embedding LRU cache ops keep embedding rows in NPU device memory and run AI CPU kernels that "
    "have no counterpart off the NPU",
)
