"""The option table: coverage of upstream's keys, honest statuses, and a good and a bad value for every key."""

import os

import pytest
from tensorflow.core.protobuf import config_pb2

from npu_bridge.core.options import OPTIONS, checks, parse_config, parse_values
from npu_bridge.core.runtime.errors import NpuOptionError

# Every parameter_map key upstream's adapter reads today, with
# "experimental_*", "in_out_pair(_flag)" and "op_compiler_cache_dir/mode" spelled out.
UPSTREAM_KEYS = """
HCCL_algorithm ac_parallel_enable aicore_num all_tensor_not_empty aoe_config_file aoe_mode atomic_clean_policy
auto_multistream_parallel_mode auto_tune_mode buffer_optimize compile_dynamic_mode compile_hybrid_mode
compress_weight_conf const_input customize_dtypes debug_dir deterministic device_type distribute_config dump_data
dump_debug_mode dump_layer dump_mode dump_path dump_step dynamic_dims dynamic_graph_execute_mode dynamic_input
dynamic_inputs_shape_range dynamic_node_type enable_compress_weight enable_data_pre_proc enable_dump
enable_dump_debug enable_exception_dump enable_graph_parallel enable_scope_fusion_passes enable_small_channel
event_sync_timeout experimental_accelerate_train_mode experimental_logical_device_cluster_deploy_mode
experimental_logical_device_id experimental_model_deploy_mode experimental_model_deploy_devicelist
export_compile_stat external_weight frozen_variable fusion_switch_file graph_compiler_cache_dir graph_exec_timeout
graph_max_parallel_model_num graph_memory_max_size graph_parallel_option_path graph_run_mode graph_slice
hccl_timeout hcom_multi_mode hcom_parallel in_out_pair in_out_pair_flag input_batch_cpy input_fusion_size
input_shape insert_op_file is_tailing_optimization iterations_per_loop jit_compile job local_device_list
local_rank_id lower_functional_ops memory_optimization_policy mix_compile_mode modify_mixlist oo_constant_folding
oo_level op_compiler_cache_dir op_compiler_cache_mode op_debug_config op_debug_level op_execute_timeout
op_precision_mode op_select_implmode op_wait_timeout optimization_switch optypelist_for_implmode precision_mode
precision_mode_v2 profiling_mode profiling_options quant_dumpable resource_config_path session_device_id
shape_generalization_mode soc_config static_memory_policy stream_max_parallel_num stream_sync_timeout task_index
topo_sorting_mode use_off_line variable_format_optimize variable_memory_max_size variable_placement
variable_use_1g_huge_page work_path
""".split()

# Keys upstream scripts still write although today's adapter does not read them, and our own extension.
OTHER_KEYS = ["fp_point", "bp_point", "enable_reduce_precision", "min_group_size", "device_target"]

WORKS = {
    "use_off_line",
    "session_device_id",
    "graph_run_mode",
    "local_rank_id",
    "job",
    "task_index",
    "iterations_per_loop",
    "hccl_timeout",
    "enable_dump",
    "dump_path",
    "dump_step",
    "dump_mode",
    "dump_data",
    "dump_layer",
    "device_target",
    "fp_point",
    "bp_point",
}
EMULATED = {
    "deterministic",
    "enable_dump_debug",
    "dump_debug_mode",
    "enable_exception_dump",
    "precision_mode",
    "precision_mode_v2",
    "modify_mixlist",
    "customize_dtypes",
    "op_select_implmode",
    "optypelist_for_implmode",
    "op_precision_mode",
    "profiling_mode",
    "profiling_options",
}

DIR = "<tmp dir>"  # replaced by a real temporary directory in the tests
MISSING_DIR = "/nonexistent/npu_bridge/dir"
# Options naming a file the check reads: placeholder -> (file name, content), written to the temporary directory.
FILES = {
    "<mixlist file>": ("ops.json", '{"black-list": {"to-add": ["Mul"]}}'),
    "<dtypes file>": ("dtypes.cfg", "OpType::MatMul:InputDtype:float16,float16,OutputDtype:float32\n"),
    "<op precision file>": ("op.ini", "[ByOpType]\nLayerNorm=high_precision\n"),
    "<fusion switch file>": ("fusion.json", '{"Switch": {"GraphFusion": {"ALL": "off"}, "UBFusion": {}}}'),
    "<config file>": ("ascend.cfg", "key=value\n"),  # for options whose file only has to exist
}
MISSING_FILE = "/nonexistent/npu_bridge/file"

