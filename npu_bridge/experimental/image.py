"""Upstream import path for experimental image ops (facade)."""

from npu_bridge.core.runtime.unsupported import unsupported

__all__ = ["decode_image"]

decode_image = unsupported(
    "npu_bridge.experimental.image.decode_image", "it decodes on the NPU's DVPP image unit; use tf.io.decode_image"
)
