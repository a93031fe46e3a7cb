"""Upstream module path ``npu_device.train`` (facade)."""

from npu_device.train import optimizer

__all__ = ["optimizer"]
