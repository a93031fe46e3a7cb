"""Upstream import path for experimental shape op (facade)."""

from npu_bridge.core.runtime.unsupported import unsupported

__all__ = ["getshape"]

getshape = unsupported(
    "npu_bridge.experimental.get_shape.getshape",
    "a shape helper of Ascend's graph engine for dynamic-shape graphs; use tf.shape",
)
