"""``NPURunConfig``: a ``tf.estimator.RunConfig`` that also carries the NpuOptimizer options of the run.

Every keyword argument maps onto the parameter_map as upstream's NPUEstimator writes it (the keys:
docs/options.md); a keyword named like an option of the option table is that option (``FORWARDED``; its
default is upstream's, which tests keep equal to the table's). ``parameter_map_values()`` returns that mapping,
``npu_session_config()`` a copy of the session config with one more NpuOptimizer entry holding it. Upstream's
Python checks raise their TypeError / ValueError messages; every value is also validated by the option table
when the config is created, so a bad option fails here and not at the first training step, except whether a
directory or file it names exists, which the session checks when it is created (as upstream's C++ does: a
config built and never used does not fail for a path).

Sub-configs (``dump_config``, ``profiling_config``, ``memory_config``, ``experimental_config``,
``dynamic_input_config``) are objects with a ``parameter_map_values()`` method (see ``config_objects``).
"""

import inspect
import os

import tensorflow as tf

from npu_bridge.core.options import config_objects
from npu_bridge.core.options import parse as option_parse
from npu_bridge.core.options.table import OPTIONS
from npu_bridge.core.runtime import arg_checks, log
from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError
from npu_bridge.core.session import config_proto
from npu_bridge.core.tf_estimator.run_config import RunConfig

# Upstream writes a forwarded keyword with a default whatever its value, one defaulting to None only when set,
# and these, which have a default, only when not None.
_WRITTEN_IF_SET = ("buffer_optimize", "dynamic_graph_execute_mode", "graph_max_parallel_model_num")
# Written only along with aoe_mode, work_path then defaulting to the option's default.
_WITH_AOE_MODE = ("work_path", "distribute_config")
_STRINGIFIED = ("graph_memory_max_size", "variable_memory_max_size")  # upstream writes str(value)
# argument -> (the class upstream requires, our class); DumpConfig / ProfilingConfig are checked by interface
_SUB_CONFIGS = {
    "dump_config": ("DumpConfig", None),
    "profiling_config": ("ProfilingConfig", None),
    "memory_config": ("MemoryConfig", config_objects.MemoryConfig),
    "experimental_config": ("ExperimentalConfig", config_objects.ExperimentalConfig),
    "dynamic_input_config": ("DynamicInputConfig", config_objects.DynamicInputConfig),
}


