"""Parsing NpuOptimizer options: cross-key rules, upstream's habits, merging, logging, NpuOptions, write-back."""

import json
import logging
import os

import pytest
from tensorflow.core.protobuf import config_pb2

from npu_bridge.core.options import OPTIONS, NpuOptions, find_npu_optimizers, parse_config, parse_values
from npu_bridge.core.runtime import log
from npu_bridge.core.runtime.errors import NpuOptionError


@pytest.fixture
def npu_log(caplog):
    """caplog wired straight to the "npu_bridge" logger (which may not propagate to the root logger)."""
    logger = logging.getLogger("npu_bridge")
    saved = logger.level, logger.propagate
    logger.addHandler(caplog.handler)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    yield caplog
    logger.removeHandler(caplog.handler)
    logger.setLevel(saved[0])
    logger.propagate = saved[1]


def _entry(config, **fields):
    """Adds an NpuOptimizer entry; each keyword is key=(field, value), e.g. enable_dump=("b", True)."""
    entry = config.graph_options.rewrite_options.custom_optimizers.add()
    entry.name = "NpuOptimizer"
    for key, (field, value) in fields.items():
        setattr(entry.parameter_map[key], field, value.encode() if isinstance(value, str) else value)
    return entry


def _config(**fields):
    config = config_pb2.ConfigProto()
    _entry(config, **fields)
    return config


def _messages(caplog, level):
    return [r.getMessage() for r in caplog.records if r.levelno == level]


# --- finding entries and defaults ---------------------------------------------------------------------------


def test_find_npu_optimizers_returns_only_npu_entries():
    config = config_pb2.ConfigProto()
    config.graph_options.rewrite_options.custom_optimizers.add().name = "OtherOptimizer"
    first = _entry(config, enable_dump=("b", False))
    second = _entry(config)
    assert find_npu_optimizers(config) == [first, second]
    assert find_npu_optimizers(config_pb2.ConfigProto()) == []
    assert find_npu_optimizers(None) == []


def test_config_without_npu_optimizer_gives_defaults():
    options = parse_config(config_pb2.ConfigProto())
    assert options.explicit == {}
    assert options.get("graph_run_mode") == 1
    assert options.get("precision_mode") is None
    assert not options.is_set("graph_run_mode")
    assert parse_config(None) == options


def test_get_of_a_misspelt_name_raises_key_error_with_suggestion():
    with pytest.raises(KeyError, match="did you mean 'precision_mode'"):
        NpuOptions().get("precison_mode")
    with pytest.raises(KeyError):
        NpuOptions().is_set("no_such_option")


def test_by_stage_lists_effective_non_none_values():
    options = parse_values({"precision_mode": "force_fp16", "enable_dump": False}, "test")
    init = options.by_stage("init")
    assert init["precision_mode"] == "force_fp16"
    assert init["graph_run_mode"] == 1
    assert "precision_mode_v2" not in init
    assert "enable_dump" not in init
    assert options.by_stage("session")["enable_dump"] is False
    assert all(OPTIONS[name].stage == "graph" for name in options.by_stage("graph"))
    with pytest.raises(ValueError, match="stage"):
        options.by_stage("device")


def test_options_are_immutable():
    options = parse_values({"graph_run_mode": 0}, "test")
    with pytest.raises(AttributeError):
        options.foo = 1
    options.explicit["graph_run_mode"] = 1
    assert options.get("graph_run_mode") == 0


def test_with_values_returns_a_revalidated_copy(tmp_path):
    options = parse_values({"enable_dump": True, "dump_path": str(tmp_path)}, "test")
    changed = options.with_values({"dump_step": "1|2", "dump_path": None, "enable_dump": None})
    assert changed.get("dump_step") == "1|2"
    assert not changed.is_set("dump_path") and not changed.is_set("enable_dump")
    assert options.get("dump_step") is None
    with pytest.raises(NpuOptionError, match="dump_path must be set"):
        options.with_values({"dump_path": None})
    with pytest.raises(KeyError):
        options.with_values({"dump_paht": "x"})


# --- switches: dependent options are only checked when their switch is on ----------------------------------


