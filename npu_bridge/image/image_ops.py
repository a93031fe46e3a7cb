"""Upstream import path for image decode ops (facade)."""

from npu_bridge.core.runtime.unsupported import unsupported

__all__ = ["decode_and_resize_jpeg", "decode_and_crop_and_resize_jpeg"]

_REASON = (
    "it decodes on the NPU's DVPP image unit; use tf.io.decode_jpeg with tf.image.resize / tf.image.crop_and_resize"
)
decode_and_resize_jpeg = unsupported("npu_bridge.image.image_ops.decode_and_resize_jpeg", _REASON)
decode_and_crop_and_resize_jpeg = unsupported("npu_bridge.image.image_ops.decode_and_crop_and_resize_jpeg", _REASON)