# A valid value for every key (new keys must be added here: test_every_option_has_a_good_example).
GOOD = {
    "use_off_line": True,
    "graph_run_mode": 0,
    "session_device_id": 3,
    "deterministic": 1,
    "iterations_per_loop": 10,
    "enable_data_pre_proc": True,
    "mix_compile_mode": True,
    "job": "worker",
    "task_index": 2,
    "lower_functional_ops": True,
    "variable_placement": "Host",
    "frozen_variable": True,
    "graph_max_parallel_model_num": 4,
    "device_type": "default_device_type",
    "soc_config": "Ascend910B",
    "device_target": "ascend",
    "precision_mode": "allow_mix_precision",
    "precision_mode_v2": "mixed_float16",
    "modify_mixlist": "<mixlist file>",
    "customize_dtypes": "<dtypes file>",
    "op_precision_mode": "<op precision file>",
    "op_select_implmode": "high_precision",
    "optypelist_for_implmode": "Pooling,SoftmaxV2",
    "enable_reduce_precision": False,
    "experimental_accelerate_train_mode": "fast|step|0.9",
    "profiling_mode": True,
    "profiling_options": '{"output": "./prof", "training_trace": "on"}',
    "fp_point": "conv1",
    "bp_point": "loss",
    "enable_dump": True,
    "dump_path": DIR,
    "dump_step": "0|5|10-20",
    "dump_mode": "all",
    "enable_dump_debug": True,
    "dump_debug_mode": "aicore_overflow",
    "dump_data": "stats",
    "dump_layer": "conv1 fc",
    "enable_exception_dump": 1,
    "quant_dumpable": "1",
    "op_debug_level": 2,
    "op_debug_config": "<config file>",
    "debug_dir": "kernel_debug",
    "export_compile_stat": 2,
    "fusion_switch_file": "<fusion switch file>",
    "enable_scope_fusion_passes": "ScopeA,ScopeB",
    "graph_exec_timeout": 1000,
    "hcom_parallel": False,
    "is_tailing_optimization": True,
    "hcom_multi_mode": True,
    "hccl_timeout": 1800,
    "HCCL_algorithm": "level0:ring",
    "op_wait_timeout": 120,
    "op_execute_timeout": 90,
    "stream_sync_timeout": 600000,
    "event_sync_timeout": 600000,
    "local_rank_id": 7,
    "local_device_list": "0,1",
    "stream_max_parallel_num": "DNN_VM_AICPU:10,AIcoreEngine:1",
    "ac_parallel_enable": "1",
    "auto_multistream_parallel_mode": "cv",
    "graph_memory_max_size": "26843545600",
    "variable_memory_max_size": "5368709120",
    "variable_format_optimize": True,
    "atomic_clean_policy": 1,
    "static_memory_policy": 2,
    "memory_optimization_policy": "MemoryPriority",
    "variable_use_1g_huge_page": 2,
    "external_weight": True,
    "input_fusion_size": 0,
    "input_batch_cpy": True,
    "graph_slice": "manual",
    "buffer_optimize": "off_optimize",
    "enable_small_channel": 1,
    "enable_compress_weight": True,
    "compress_weight_conf": "<config file>",
    "jit_compile": "false",
    "shape_generalization_mode": "ADAPTIVE",
    "compile_dynamic_mode": True,
    "all_tensor_not_empty": True,
    "op_compiler_cache_mode": "force",
    "op_compiler_cache_dir": "cache",
    "graph_compiler_cache_dir": DIR,
    "aicore_num": "2|4",
    "oo_constant_folding": False,
    "oo_level": "O1",
    "optimization_switch": "pass1:off",
    "topo_sorting_mode": 1,
    "insert_op_file": "<config file>",
    "dynamic_input": True,
    "dynamic_graph_execute_mode": "lazy_recompile",
    "dynamic_inputs_shape_range": "getnext:[128,3~5,-1]",
    "input_shape": "data:-1,3;label:-1",
    "dynamic_dims": "2,4;8,16",
    "dynamic_node_type": 0,
    "compile_hybrid_mode": 1,
    "in_out_pair_flag": False,
    "in_out_pair": "[[in],[out]]",
    "const_input": "x",
    "aoe_mode": "2",
    "work_path": DIR,
    "distribute_config": "nca.json",
    "aoe_config_file": "<config file>",
    "auto_tune_mode": "RL,GA",
    "experimental_logical_device_cluster_deploy_mode": "SINGLE",
    "experimental_logical_device_id": "0:0",
    "experimental_model_deploy_mode": "SPMD",
    "experimental_model_deploy_devicelist": "0,1",
    "resource_config_path": "<config file>",
    "graph_parallel_option_path": "<config file>",
    "enable_graph_parallel": True,
    "min_group_size": 1,
}