def test_stale_dump_options_pass_when_dump_is_off():
    options = parse_config(
        _config(
            enable_dump=("b", False),
            dump_path=("s", "/nonexistent/dir"),
            dump_step=("s", "garbage"),
            dump_mode=("s", "both"),
            dump_debug_mode=("s", "x"),
        )
    )
    assert options.get("dump_path") == "/nonexistent/dir"
    assert options.get("dump_step") == "garbage"


def test_stale_profiling_aoe_and_dynamic_options_pass_when_switches_are_off():
    options = parse_values(
        {
            "profiling_mode": False,
            "profiling_options": "{bad",
            "work_path": "/nonexistent",
            "dynamic_input": False,
            "dynamic_graph_execute_mode": "x",
        },
        "test",
    )
    assert options.get("profiling_options") == "{bad"


@pytest.mark.parametrize("switch", ["enable_dump", "enable_dump_debug"])
def test_dump_path_is_required_by_dump_switches(switch):
    with pytest.raises(NpuOptionError, match="if use dump function, dump_path must be set") as raised:
        parse_config(_config(**{switch: ("b", True)}))
    assert raised.value.key == "dump_path"


def test_dump_path_is_normalized_to_realpath(tmp_path, monkeypatch):
    target = tmp_path / "dumps"
    target.mkdir()
    (tmp_path / "link").symlink_to(target)
    monkeypatch.chdir(tmp_path)
    options = parse_values({"enable_dump": True, "dump_path": "link"}, "test")
    assert options.get("dump_path") == os.path.realpath(target)


@pytest.mark.parametrize(
    "make, detail",
    [
        (lambda d: str(d / "missing"), "does not exist"),
        (lambda d: (d / "file").write_text("x") and str(d / "file"), "is not a directory"),
        (lambda d: "", "the path is empty"),
    ],
)
def test_bad_dump_path_is_explained(tmp_path, make, detail):
    with pytest.raises(NpuOptionError, match=detail):
        parse_values({"enable_dump_debug": True, "dump_path": make(tmp_path)}, "test")


def test_dump_path_without_write_permission_is_rejected(tmp_path, monkeypatch):
    # Tests may run as root, for whom every directory is writable, so the permission answer is simulated.
    monkeypatch.setattr(os, "access", lambda path, mode: path != str(tmp_path))
    with pytest.raises(NpuOptionError, match="read, write permissions"):
        parse_values({"enable_dump": True, "dump_path": str(tmp_path)}, "test")


@pytest.mark.parametrize("step", ["0", "0|5|10", "0|3-5|10", "|".join(str(i) for i in range(100))])
def test_dump_step_accepts_upstream_syntax(step, tmp_path):
    options = parse_values({"enable_dump": True, "dump_path": str(tmp_path), "dump_step": step}, "test")
    assert options.get("dump_step") == step


@pytest.mark.parametrize(
    "step, detail",
    [
        ("|".join(str(i) for i in range(101)), "dump_step only support dump <= 100 sets of data"),
        ("0|5-", "dump_step string style is error"),
        ("a", "dump_step string style is error"),
        ("", "dump_step string style is error"),
        ("7-7", "in range steps, the first step is >= second step"),
    ],
)
def test_dump_step_errors(step, detail, tmp_path):
    with pytest.raises(NpuOptionError, match=detail):
        parse_values({"enable_dump": True, "dump_path": str(tmp_path), "dump_step": step}, "test")


@pytest.mark.parametrize(
    "text",
    [
        "",
        "training_trace",
        "training_trace:task_trace",
        "op_trace",
        '{"output": "./p", "aic_metrics": "PipeUtilization"}',
    ],
)
def test_profiling_options_forms(text):
    assert parse_values({"profiling_mode": True, "profiling_options": text}, "t").get("profiling_options") == text


@pytest.mark.parametrize(
    "text, detail",
    [
        ('{"output": ', "not valid JSON"),
        ('["output"]', "must be a JSON object"),
        ("op_trace:task_trace", "op_trace can not be combined"),
        ("training_trace:memory", "profiling options must be in"),
    ],
)
def test_malformed_profiling_options_raise(text, detail):
    with pytest.raises(NpuOptionError, match=detail) as raised:
        parse_values({"profiling_mode": True, "profiling_options": text}, "t")
    assert raised.value.key == "profiling_options"


