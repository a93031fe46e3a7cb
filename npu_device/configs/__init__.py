"""Upstream module path ``npu_device.configs`` (facade): the options tree's container class and run context
options."""

from npu_bridge.core.tf2.global_options import OptionGroup as NpuConfig
from npu_bridge.core.tf2.run_context import NpuRunContextOptions, run_context_options

__all__ = ["NpuConfig", "NpuRunContextOptions", "run_context_options"]
