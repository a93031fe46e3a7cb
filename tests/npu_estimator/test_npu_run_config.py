"""NPURunConfig: every keyword argument lands in the NpuOptimizer parameter_map as upstream's NPUEstimator
writes it, sub-configs contribute through parameter_map_values(), and bad arguments fail at construction with
upstream's messages."""

import inspect
import json

import pytest
import tensorflow as tf

from npu_bridge.core.npu_estimator import run_config
from npu_bridge.core.options import parse as option_parse
from npu_bridge.core.options.table import OPTIONS
from npu_bridge.core.runtime import log
from npu_bridge.core.runtime.errors import NpuOptionError
from npu_bridge.estimator.npu.npu_config import (
    DumpConfig,
    DynamicInputConfig,
    ExperimentalConfig,
    GraphMemoryOptimizeConfig,
    MemoryConfig,
    NPURunConfig,
)

# A valid, non-default value for every argument that maps one-to-one onto a parameter_map key.
MAPPED = {
    "iterations_per_loop": 4,
    "enable_data_pre_proc": False,
    "mix_compile_mode": False,
    "is_tailing_optimization": True,
    "hcom_parallel": False,
    "graph_run_mode": 0,
    "enable_exception_dump": 1,
    "enable_small_channel": 1,
    "deterministic": 1,
    "enable_compress_weight": True,
    "hcom_multi_mode": True,
    "device_type": "my_device",
    "jit_compile": "false",
    "input_fusion_size": 1024,
    "stream_sync_timeout": 5000,
    "event_sync_timeout": 6000,
    "external_weight": True,
    "frozen_variable": True,
    "variable_placement": "Host",
    "enable_reduce_precision": True,
    "export_compile_stat": 2,
    "oo_constant_folding": False,
    "input_batch_cpy": True,
    "oo_level": "O1",
    "shape_generalization_mode": "FULL",
    "all_tensor_not_empty": True,
    "op_debug_level": 2,
    "enable_scope_fusion_passes": "ScopePass",
    "buffer_optimize": "off_optimize",
    "fusion_switch_file": "<fusion.json>",
    "op_compiler_cache_mode": "force",
    "op_compiler_cache_dir": "/x/cache",
    "debug_dir": "/x/debug",
    "dynamic_input": True,
    "dynamic_graph_execute_mode": "lazy_recompile",
    "dynamic_inputs_shape_range": "getnext:[128,3~5]",
    "local_rank_id": 3,
    "local_device_list": "0,1",
    "soc_config": "Ascend910B",
    "hccl_timeout": 1800,
    "op_wait_timeout": 120,
    "op_execute_timeout": 90,
    "HCCL_algorithm": "level0:ring",
    "customize_dtypes": "<dtypes.cfg>",
    "op_debug_config": "<debug.cfg>",
    "topo_sorting_mode": 1,
    "insert_op_file": "<aipp.cfg>",
    "compile_dynamic_mode": True,
    "graph_max_parallel_model_num": 2,
    "session_device_id": 1,
    "modify_mixlist": "<mixlist.json>",
    "op_precision_mode": "<precision.ini>",
    "precision_mode": "allow_mix_precision",
    "variable_format_optimize": True,
    "stream_max_parallel_num": "AIcoreEngine:1",
    "ac_parallel_enable": "1",
    "quant_dumpable": "1",
    "op_select_implmode": "high_precision",
    "optypelist_for_implmode": "Pooling",
    "aicore_num": "2|4",
    "optimization_switch": "pass:off",
    "auto_multistream_parallel_mode": "cv",
    "auto_tune_mode": "RL,GA",
}
# Arguments of tf.estimator.RunConfig, sub-configs and arguments with special mappings (tested separately).
OTHER = {
    "model_dir",
    "tf_random_seed",
    "save_summary_steps",
    "save_checkpoints_steps",
    "save_checkpoints_secs",
    "session_config",
    "keep_checkpoint_max",
    "keep_checkpoint_every_n_hours",
    "log_step_count_steps",
    "distribute",
    "train_distribute",
    "eval_distribute",
    "horovod_mode",
    "profiling_config",
    "dump_config",
    "memory_config",
    "experimental_config",
    "dynamic_input_config",
    "aoe_mode",
    "work_path",
    "distribute_config",
    "aoe_config_file",
    "graph_memory_max_size",
    "variable_memory_max_size",
    "precision_mode_v2",
    "compress_weight_conf",
}