def test_work_path_is_checked_with_aoe_mode(tmp_path):
    assert parse_values({"aoe_mode": "1", "work_path": str(tmp_path)}, "t").get("work_path") == str(tmp_path)
    with pytest.raises(NpuOptionError, match="does not exist") as raised:
        parse_values({"aoe_mode": "4", "work_path": str(tmp_path / "missing")}, "t")
    assert raised.value.key == "work_path"


def test_input_fusion_size_is_clamped_with_a_warning(npu_log):
    assert parse_values({"input_fusion_size": 64 * 1024 * 1024}, "t").get("input_fusion_size") == 32 * 1024 * 1024
    assert parse_values({"input_fusion_size": -5}, "t").get("input_fusion_size") == 0
    warnings = _messages(npu_log, logging.WARNING)
    assert any("input_fusion_size=67108864 is outside" in m for m in warnings)
    assert any("input_fusion_size=-5 is outside" in m for m in warnings)


# --- cross-key rules ---------------------------------------------------------------------------------------


def test_precision_mode_and_v2_are_exclusive():
    with pytest.raises(NpuOptionError, match="can not be assigned at the same time"):
        parse_values({"precision_mode": "force_fp16", "precision_mode_v2": "fp16"}, "t")


@pytest.fixture
def mixlist_file(tmp_path):
    """A valid (empty) modify_mixlist file: the option's check reads it."""
    path = tmp_path / "ops.json"
    path.write_text("{}")
    return str(path)


@pytest.mark.parametrize(
    "values, key, detail",
    [
        ({"precision_mode": "force_fp16"}, "precision_mode", "please ensure precision_mode is one of"),
        ({"precision_mode_v2": "fp16"}, "precision_mode_v2", "please ensure precision_mode_v2 is one of"),
        ({}, "modify_mixlist", "please ensure precision_mode or precision_mode_v2 is set"),
    ],
)
def test_modify_mixlist_needs_a_mixed_mode(values, key, detail, mixlist_file):
    with pytest.raises(NpuOptionError, match="modify_mixlist is assigned, " + detail) as raised:
        parse_values({"modify_mixlist": mixlist_file, **values}, "t")
    assert raised.value.key == key


@pytest.mark.parametrize(
    "mode", [{"precision_mode": "allow_mix_precision_bf16"}, {"precision_mode_v2": "mixed_bfloat16"}]
)
def test_modify_mixlist_with_a_mixed_mode_is_accepted(mode, mixlist_file):
    assert parse_values({"modify_mixlist": mixlist_file, **mode}, "t").get("modify_mixlist") == mixlist_file


def test_optypelist_needs_op_select_implmode():
    with pytest.raises(NpuOptionError, match="when use optypelist_for_implmode, op_select_implmode must be set"):
        parse_values({"optypelist_for_implmode": "Pooling"}, "t")


@pytest.mark.parametrize(
    "present",
    [("input_shape",), ("dynamic_dims",), ("input_shape", "dynamic_node_type"), ("dynamic_dims", "dynamic_node_type")],
)
def test_dynamic_input_trio_goes_together(present):
    full = {"input_shape": "data:-1,3", "dynamic_dims": "2;4", "dynamic_node_type": 0}
    with pytest.raises(NpuOptionError, match="should use together") as raised:
        parse_values({key: full[key] for key in present}, "t")
    assert raised.value.key == present[0]


def test_compile_hybrid_mode_rules():
    trio = {"input_shape": "data:-1,3", "dynamic_dims": "2;4"}
    with pytest.raises(NpuOptionError, match="should be set when compile_hybrid_mode is 1"):
        parse_values({"compile_hybrid_mode": 1}, "t")
    with pytest.raises(NpuOptionError, match="dynamic_node_type should be 1") as raised:
        parse_values({"compile_hybrid_mode": 1, "dynamic_node_type": 0, **trio}, "t")
    assert raised.value.key == "dynamic_node_type"
    assert parse_values({"compile_hybrid_mode": 0}, "t").get("compile_hybrid_mode") == 0


