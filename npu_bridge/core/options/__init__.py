"""The NpuOptimizer option table: every parameter_map key, its validation, parsing and documentation.

``OPTIONS`` is the single source of truth. ``parse_config`` / ``parse_values`` turn a ConfigProto or Python
values into validated ``NpuOptions``; ``render_markdown`` documents the table.
"""

from npu_bridge.core.options.docs import render_markdown
from npu_bridge.core.options.parse import NpuOptions, find_npu_optimizers, parse_config, parse_values
from npu_bridge.core.options.spec import STATUS_TEXT, OptionSpec
from npu_bridge.core.options.table import OPTIONS

__all__ = [
    "OPTIONS",
    "OptionSpec",
    "STATUS_TEXT",
    "NpuOptions",
    "find_npu_optimizers",
    "parse_config",
    "parse_values",
    "render_markdown",
]
