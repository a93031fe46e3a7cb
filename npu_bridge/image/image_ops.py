"""Upstream import path for image decode ops (facade)."""

from npu_bridge.pending import pending

decode_and_resize_jpeg = pending("npu_bridge.image.image_ops.decode_and_resize_jpeg", "compute")
decode_and_crop_and_resize_jpeg = pending("npu_bridge.image.image_ops.decode_and_crop_and_resize_jpeg", "compute")
