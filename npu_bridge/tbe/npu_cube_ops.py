"""Upstream import path for TBE cube ops (facade)."""

from npu_bridge.pending import pending

deformable_conv2d = pending("npu_bridge.tbe.npu_cube_ops.deformable_conv2d", "compute")
deformable_offsets_grad = pending("npu_bridge.tbe.npu_cube_ops.deformable_offsets_grad", "compute")