def test_every_argument_is_covered_by_these_tests():
    arguments = set(inspect.signature(NPURunConfig.__init__).parameters) - {"self"}
    assert arguments == set(MAPPED) | OTHER
    assert set(MAPPED) | {
        "graph_memory_max_size",
        "variable_memory_max_size",
        "precision_mode_v2",
        "compress_weight_conf",
        "aoe_mode",
        "aoe_config_file",
    } == set(run_config.FORWARDED)


def test_forwarded_keywords_default_to_the_option_table_s_defaults():
    keywords = inspect.signature(NPURunConfig.__init__).parameters
    for name in [*run_config.FORWARDED, "work_path", "distribute_config"]:
        default = keywords[name].default
        # upstream's NPURunConfig turns enable_data_pre_proc on (the adapter's default is off) and writes
        # enable_reduce_precision, which nothing reads (unset in the table)
        if default is not None and name not in ("enable_data_pre_proc", "enable_reduce_precision"):
            assert default == OPTIONS[name].default, name


def test_keywords_with_a_default_upstream_writes_only_when_not_none():
    guarded = {"buffer_optimize", "dynamic_graph_execute_mode", "graph_max_parallel_model_num"}
    values = NPURunConfig(**dict.fromkeys(guarded)).parameter_map_values()
    assert not guarded & set(values)
    assert {"enable_small_channel", "input_fusion_size", "oo_level"} <= run_config.ALWAYS_WRITTEN


# Options naming files the option table reads: the test writes them (valid, small) into tmp_path.
OPTION_FILES = {
    "<dtypes.cfg>": "MatMul::InputDtype:float16,float16,OutputDtype:float32\n",
    "<mixlist.json>": json.dumps({"black-list": {"to-add": ["MatMul"]}}),
    "<precision.ini>": "[ByOpType]\nMatMul=high_precision\n",
    "<fusion.json>": json.dumps({"Switch": {"GraphFusion": {"ALL": "off"}}}),
    "<debug.cfg>": "op_debug_config=oom\n",
    "<aipp.cfg>": "aipp_op {}\n",
}


def test_every_mapped_argument_reaches_the_parameter_map(tmp_path):
    arguments = dict(MAPPED)
    for name, value in MAPPED.items():
        if value in OPTION_FILES:
            path = tmp_path / value.strip("<>")
            path.write_text(OPTION_FILES[value])
            arguments[name] = str(path)
    config = NPURunConfig(**arguments)
    values = config.parameter_map_values()
    for name, value in arguments.items():
        assert values[name] == value, name
    entry = config.npu_session_config().graph_options.rewrite_options.custom_optimizers[-1]
    assert entry.name == "NpuOptimizer"
    assert entry.parameter_map["precision_mode"].s == b"allow_mix_precision"
    assert entry.parameter_map["iterations_per_loop"].i == 4
    assert entry.parameter_map["hcom_parallel"].b is False
    # What the session bridge will read from it:
    options = option_parse.parse_config(config.npu_session_config())
    for name, value in arguments.items():
        assert options.get(name) == value, name


