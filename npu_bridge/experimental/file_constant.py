"""Upstream import path for experimental file constant op (facade)."""

from npu_bridge.core.runtime.unsupported import unsupported

__all__ = ["file_constant"]

file_constant = unsupported(
    "npu_bridge.experimental.file_constant.file_constant",
    "it loads weights that Ascend's graph engine externalized (external_weight) into device "
    "memory; load such files with tf.io.read_file and tf.io.decode_raw",
)