class NPURunConfig(RunConfig):
    """The RunConfig of ``NPUEstimator`` (every argument of upstream's NPURunConfig).

    Defaults that differ from ``RunConfig``: ``save_summary_steps=0``, and a checkpoint every 100 steps when
    neither ``save_checkpoints_steps`` nor ``save_checkpoints_secs`` is given.

    Older releases' forms are accepted: ``jit_compile`` as a bool (r1.10-r1.11; True means "true", False
    "false") and ``auto_tune_mode`` (up to r1.10; written to the parameter_map as then, no effect here, logged
    once).

    Raises:
      TypeError, ValueError: upstream's argument checks (messages as upstream).
      NpuOptionError: an option value the option table rejects (a ValueError).
    """

    def __init__(
        self,
        iterations_per_loop=1,
        profiling_config=None,
        model_dir=None,
        tf_random_seed=None,
        save_summary_steps=0,
        save_checkpoints_steps=None,
        save_checkpoints_secs=None,
        session_config=None,
        keep_checkpoint_max=5,
        keep_checkpoint_every_n_hours=10000,
        log_step_count_steps=100,
        distribute=None,
        enable_data_pre_proc=True,
        precision_mode=None,
        enable_reduce_precision=False,
        variable_format_optimize=None,
        mix_compile_mode=False,
        hcom_parallel=True,
        graph_memory_max_size=None,
        variable_memory_max_size=None,
        dump_config=None,
        stream_max_parallel_num=None,
        is_tailing_optimization=False,
        horovod_mode=False,
        graph_run_mode=1,
        op_debug_level=None,
        enable_scope_fusion_passes=None,
        enable_exception_dump=2,
        op_select_implmode=None,
        optypelist_for_implmode=None,
        dynamic_input_config=None,
        aoe_mode=None,
        work_path=None,
        buffer_optimize="l2_optimize",
        enable_small_channel=0,
        fusion_switch_file=None,
        enable_compress_weight=False,
        compress_weight_conf=None,
        op_compiler_cache_mode=None,
        op_compiler_cache_dir=None,
        debug_dir=None,
        hcom_multi_mode=False,
        dynamic_input=None,
        dynamic_graph_execute_mode="dynamic_execute",
        dynamic_inputs_shape_range=None,
        train_distribute=None,
        eval_distribute=None,
        local_rank_id=None,
        local_device_list=None,
        session_device_id=None,
        distribute_config=None,
        modify_mixlist=None,
        op_precision_mode=None,
        device_type="default_device_type",
        soc_config=None,
        hccl_timeout=None,
        op_wait_timeout=None,
        op_execute_timeout=None,
        HCCL_algorithm=None,
        customize_dtypes=None,
        op_debug_config=None,
        memory_config=None,
        experimental_config=None,
        topo_sorting_mode=None,
        aoe_config_file=None,
        insert_op_file=None,
        stream_sync_timeout=-1,
        event_sync_timeout=-1,
        external_weight=False,
        deterministic=0,
        frozen_variable=False,
        variable_placement="Device",
        jit_compile="auto",
        precision_mode_v2=None,
        ac_parallel_enable=None,
        quant_dumpable=None,
        input_fusion_size=131072,
        compile_dynamic_mode=None,
        graph_max_parallel_model_num=1,
        export_compile_stat=1,
        aicore_num=None,
        oo_constant_folding=True,
        input_batch_cpy=False,
        shape_generalization_mode="STRICT",
        all_tensor_not_empty=False,
        auto_multistream_parallel_mode=None,
        oo_level="O3",
        optimization_switch=None,
        auto_tune_mode=None,
    ):
        arguments = dict(locals())
        del arguments["self"]
        if save_checkpoints_steps is None and save_checkpoints_secs is None:
            save_checkpoints_steps = 100
        super().__init__(
            model_dir=model_dir,
            tf_random_seed=tf_random_seed,
            save_summary_steps=save_summary_steps,
            save_checkpoints_steps=save_checkpoints_steps,
            save_checkpoints_secs=save_checkpoints_secs,
            session_config=session_config,
            keep_checkpoint_max=keep_checkpoint_max,
            keep_checkpoint_every_n_hours=keep_checkpoint_every_n_hours,
            log_step_count_steps=log_step_count_steps,
            train_distribute=train_distribute,
            eval_distribute=eval_distribute,
        )
        _check_arguments(arguments, bool(self.cluster_spec.jobs))
        self._npu_arguments = arguments
        for name, value in arguments.items():
            if not hasattr(self, f"_{name}"):
                setattr(self, f"_{name}", value)  # upstream keeps every argument as _<name>
        # a bad value fails here; whether a path exists, when a session is created with the config (as upstream)
        option_parse.parse_values(self.parameter_map_values(), "NPURunConfig", paths_later=True)

    iterations_per_loop = property(lambda self: self._npu_arguments["iterations_per_loop"])
    horovod_mode = property(lambda self: self._npu_arguments["horovod_mode"])

    def parameter_map_values(self):
        """Returns {parameter_map key: value} as upstream's NPUEstimator writes this config."""
        args = self._npu_arguments
        values = {"use_off_line": True, "min_group_size": True}  # upstream writes min_group_size as .b = 1
        for name in FORWARDED:
            if name in ALWAYS_WRITTEN or args[name] is not None:
                values[name] = str(args[name]) if name in _STRINGIFIED else args[name]
        has_task = bool(os.environ.get("TF_CONFIG"))
        values["job"] = self.task_type if has_task else "localhost"
        values["task_index"] = self.task_id if has_task else 0
        values["enable_dump"] = values["enable_dump_debug"] = False
        values["experimental_logical_device_cluster_deploy_mode"] = "LB"
        for name in _SUB_CONFIGS:
            if args[name] is not None:
                values.update(args[name].parameter_map_values())
        if args["aoe_mode"] is not None:
            work_path = args["work_path"]
            values["work_path"] = work_path if work_path is not None else OPTIONS["work_path"].default
            if args["distribute_config"] is not None:
                values["distribute_config"] = args["distribute_config"]
        return values

    def npu_session_config(self):
        """Returns a copy of ``session_config`` (or a new ConfigProto) with one more NpuOptimizer entry.

        The new entry holds ``parameter_map_values()``; like upstream, it is added even when the session
        config already has one (the session bridge merges them, this entry winning).
        """
        config = tf.compat.v1.ConfigProto()
        if self.session_config is not None:
            config.CopyFrom(self.session_config)
        config_proto.append_npu_optimizer(config, self.parameter_map_values())
        return config