# A value each check rejects (every key with a check must be here unless its check never rejects).
BAD = {
    "graph_run_mode": 2,
    "session_device_id": -1,
    "deterministic": 2,
    "iterations_per_loop": 0,
    "variable_placement": "host",
    "graph_max_parallel_model_num": 0,
    "device_target": "npu",
    "precision_mode": "fp16",
    "precision_mode_v2": "allow_mix_precision",
    "op_select_implmode": "fast",
    "modify_mixlist": MISSING_FILE,
    "customize_dtypes": MISSING_FILE,
    "op_precision_mode": MISSING_FILE,
    "profiling_options": "{not json",
    "dump_path": MISSING_DIR,
    "dump_step": "5-3",
    "dump_mode": "both",
    "dump_debug_mode": "overflow",
    "dump_data": "npy",
    "enable_exception_dump": 3,
    "export_compile_stat": 3,
    "hccl_timeout": 0,
    "local_rank_id": 8,
    "local_device_list": "0;1",
    "variable_use_1g_huge_page": 3,
    "graph_slice": "Auto",
    "buffer_optimize": "l1_optimize",
    "jit_compile": "yes",
    "shape_generalization_mode": "strict",
    "dynamic_graph_execute_mode": "static",
    "input_shape": "data:-2,3",
    "dynamic_dims": "2,4;8",
    "dynamic_node_type": 2,
    "compile_hybrid_mode": 2,
    "aoe_mode": "3",
    "work_path": MISSING_DIR,
    "optypelist_for_implmode": "Pooling,,SoftmaxV2",
    "experimental_accelerate_train_mode": "fast|steps|0.9",
    "quant_dumpable": "2",
    "op_debug_level": 5,
    "op_debug_config": MISSING_FILE,
    "fusion_switch_file": MISSING_FILE,
    "enable_scope_fusion_passes": "ScopeA;ScopeB",
    "stream_max_parallel_num": "AIcoreEngine=1",
    "ac_parallel_enable": "true",
    "auto_multistream_parallel_mode": "MainStream:65",
    "graph_memory_max_size": "25G",
    "variable_memory_max_size": "-1",
    "atomic_clean_policy": 99,
    "static_memory_policy": -1,
    "enable_small_channel": 2,
    "compress_weight_conf": MISSING_FILE,
    "op_compiler_cache_mode": "on",
    "graph_compiler_cache_dir": MISSING_DIR,
    "aicore_num": "2,4",
    "insert_op_file": MISSING_FILE,
    "aoe_config_file": MISSING_FILE,
    "experimental_logical_device_cluster_deploy_mode": "lb",
    "resource_config_path": MISSING_FILE,
    "graph_parallel_option_path": MISSING_FILE,
}
NEVER_REJECTS = {"use_off_line", "input_fusion_size"}  # their checks log or clamp instead

# What a key needs next to it so that its value is checked and the combination is valid.
_DUMP = {"enable_dump": True, "dump_path": DIR}
_DYNAMIC = {"input_shape": "data:-1,3", "dynamic_dims": "2,4", "dynamic_node_type": 1}
COMPANIONS = {
    "modify_mixlist": {"precision_mode": "allow_mix_precision"},
    "optypelist_for_implmode": {"op_select_implmode": "high_performance"},
    "profiling_options": {"profiling_mode": True},
    "enable_dump": {"dump_path": DIR},
    "dump_path": {"enable_dump": True},
    "dump_step": _DUMP,
    "dump_mode": _DUMP,
    "enable_dump_debug": {"dump_path": DIR},
    "dump_debug_mode": {"enable_dump_debug": True, "dump_path": DIR},
    "dynamic_graph_execute_mode": {"dynamic_input": True},
    "input_shape": _DYNAMIC,
    "dynamic_dims": _DYNAMIC,
    "dynamic_node_type": _DYNAMIC,
    "compile_hybrid_mode": _DYNAMIC,
    "aoe_mode": {"work_path": DIR},
    "work_path": {"aoe_mode": "1"},
}


def _resolve(value, directory):
    if value in FILES:
        name, content = FILES[value]
        path = directory / name
        path.write_text(content)
        return str(path)
    return str(directory) if value == DIR else value


def _case(name, value, directory):
    """Returns {key: value} for ``name`` plus its companions, with the placeholder directory filled in."""
    values = {key: _resolve(v, directory) for key, v in COMPANIONS.get(name, {}).items()}
    values[name] = _resolve(value, directory)
    return values


def _config(values):
    """Builds a ConfigProto with one NpuOptimizer entry, each value in its option's canonical field."""
    config = config_pb2.ConfigProto()
    entry = config.graph_options.rewrite_options.custom_optimizers.add()
    entry.name = "NpuOptimizer"
    for key, value in values.items():
        kind = OPTIONS[key].kind
        if kind == "b":
            entry.parameter_map[key].b = value
        elif kind == "i":
            entry.parameter_map[key].i = value
        else:
            entry.parameter_map[key].s = value.encode()
    return config


