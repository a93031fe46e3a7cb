"""Upstream import path ``npu_bridge.tf_adapter`` (upstream's SWIG module; facade).

Its ``DT_*`` constants are TensorFlow's DataType enum values; any other name looked up in this module raises
``NotSupportedOffNpuError`` when used.
"""

from npu_bridge.core.runtime.tf_adapter_module import DATA_TYPES, module_getattr

__all__ = list(DATA_TYPES)  # the DT_* constants, looked up by __getattr__

__getattr__ = module_getattr
