"""The NpuOptimizer option table: every parameter_map key, its validation, parsing and documentation.

``OPTIONS`` is the single source of truth. ``parse_config`` / ``parse_values`` turn a ConfigProto or Python
values into validated ``NpuOptions``; ``render_markdown`` documents the table.

spec               the data model of one option (``OptionSpec``)
table              the table itself: one ``OptionSpec`` per parameter_map key
checks             reusable validators of one option value
rules              rules that involve more than one option
profiling_options  the ``profiling_options`` value: its forms, the keys Ascend knows, what each means here
parse              reads options from a ConfigProto or Python values, validates them, writes them back
environment_options  NPU_BRIDGE_OPTIONS: options the environment sets over a script's own
config_objects     the sub-configs of ``NPURunConfig`` (MemoryConfig, ExperimentalConfig, ...)
docs               renders the table (markdown for docs/options.md, plain text for a terminal)
__main__           ``python -m npu_bridge.core.options [--write-docs]``
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