def _parse(via, values):
    return parse_config(_config(values)) if via == "config" else parse_values(values, "test")


def test_every_upstream_key_is_in_the_table():
    assert sorted(set(UPSTREAM_KEYS + OTHER_KEYS) - set(OPTIONS)) == []


def test_table_has_no_key_beyond_upstream_and_ours():
    assert sorted(set(OPTIONS) - set(UPSTREAM_KEYS + OTHER_KEYS)) == []


def test_statuses_are_honest():
    by_status = {
        status: {name for name, spec in OPTIONS.items() if spec.status == status} for status in ("works", "emulated")
    }
    assert by_status == {"works": WORKS, "emulated": EMULATED}


@pytest.mark.parametrize("name", sorted(OPTIONS))
def test_default_has_the_kind_type(name):
    spec = OPTIONS[name]
    expected = {"b": bool, "i": int, "s": str}[spec.kind]
    assert spec.default is None or type(spec.default) is expected


@pytest.mark.parametrize("name", sorted(n for n, s in OPTIONS.items() if s.check and s.default is not None))
def test_default_passes_its_check(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # work_path defaults to "./"
    spec = OPTIONS[name]
    expected = os.path.realpath(spec.default) if spec.check is checks.existing_rw_dir else spec.default
    assert spec.check(spec.default) == expected


def test_checked_when_names_are_options():
    switches = {switch for spec in OPTIONS.values() for switch in spec.checked_when}
    assert switches <= set(OPTIONS)


def test_only_upstreams_kind_checked_keys_are_strict():
    assert {name for name, spec in OPTIONS.items() if spec.strict_kind} == {"jit_compile", "shape_generalization_mode"}


def test_every_option_has_a_good_example():
    assert set(GOOD) == set(OPTIONS)


def test_every_checked_option_has_a_bad_example():
    checked = {name for name, spec in OPTIONS.items() if spec.check is not None}
    assert checked - NEVER_REJECTS - set(BAD) == set()
    assert set(BAD) <= checked


@pytest.mark.parametrize("via", ["config", "values"])
@pytest.mark.parametrize("name", sorted(GOOD))
def test_good_value_is_accepted(name, via, tmp_path):
    values = _case(name, GOOD[name], tmp_path)
    options = _parse(via, values)
    expected = os.path.realpath(values[name]) if GOOD[name] == DIR else values[name]
    assert options.get(name) == expected
    assert options.is_set(name)


@pytest.mark.parametrize("via", ["config", "values"])
@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_value_raises_naming_key_value_and_allowed(name, via, tmp_path):
    values = _case(name, BAD[name], tmp_path)
    with pytest.raises(NpuOptionError) as raised:
        _parse(via, values)
    message = str(raised.value)
    assert raised.value.key == name
    assert f"'{name}'" in message
    assert repr(BAD[name]) in message
    assert OPTIONS[name].allowed in message


def test_values_errors_name_the_caller():
    with pytest.raises(NpuOptionError, match=r"given to NPURunConfig"):
        parse_values({"graph_run_mode": 5}, "NPURunConfig")


@pytest.mark.parametrize(
    "name, value, detail",
    [
        ("graph_run_mode", 2, "graph_run_mode value must be 0 or 1"),
        ("session_device_id", -1, "session_device_id must be nonnegative integer."),
        ("dump_mode", "both", "dump mode should be one of the list:[input, output, all]"),
        ("dump_debug_mode", "x", "dump debug mode should be one of the list:[aicore_overflow, atomic_overflow, all]"),
        ("dump_data", "npy", "dump_data should be 'tensor' or 'stats'."),
        (
            "op_select_implmode",
            "fast",
            "op select impl mode should be one of the list:[high_precision, "
            "high_performance, high_precision_for_all, high_performance_for_all]",
        ),
        ("local_rank_id", 8, "local rank id should be in [0,7]"),
        ("local_device_list", "a,b", "local_device_list style is invalid, example:'1,2,3'"),
        ("graph_slice", "x", "graph_slice must be in ['auto', 'manual']"),
        ("enable_exception_dump", 5, "enable_exception_dump should be one of 0, 1 and 2."),
        ("graph_max_parallel_model_num", 0, "graph_max_parallel_model_num should not be less than 1"),
        ("dynamic_graph_execute_mode", "x", "dynamic_graph_execute_mode should be lazy_recompile or dynamic_execute."),
        ("variable_placement", "x", "variable placement should be one of the list:[Host, Device]"),
    ],
)
def test_upstream_wording_is_kept(name, value, detail, tmp_path):
    with pytest.raises(NpuOptionError) as raised:
        parse_values(_case(name, value, tmp_path), "test")
    assert detail in str(raised.value)
