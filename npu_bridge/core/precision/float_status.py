"""Upstream's float-status ops, over the emulated device overflow register.

On Ascend the AI Core sets a device-wide status bit when a floating-point computation overflows; loss scaling
clears it before a step and reads it after the gradients. Here, in every graph that uses these ops, the
NpuOptimizer pass puts an overflow check after each floating-point op output (``NpuOverflowCheck``), and the
checks set the register. Run the ops in a bridged session (a config with NpuOptimizer) so the pass runs.
"""

from npu_bridge.core.runtime import native_library


def npu_alloc_float_status(name=None):
    """Returns a float32 [1] status buffer (zeros)."""
    return native_library.ops().npu_alloc_float_status(name=name)


def npu_get_float_status(input_data, name=None):
    """Returns a tensor shaped like ``input_data``: ones if an overflow happened since the last clear, else zeros."""
    return native_library.ops().npu_get_float_status(input_data, name=name)


def npu_clear_float_status(float_status, name=None):
    """Clears the register; returns zeros shaped like ``float_status``."""
    return native_library.ops().npu_clear_float_status(float_status, name=name)


def npu_get_float_status_v2(name=None):
    """Returns int32 [8]: all zero when no overflow happened since the last clear."""
    return native_library.ops().npu_get_float_status_v2(name=name)


def npu_clear_float_status_v2(name=None):
    """Returns an op that clears the register."""
    return native_library.ops().npu_clear_float_status_v2(name=name)