def test_values_written_always_and_upstream_quirks(tmp_path):
    conf = tmp_path / "c.cfg"
    conf.write_text("x\n")
    values = NPURunConfig().parameter_map_values()
    assert values["use_off_line"] is True
    assert values["min_group_size"] is True  # upstream writes min_group_size as .b = 1
    assert values["iterations_per_loop"] == 1 and values["enable_data_pre_proc"] is True
    assert (values["enable_dump"], values["enable_dump_debug"]) == (False, False)
    assert values["experimental_logical_device_cluster_deploy_mode"] == "LB"
    assert (values["job"], values["task_index"]) == ("localhost", 0)
    assert values["buffer_optimize"] == "l2_optimize"
    for unset in ("precision_mode", "aoe_mode", "work_path", "input_shape", "profiling_mode", "hccl_timeout"):
        assert unset not in values
    sized = NPURunConfig(graph_memory_max_size=1 << 30, variable_memory_max_size=2 << 30).parameter_map_values()
    assert (sized["graph_memory_max_size"], sized["variable_memory_max_size"]) == (str(1 << 30), str(2 << 30))
    assert (
        NPURunConfig(precision_mode_v2="mixed_float16").parameter_map_values()["precision_mode_v2"] == "mixed_float16"
    )
    assert NPURunConfig(compress_weight_conf=str(conf)).parameter_map_values()["compress_weight_conf"] == str(conf)
    with pytest.raises(NpuOptionError, match="enable_compress_weight can not use with compress_weight_conf"):
        NPURunConfig(compress_weight_conf=str(conf), enable_compress_weight=True)


def test_aoe_arguments(tmp_path):
    aoe_cfg = tmp_path / "aoe.cfg"
    aoe_cfg.write_text("x\n")
    values = NPURunConfig(aoe_mode="2", distribute_config="/x/nca.json").parameter_map_values()
    assert (values["aoe_mode"], values["work_path"], values["distribute_config"]) == ("2", "./", "/x/nca.json")
    assert "aoe_mode" not in NPURunConfig(work_path="/tmp", aoe_config_file=str(aoe_cfg)).parameter_map_values()
    assert NPURunConfig(aoe_config_file=str(aoe_cfg)).parameter_map_values()["aoe_config_file"] == str(aoe_cfg)


def test_sub_configs(tmp_path):
    for name in ("p.json", "r.json"):
        (tmp_path / name).write_text("{}")
    p_json, r_json, cache = str(tmp_path / "p.json"), str(tmp_path / "r.json"), str(tmp_path)
    values = NPURunConfig(
        memory_config=MemoryConfig(
            atomic_clean_policy=1, static_memory_policy=2, memory_optimization_policy="p", variable_use_1g_huge_page=2
        ),
        experimental_config=ExperimentalConfig(
            logical_device_cluster_deploy_mode="SINGLE",
            logical_device_id="0:0",
            model_deploy_mode="m",
            model_deploy_devicelist="0,1",
            graph_memory_optimize_config=GraphMemoryOptimizeConfig(graph_slice="auto"),
            enable_graph_parallel=True,
            graph_parallel_option_path=p_json,
            graph_compiler_cache_dir=cache,
            resource_config_path=r_json,
            accelerate_train_mode="fast|step|0.9",
        ),
        dynamic_input_config=DynamicInputConfig("data:-1,3", "1,3;2,3", 1, 0),
    ).parameter_map_values()
    assert {
        k: values[k]
        for k in (
            "atomic_clean_policy",
            "static_memory_policy",
            "memory_optimization_policy",
            "variable_use_1g_huge_page",
        )
    } == {
        "atomic_clean_policy": 1,
        "static_memory_policy": 2,
        "memory_optimization_policy": "p",
        "variable_use_1g_huge_page": 2,
    }
    assert values["experimental_logical_device_cluster_deploy_mode"] == "SINGLE"
    assert values["experimental_logical_device_id"] == "0:0"
    assert values["experimental_model_deploy_mode"] == "m"
    assert values["experimental_model_deploy_devicelist"] == "0,1"
    assert values["graph_slice"] == "auto" and values["enable_graph_parallel"] is True
    assert values["graph_parallel_option_path"] == p_json and values["graph_compiler_cache_dir"] == cache
    assert values["resource_config_path"] == r_json
    assert values["experimental_accelerate_train_mode"] == "fast|step|0.9"
    assert (
        values["input_shape"],
        values["dynamic_dims"],
        values["dynamic_node_type"],
        values["compile_hybrid_mode"],
    ) == ("data:-1,3", "1,3;2,3", 1, 0)
    partial = NPURunConfig(dynamic_input_config=DynamicInputConfig("data:-1,3", "1,3", 1, None))
    assert "input_shape" not in partial.parameter_map_values()  # all four or nothing, as upstream


