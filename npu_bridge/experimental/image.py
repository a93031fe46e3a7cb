"""Upstream import path for experimental image ops (facade)."""

from npu_bridge.pending import pending

decode_image = pending("npu_bridge.experimental.image.decode_image", "compute")
