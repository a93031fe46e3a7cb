"""Upstream import path for TBE cube ops (facade)."""

from npu_bridge.core.runtime.unsupported import unsupported

__all__ = ["deformable_conv2d", "deformable_offsets_grad"]

_REASON = "a TBE deformable-convolution kernel of the NPU; TensorFlow has no deformable convolution to run instead"
deformable_conv2d = unsupported("npu_bridge.tbe.npu_cube_ops.deformable_conv2d", _REASON)
deformable_offsets_grad = unsupported("npu_bridge.tbe.npu_cube_ops.deformable_offsets_grad", _REASON)