class DumpConfigDouble:
    """What the dump capability's DumpConfig provides: its parameter_map values."""

    def __init__(self, path):
        self.path = path

    def parameter_map_values(self):
        return {"enable_dump": True, "dump_path": self.path, "dump_mode": "all"}


def test_dump_and_profiling_configs_contribute_through_their_interface(tmp_path):
    class ProfilingConfigDouble:
        def parameter_map_values(self):
            return {"profiling_mode": True, "profiling_options": '{"output": "/tmp"}'}

    values = NPURunConfig(
        dump_config=DumpConfigDouble(str(tmp_path)), profiling_config=ProfilingConfigDouble()
    ).parameter_map_values()
    assert (values["enable_dump"], values["dump_path"], values["dump_mode"]) == (True, str(tmp_path), "all")
    assert values["profiling_mode"] is True


def test_a_dump_path_that_does_not_exist_fails_the_session_not_the_configs(tmp_path, monkeypatch):
    """As upstream, whose C++ checks the path when the session is made: FasterRcnn of the zoo builds a DumpConfig
    of a path it never creates and never passes it on."""
    monkeypatch.chdir(tmp_path)
    unused = DumpConfig(enable_dump=True, dump_path="20261130013604", dump_mode="all")
    config = NPURunConfig(dump_config=unused)
    with pytest.raises(NpuOptionError, match="dump_path.*20261130013604.*does not exist"):
        tf.compat.v1.Session(config=config.npu_session_config())
    with pytest.raises(NpuOptionError, match="dump_mode"):
        DumpConfig(enable_dump=True, dump_path="20261130013604", dump_mode="every")  # other checks: at once


def test_defaults_that_differ_from_run_config():
    config = NPURunConfig()
    assert (config.save_checkpoints_steps, config.save_checkpoints_secs, config.save_summary_steps) == (100, None, 0)
    assert NPURunConfig(save_checkpoints_secs=30).save_checkpoints_steps is None
    assert isinstance(config, tf.estimator.RunConfig)
    assert config._iterations_per_loop == 1 and config._precision_mode is None  # upstream's attribute names


def test_session_config_gets_one_more_npu_optimizer_entry():
    user = tf.compat.v1.ConfigProto(allow_soft_placement=True)
    entry = user.graph_options.rewrite_options.custom_optimizers.add()
    entry.name = "NpuOptimizer"
    entry.parameter_map["precision_mode"].s = b"force_fp32"
    config = NPURunConfig(session_config=user, precision_mode="allow_mix_precision").npu_session_config()
    entries = [e for e in config.graph_options.rewrite_options.custom_optimizers if e.name == "NpuOptimizer"]
    assert len(entries) == 2 and config.allow_soft_placement
    assert option_parse.parse_config(config).get("precision_mode") == "allow_mix_precision"  # the new one wins
    assert len(user.graph_options.rewrite_options.custom_optimizers) == 1  # the user's config is not modified


