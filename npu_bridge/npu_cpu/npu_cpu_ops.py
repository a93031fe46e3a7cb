"""Upstream import path ``npu_bridge.npu_cpu.npu_cpu_ops``: Ascend AI CPU ops (embedding hash tables, OCR, ...).

They keep their state in NPU device memory or run AI CPU kernels that have no counterpart here; any name looked
up in this module raises ``NotSupportedOffNpuError`` when used.
"""

from npu_bridge.core.runtime.unsupported import unsupported

__all__ = []  # every name is looked up by __getattr__ and raises when used

_REASON = (
    "Ascend AI CPU ops (embedding hash tables, OCR, ...) keep their state in NPU device memory or run AI CPU "
    "kernels that have no counterpart off the NPU"
)
unsupported("npu_bridge.npu_cpu.npu_cpu_ops.*", _REASON)


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return unsupported(f"npu_bridge.npu_cpu.npu_cpu_ops.{name}", _REASON, register=False)