def test_compressed_weights_conflict(tmp_path):
    conf = tmp_path / "c.cfg"
    conf.write_text("x")
    with pytest.raises(NpuOptionError, match="enable_compress_weight can not use with compress_weight_conf"):
        parse_values({"enable_compress_weight": True, "compress_weight_conf": str(conf)}, "t")
    options = parse_values({"enable_compress_weight": False, "compress_weight_conf": str(conf)}, "t")
    assert options.get("compress_weight_conf") == str(conf)


# --- upstream's habits -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key, field, value, expected",
    [
        ("graph_run_mode", "b", True, 1),
        ("min_group_size", "b", 1, 1),
        ("enable_dump_debug", "s", "FALSE", False),
        ("hcom_parallel", "s", "0", False),
        ("is_tailing_optimization", "i", 1, True),
        ("iterations_per_loop", "s", "10", 10),
        ("stream_sync_timeout", "s", "-1", -1),
        ("quant_dumpable", "i", 1, "1"),
    ],
)
def test_value_in_another_field_is_converted_and_logged(key, field, value, expected, npu_log, monkeypatch):
    monkeypatch.setattr(log, "_once_keys", set())  # another test may have logged this conversion already
    options = parse_config(_config(**{key: (field, value)}))
    assert options.get(key) == expected
    assert any(key in m and "converted" in m for m in _messages(npu_log, logging.INFO))


@pytest.mark.parametrize(
    "key, field, value, detail",
    [
        ("enable_dump", "i", 2, "no unambiguous meaning"),
        ("graph_run_mode", "s", "one", "no unambiguous meaning"),
        ("dump_path", "b", True, "no unambiguous meaning"),
        ("jit_compile", "i", 1, "The data type of jit_compile is invalid"),
        ("shape_generalization_mode", "b", True, "The data type of shape_generalization_mode is invalid"),
        ("shape_generalization_mode", "i", 1, "The data type of shape_generalization_mode is invalid"),
        ("graph_run_mode", "f", 1.0, "AttrValue field .f"),
    ],
)
def test_ambiguous_field_raises(key, field, value, detail):
    with pytest.raises(NpuOptionError, match=detail) as raised:
        parse_config(_config(**{key: (field, value)}))
    assert raised.value.key == key


def test_key_without_value_is_the_kinds_zero_and_logged(npu_log):
    config = config_pb2.ConfigProto()
    entry = _entry(config)
    entry.parameter_map["hcom_parallel"]  # present, no field set
    options = parse_config(config)
    assert options.get("hcom_parallel") is False
    assert any("hcom_parallel is present but has no value" in m for m in _messages(npu_log, logging.WARNING))


def test_python_values_habits(npu_log):
    options = parse_values(
        {
            "enable_dump_debug": "true",
            "dump_path": b"/tmp",
            "enable_small_channel": True,
            "graph_memory_max_size": 1024,
            "precision_mode": None,
        },
        "NPURunConfig",
    )
    assert options.get("enable_dump_debug") is True
    assert options.get("dump_path") == os.path.realpath("/tmp")
    assert options.get("enable_small_channel") == 1
    assert options.get("graph_memory_max_size") == "1024"
    assert not options.is_set("precision_mode")
    with pytest.raises(NpuOptionError, match=r"expected int, got float \(given to NPURunConfig\)"):
        parse_values({"iterations_per_loop": 2.0}, "NPURunConfig")
    with pytest.raises(NpuOptionError, match="The data type of jit_compile is invalid"):
        parse_values({"jit_compile": 1}, "NPURunConfig")


@pytest.mark.parametrize("value, expected", [(True, "true"), (False, "false")])
def test_jit_compile_read_as_a_bool_by_r1_10_is_its_string(value, expected, npu_log, monkeypatch):
    monkeypatch.setattr(log, "_once_keys", set())
    options = parse_config(_config(jit_compile=("b", value)))
    assert options.get("jit_compile") == expected
    assert any("jit_compile" in m and repr(expected) in m for m in _messages(npu_log, logging.INFO))
    assert parse_values({"jit_compile": value}, "NPURunConfig").get("jit_compile") == expected
    entry = config_pb2.ConfigProto().graph_options.rewrite_options.custom_optimizers.add()
    options.write_parameter_map(entry)
    assert entry.parameter_map["jit_compile"].s == expected.encode()


