"""Upstream module path ``npu_device.ops`` (facade); scripts probe it with ``hasattr(npu_device.ops, "gelu")``."""

from npu_bridge.core.tf2.activations import gelu

__all__ = ["gelu"]
