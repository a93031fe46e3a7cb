"""Upstream import path ``npu_bridge.npu_cpu.npu_cpu_ops``: Ascend AI CPU ops (embedding hash tables, OCR, ...).

``randomchoicewithmask`` is provided (``npu_bridge.core.compute.random_choice``). The others keep their state in NPU
device memory or run AI CPU kernels that have no counterpart here; any other name looked up in this module raises
``NotSupportedOffNpuError`` when used.
"""

from npu_bridge.core.compute.random_choice import randomchoicewithmask
from npu_bridge.core.runtime.unsupported import module_getattr

__all__ = ["randomchoicewithmask"]  # every other name is looked up by __getattr__ and raises when used

__getattr__ = module_getattr(
    "npu_bridge.npu_cpu.npu_cpu_ops",
    "Ascend AI CPU ops other than randomchoicewithmask (embedding hash tables, OCR, ...) keep their state in NPU "
    "device memory or run AI CPU kernels that have no counterpart off the NPU",
)