def test_job_and_task_index_come_from_tf_config(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", json.dumps({"task": {"type": "worker", "index": 3}}))
    values = NPURunConfig().parameter_map_values()
    assert (values["job"], values["task_index"]) == ("worker", 3)


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"iterations_per_loop": 0}, ValueError, "iterations_per_loop must be positive, got 0"),
        ({"iterations_per_loop": "2"}, TypeError, "iterations_per_loop must be int"),
        ({"mix_compile_mode": "yes"}, TypeError, '"mix_compile_mode" type must be bool'),
        ({"mix_compile_mode": True, "iterations_per_loop": 2}, ValueError, '"iterations_per_loop" must be 1'),
        ({"jit_compile": 1}, TypeError, "Expected str"),
        ({"horovod_mode": 1}, ValueError, '"horovod_mode" type must be bool'),
        ({"graph_run_mode": 2}, ValueError, "graph_run_mode value must be 0 or 1"),
        ({"graph_run_mode": -1}, ValueError, "graph_run_mode must be nonnegative"),
        ({"enable_exception_dump": -1}, ValueError, "enable_exception_dump must be nonnegative"),
        ({"dump_config": object()}, ValueError, '"dump_config" must be provided with type "DumpConfig"'),
        ({"memory_config": {"atomic_clean_policy": 1}}, ValueError, '"memory_config" must be provided with type'),
        ({"experimental_config": "x"}, ValueError, '"experimental_config" must be provided with type'),
        ({"precision_mode": "fp64"}, NpuOptionError, "precision_mode.*fp64.*Allowed: force_fp32"),
        ({"buffer_optimize": "l1"}, NpuOptionError, "buffer_optimize"),
        ({"memory_config": MemoryConfig(variable_use_1g_huge_page=5)}, NpuOptionError, "variable_use_1g_huge_page"),
    ],
)
def test_bad_arguments_fail_at_construction(kwargs, error, message):
    with pytest.raises(error, match=message):
        NPURunConfig(**kwargs)


def test_bad_sub_config_arguments():
    with pytest.raises(ValueError, match="graph_slice should be in \\['auto', 'manual'\\]"):
        GraphMemoryOptimizeConfig(graph_slice="half")
    with pytest.raises(ValueError, match="graph_memory_optimize_config"):
        ExperimentalConfig(graph_memory_optimize_config="auto")


@pytest.mark.parametrize(
    "tf_config, detail",
    [
        ("{", "it is not valid JSON"),
        ("[1]", "it holds a JSON list, not an object"),
        ('{"task": 5}', '"task" must be an object'),
        ('{"task": {"index": "abc"}}', '"task"."index" must be an integer >= 0'),
        ('{"task": {"index": -1}}', '"task"."index" must be an integer >= 0'),
        ('{"task": {"type": 5}}', '"task"."type" must be a string'),
        ('{"cluster": 5}', '"cluster" must be an object'),
        ('{"cluster": {"ps": 5}}', '"cluster" is not a cluster'),
    ],
)
def test_a_malformed_tf_config_is_named(tf_config, detail, monkeypatch):
    monkeypatch.setenv("TF_CONFIG", tf_config)
    with pytest.raises(ValueError) as raised:
        NPURunConfig()
    message = str(raised.value)
    assert message.startswith(f"TF_CONFIG has invalid value {tf_config!r}: {detail}"), message
    assert "Allowed: a JSON object" in message


def test_parameter_server_cluster_needs_a_ps_strategy(monkeypatch):
    monkeypatch.setenv(
        "TF_CONFIG", json.dumps({"cluster": {"ps": ["a:1"], "worker": ["b:1"]}, "task": {"type": "worker", "index": 0}})
    )
    with pytest.raises(ValueError, match='"cluster" and "distribute" must all be set in ps mode'):
        NPURunConfig()


@pytest.mark.parametrize("value, expected", [(True, "true"), (False, "false"), ("auto", "auto")])
def test_jit_compile_as_a_bool_as_r1_10_took_it(value, expected):
    config = NPURunConfig(jit_compile=value)
    options = option_parse.parse_config(config.npu_session_config())
    assert options.get("jit_compile") == expected


def test_auto_tune_mode_of_older_releases_is_accepted_and_logged_once(npu_log, monkeypatch):
    monkeypatch.setattr(log, "_once_keys", set())  # another test may have logged it already
    for _ in range(2):
        config = NPURunConfig(auto_tune_mode="RL,GA")
    assert config.parameter_map_values()["auto_tune_mode"] == "RL,GA"
    assert "auto_tune_mode" not in NPURunConfig().parameter_map_values()
    logged = [m for m in npu_log if "auto_tune_mode=" in m]
    assert len(logged) == 1 and "no effect here" in logged[0]
