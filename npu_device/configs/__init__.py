"""Upstream module path ``npu_device.configs`` (facade): the options tree's container class."""

from npu_bridge.core.tf2.global_options import OptionGroup as NpuConfig

__all__ = ["NpuConfig"]