def test_use_off_line_false_is_accepted_and_logged(npu_log):
    assert parse_config(_config(use_off_line=("b", False))).get("use_off_line") is False
    assert any("use_off_line=False" in m for m in _messages(npu_log, logging.INFO))


# --- unknown keys, several entries, status notes -----------------------------------------------------------


def test_unknown_key_is_warned_once_with_suggestion_and_ignored(npu_log):
    config = _config(enable_dumpp=("b", True), zzz_unrelated_key=("i", 1))
    options = parse_config(config)
    parse_config(config)
    assert options.unknown == ("enable_dumpp", "zzz_unrelated_key")
    assert options.explicit == {}
    warnings = _messages(npu_log, logging.WARNING)
    suggested = [m for m in warnings if "'enable_dumpp' is not known" in m]
    assert len(suggested) == 1 and "did you mean 'enable_dump'?" in suggested[0]
    unrelated = [m for m in warnings if "'zzz_unrelated_key' is not known" in m]
    assert len(unrelated) == 1 and "did you mean" not in unrelated[0]


def test_unknown_python_value_is_warned_and_ignored(npu_log):
    options = parse_values({"precision_mod": "force_fp16"}, "npu_resource_init")
    assert options.unknown == ("precision_mod",)
    assert any("did you mean 'precision_mode'" in m for m in _messages(npu_log, logging.WARNING))


def test_several_entries_merge_and_later_wins(npu_log):
    config = config_pb2.ConfigProto()
    _entry(config, precision_mode=("s", "allow_mix_precision"), hcom_parallel=("b", False), op_wait_timeout=("i", 30))
    _entry(config, op_wait_timeout=("i", 60), enable_small_channel=("i", 1), hcom_parallel=("b", False))
    options = parse_config(config)
    parse_config(config)
    assert options.explicit == {
        "precision_mode": "allow_mix_precision",
        "hcom_parallel": False,
        "op_wait_timeout": 60,
        "enable_small_channel": 1,
    }
    disagreements = [m for m in _messages(npu_log, logging.WARNING) if "set differently" in m]
    assert len(disagreements) == 1 and "op_wait_timeout" in disagreements[0]


def test_a_bad_value_overridden_by_a_later_entry_is_not_an_error():
    config = config_pb2.ConfigProto()
    _entry(config, graph_run_mode=("s", "train"))
    _entry(config, graph_run_mode=("i", 0))
    assert parse_config(config).get("graph_run_mode") == 0


def test_options_that_do_nothing_here_are_reported(npu_log):
    parse_values({"fp_point": "conv1", "is_tailing_optimization": True, "hcom_multi_mode": True, "oo_level": "O3"}, "t")
    assert any(
        "is_tailing_optimization, hcom_multi_mode: accepted, no effect here" in m
        for m in _messages(npu_log, logging.INFO)
    )
    assert not any("oo_level" in r.getMessage() for r in npu_log.records)  # the default value
    assert not any("fp_point" in r.getMessage() for r in npu_log.records)  # it works


# --- writing back ------------------------------------------------------------------------------------------


def test_write_parameter_map_round_trip(tmp_path, mixlist_file):
    config = _config(
        enable_dump=("b", True),
        dump_path=("s", str(tmp_path)),
        dump_step=("s", "1|3-4"),
        graph_run_mode=("b", True),
        precision_mode=("s", "allow_mix_precision"),
        modify_mixlist=("s", mixlist_file),
        input_shape=("s", "data:-1"),
        dynamic_dims=("s", "1;2"),
        dynamic_node_type=("i", 1),
        session_device_id=("s", "2"),
        not_an_option=("i", 3),
    )
    options = parse_config(config)
    target = config_pb2.ConfigProto()
    entry = _entry(target, stale_key=("s", "x"))
    options.write_parameter_map(entry)
    reparsed = parse_config(target)
    assert all(reparsed.get(name) == options.get(name) for name in OPTIONS)
    assert reparsed.unknown == ()
    params = entry.parameter_map
    assert params["graph_run_mode"].WhichOneof("value") == "i"
    assert params["session_device_id"].i == 2
    assert params["enable_dump"].b is True
    assert params["dump_step"].s == b"1|3-4"
    assert "precision_mode_v2" not in params
    assert set(params) == {name for name in OPTIONS if options.get(name) is not None}