_KEYWORDS = inspect.signature(NPURunConfig.__init__).parameters
# The keywords that are options, in signature order: each is written under its own name.
FORWARDED = tuple(name for name in _KEYWORDS if name in OPTIONS and name not in _WITH_AOE_MODE)
ALWAYS_WRITTEN = frozenset(
    name for name in FORWARDED if _KEYWORDS[name].default is not None and name not in _WRITTEN_IF_SET
)


def _check_arguments(args, has_cluster):
    """Upstream's Python checks of NPURunConfig arguments."""
    arg_checks.check_positive_integer(args["iterations_per_loop"], "iterations_per_loop")
    arg_checks.check_bool_type(args["mix_compile_mode"], "mix_compile_mode")
    if args["mix_compile_mode"] and args["iterations_per_loop"] != 1:
        raise NpuArgumentError(
            f'"iterations_per_loop" must be 1 with "mix_compile_mode" is True, got {args["iterations_per_loop"]}'
        )
    if not isinstance(args["jit_compile"], (str, bool)):  # a bool up to r1.11 (True: "true", False: "false")
        raise NpuArgumentTypeError(f"jit_compile: Expected str, got {type(args['jit_compile'])}")
    if args["auto_tune_mode"] is not None:
        log.warn_once(
            (__name__, "auto_tune_mode"),
            "NPURunConfig(auto_tune_mode=%r): an argument of upstream releases up to r1.10 that tuned device "
            "kernels; accepted, no effect here",
            args["auto_tune_mode"],
        )
    if not isinstance(args["horovod_mode"], bool):
        raise NpuArgumentError('"horovod_mode" type must be bool')
    arg_checks.check_nonnegative_integer(args["graph_run_mode"], "graph_run_mode")
    if args["graph_run_mode"] > 1:
        raise NpuArgumentError("graph_run_mode value must be 0 or 1")
    arg_checks.check_nonnegative_integer(args["enable_exception_dump"], "enable_exception_dump")
    for name, (class_name, cls) in _SUB_CONFIGS.items():
        value = args[name]
        valid = isinstance(value, cls) if cls else callable(getattr(value, "parameter_map_values", None))
        if value is not None and not valid:
            raise NpuArgumentError(f'"{name}" must be provided with type "{class_name}", got {type(value).__name__}')
    distribute = args["distribute"]
    is_ps_strategy = isinstance(
        distribute,
        (
            tf.distribute.experimental.ParameterServerStrategy,
            tf.compat.v1.distribute.experimental.ParameterServerStrategy,
        ),
    )
    if has_cluster != is_ps_strategy:
        raise NpuArgumentError('"cluster" and "distribute" must all be set in ps mode')
    if has_cluster and not args["mix_compile_mode"]:
        raise NpuArgumentError('"mix_compile_mode" can only be True with "cluster" is set')
