"""The fields of ``npu_device.global_options()``, declared once: path, default, allowed values, and what becomes of
each here.

A field's value reaches the NpuOptimizer option table (``npu_bridge.core.options.table``) under ``option`` (its
leaf name unless stated), which validates it and gives it its effect, exactly as a TF1 ``parameter_map`` entry.
``allowed`` is the adapter's own list, checked at assignment; None accepts anything at assignment (the option
table checks the value when the device opens).
"""

import dataclasses
import json
from typing import Any, Optional, Tuple

from npu_bridge.core.options import table

ANY = None
BOOLS = (True, False)

# The adapter's default profiling options: what ``enable_profiling = True`` profiles when no options are given.
DEFAULT_PROFILING_OPTIONS = json.dumps(
    {
        "output": "./",
        "training_trace": "on",
        "task_trace": "on",
        "hccl": "on",
        "aicpu": "on",
        "aic_metrics": "PipeUtilization",
        "msproftx": "off",
    }
)


@dataclasses.dataclass(frozen=True)
class Field:
    """One leaf of the options tree.

    Attributes:
      path: dotted path under ``global_options()``, e.g. "dump_config.dump_step".
      default: the value before assignment (None: unset).
      allowed: the values an assignment may take, or ANY.
      option: the option table key the value goes to; None when the field has no option here (then
        ``no_effect`` says why).
      deprecated: the replacement the adapter names when the field is set ("" when none), or None.
      legacy: True for a field older adapter releases had and the newest removed; setting it warns.
      no_effect: why a field without an option has no effect here.
    """

    path: str
    default: Any = None
    allowed: Optional[Tuple[Any, ...]] = ANY
    option: Optional[str] = ""
    deprecated: Optional[str] = None
    legacy: bool = False
    no_effect: str = ""

    @property
    def leaf(self):
        """The last path component: the name ``as_dict()`` uses."""
        return self.path.rpartition(".")[2]

    @property
    def option_name(self):
        """The option table key, or None."""
        return self.leaf if self.option == "" else self.option


_NPU_ONLY = "the NPU runtime's setting; there is no such runtime here"

FIELDS = (
    Field("graph_run_mode", 1, (0, 1)),
    Field("graph_memory_max_size"),
    Field("variable_memory_max_size"),
    Field("variable_format_optimize", None, BOOLS, deprecated=""),
    Field("enable_scope_fusion_passes"),
    Field("fusion_switch_file"),
    Field("precision_mode", None, table.PRECISION_MODES),
    Field("precision_mode_v2", None, table.PRECISION_MODES_V2),
    Field("op_select_implmode", None, ("high_performance", "high_precision"), deprecated="op_precision_mode"),
    Field("optypelist_for_implmode", deprecated="op_precision_mode"),
    Field("op_precision_mode"),
    Field("op_compiler_cache_mode", "enable", ("enable", "disable", "force")),
    Field("op_compiler_cache_dir"),
    Field("stream_max_parallel_num"),
    Field("ac_parallel_enable", None, ("0", "1")),
    Field("hcom_parallel", True, BOOLS),
    Field("hcom_multi_mode"),
    Field("is_tailing_optimization", False, BOOLS),
    Field("op_debug_level", None, (0, 1, 2, 3, 4), deprecated="op_debug_config"),
    Field("op_debug_config"),
    Field("debug_dir"),
    Field("modify_mixlist"),
    Field("enable_exception_dump", 2, (0, 1, 2)),
    Field("dump_config.enable_dump", False, BOOLS),
    Field("dump_config.dump_path"),
    Field("dump_config.dump_step"),
    Field("dump_config.dump_mode", "output", ("input", "output", "all")),
    Field("dump_config.enable_dump_debug", False, BOOLS),
    Field("dump_config.dump_debug_mode", "all", ("aicore_overflow", "atomic_overflow", "all")),
    Field("dump_config.dump_data", "tensor", ("tensor", "stats")),
    Field("dump_config.dump_layer"),
    Field("aoe_config.aoe_mode", None, ("1", "2", "4")),
    Field("aoe_config.work_path", "./"),
    Field("aoe_config.aoe_config_file"),
    Field("profiling_config.enable_profiling", False, BOOLS, option="profiling_mode"),
    Field("profiling_config.profiling_options", DEFAULT_PROFILING_OPTIONS),
    Field("enable_small_channel", False, BOOLS),
    Field("deterministic", 0, (0, 1)),
    Field("graph_exec_timeout"),
    Field("topo_sorting_mode", None, (0, 1, None)),
    Field("customize_dtypes"),
    Field("overflow_flag", 1, (0, 1), option=None, no_effect=_NPU_ONLY),
    Field("stream_sync_timeout", -1),
    Field("event_sync_timeout", -1),
    Field("external_weight", False, BOOLS),
    Field("memory_config.atomic_clean_policy", 0, (0, 1)),
    Field("memory_config.static_memory_policy", 0, (0, 1, 2)),
    Field("jit_compile", "auto", ("true", "false", "auto")),
    Field("graph_compiler_cache_dir"),
    Field("experimental.multi_branches_config.input_shape"),
    Field("experimental.multi_branches_config.dynamic_node_type", None, ("0",)),
    Field("experimental.multi_branches_config.dynamic_dims"),
    Field(
        "experimental.logical_device_deploy_config.logical_device_cluster_deploy_mode",
        "LB",
        ("LB", "SINGLE"),
        option="experimental_logical_device_cluster_deploy_mode",
    ),
    Field("experimental.logical_device_deploy_config.logical_device_id", option="experimental_logical_device_id"),
    Field("experimental.model_deploy_config.model_deploy_mode", option="experimental_model_deploy_mode"),
    Field("experimental.model_deploy_config.model_deploy_devicelist", option="experimental_model_deploy_devicelist"),
    Field(
        "experimental.graph_memory_optimize_config.recompute",
        None,
        ("auto", "manual"),
        option=None,
        no_effect="recomputation is a memory saving of the NPU's graph engine; TensorFlow keeps its own plan",
    ),
    Field("experimental.graph_memory_optimize_config.graph_slice", None, ("auto",)),
    Field("experimental.resource_config_path"),
    Field("experimental.graph_parallel_option_path"),
    Field("experimental.enable_graph_parallel", False, BOOLS),
    Field("auto_tune_mode", legacy=True),
)

BY_PATH = {field.path: field for field in FIELDS}