def test_write_parameter_map_explicit_only_gives_back_the_same_options(tmp_path):
    # npu_device.open() hands its options to the session bridge this way: options left unset stay unset, so
    # device_target still yields to NPU_BRIDGE_DEVICE_TARGET and profiling_mode to PROFILING_MODE.
    options = parse_config(_config(precision_mode=("s", "allow_mix_precision"), dump_path=("s", str(tmp_path))))
    target = config_pb2.ConfigProto()
    entry = _entry(target, stale_key=("s", "x"))
    options.write_parameter_map(entry, explicit_only=True)
    assert set(entry.parameter_map) == {"precision_mode", "dump_path"}
    reparsed = parse_config(target)
    assert reparsed == options
    assert not reparsed.is_set("device_target") and not reparsed.is_set("profiling_mode")


# --- hostile values (found by tests/fuzz/test_fuzz_inputs.py) ---------------------------------------------------------


@pytest.mark.parametrize("text", ["٣", "１", "۷", "٣٠٠", "1_0"])
def test_integer_text_in_other_scripts_digits_is_not_a_number(text):
    # int() reads Arabic-Indic and fullwidth digits; a string holding them is not an integer option's value.
    with pytest.raises(NpuOptionError, match="no unambiguous meaning") as raised:
        parse_config(_config(op_debug_level=("s", text)))
    assert raised.value.key == "op_debug_level" and repr(text) in str(raised.value)
    assert parse_config(_config(op_debug_level=("s", " 3 "))).get("op_debug_level") == 3


@pytest.mark.parametrize("shape", ["data:٣,3", "data:-١,3", "data:３"])
def test_input_shape_dims_are_ascii_digits(shape):
    with pytest.raises(NpuOptionError, match="input_shape string style is invalid") as raised:
        parse_values({"input_shape": shape, "dynamic_dims": "2,4", "dynamic_node_type": 1}, "t")
    assert raised.value.key == "input_shape"


@pytest.mark.parametrize(
    "options, detail",
    [
        ({"storage_limit": "٣٠٠MB"}, "storage_limit"),
        ({"sys_io_sampling_freq": "١٠"}, "sys_io_sampling_freq"),
        ({"output": "prof\x00ile"}, "NUL character"),
        ({"output": "/tmp/" + "a" * 300}, "too long"),
        ({"output": "/tmp/" + "/".join(["b" * 200] * 25)}, "too long"),
    ],
)
def test_profiling_options_values_that_cannot_work_raise(options, detail):
    text = json.dumps(options)
    with pytest.raises(NpuOptionError, match=detail) as raised:
        parse_values({"profiling_mode": True, "profiling_options": text}, "t")
    assert raised.value.key == "profiling_options" and len(str(raised.value)) < 1024


@pytest.mark.parametrize("key", ["op_debug_config", "fusion_switch_file", "graph_compiler_cache_dir", "dump_path"])
def test_an_option_error_stays_short_whatever_the_path(key, tmp_path):
    values = {key: str(tmp_path / ("x" * 200) / ("y" * 200) / "missing"), "enable_dump": True}
    if key != "dump_path":
        values["dump_path"] = str(tmp_path)
    with pytest.raises(NpuOptionError) as raised:
        parse_values(values, "t")
    message = str(raised.value)
    assert raised.value.key == key and len(message) < 1024, message
    assert f"'{key}'" in message and "Allowed: " in message


def test_an_option_error_quoting_a_file_stays_short(tmp_path):
    path = tmp_path / "dtypes.cfg"
    path.write_text("[" * 10000 + "\n")
    with pytest.raises(NpuOptionError, match="customize_dtypes") as raised:
        parse_values({"customize_dtypes": str(path)}, "t")
    assert len(str(raised.value)) < 1024 and "characters)" in str(raised.value)
