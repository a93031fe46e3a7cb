"""Options with no effect here are still held to upstream's documented values, and every option whose
``allowed`` text states a closed set, range, path or format has a check that enforces it."""

import logging
import re

import pytest
import tensorflow as tf
from helpers.config import npu_config

from npu_bridge.core.options import OPTIONS, parse_config, parse_values
from npu_bridge.core.options.spec import OptionSpec
from npu_bridge.core.runtime import log
from npu_bridge.core.runtime.errors import NpuOptionError

# --- classifying allowed texts -----------------------------------------------------------------------------

_PLAIN = {"b": "true / false", "i": "integer", "s": "string"}  # the table's text for "any value of the kind"
# "0 / 1", "LB / SINGLE", "0 (off) / 1 (on)", "cv / LoadBalance:n": values joined by " / " from the start.
_CLOSED_SET = re.compile(r"[\w.:-]+(?: \([^)]*\))?(?: / [\w.:-]+(?: \([^)]*\))?)+")
_RANGE = re.compile(r"-?[0-9]+ \.\. -?[0-9]+|[<>]=? ?-?[0-9]+")  # "0 .. 4", "integer >= 1", "seconds, > 0"
_PATH = re.compile(r"\bpath to\b|\bexisting\b")
_FORMAT = re.compile(r"comma-separated|joined by|\bJSON\b|\bdigits\b|\w\|\w")  # lists, JSON, "cube|vector"


def _closed(allowed):
    """Tells whether an allowed text is a closed set of values or a numeric range."""
    return bool(_CLOSED_SET.match(allowed) or _RANGE.search(allowed))


def _enumerable(spec):
    """Tells whether an option's allowed text states something a check can enforce."""
    allowed = spec.allowed
    if allowed == _PLAIN[spec.kind]:
        return False
    return _closed(allowed) or bool(_PATH.search(allowed) or _FORMAT.search(allowed))


# Unchecked options whose allowed text only describes the value (a unit, a name, an example, an output path
# the Ascend software creates) and where upstream documents no range: nothing to enforce.
FREE_FORM = {
    "job",
    "soc_config",
    "fp_point",
    "bp_point",
    "dump_layer",
    "debug_dir",
    "op_compiler_cache_dir",
    "graph_exec_timeout",
    "HCCL_algorithm",
    "op_wait_timeout",
    "op_execute_timeout",
    "stream_sync_timeout",
    "event_sync_timeout",
    "oo_level",
    "dynamic_inputs_shape_range",
}


def test_every_option_with_an_enumerable_allowed_text_has_a_check():
    unchecked = sorted(name for name, spec in OPTIONS.items() if _enumerable(spec) and spec.check is None)
    assert unchecked == []


def test_the_classifier_is_not_vacuous():
    flagged = {name for name, spec in OPTIONS.items() if _enumerable(spec)}
    assert len(flagged) >= 50
    assert {
        "op_debug_level",
        "static_memory_policy",
        "atomic_clean_policy",
        "quant_dumpable",
        "optypelist_for_implmode",
        "fusion_switch_file",
        "graph_compiler_cache_dir",
        "precision_mode",
        "dump_step",
    } <= flagged

    def spec(allowed, kind="s"):
        return OptionSpec("x", kind, "session", None, allowed, "no_effect", "test")

    for text in ("0 / 1 / 2", "0 (off) / 1 (on)", "0 .. 4", "integer >= 1", "path to an existing file", "a|b"):
        assert _enumerable(spec(text)), text
    for text in ("string", "op name", "seconds", "e.g. O1 / O3", "TF_CONFIG task type, e.g. localhost / ps"):
        assert not _enumerable(spec(text)), text


def test_unchecked_options_are_the_known_free_form_ones():
    # A new option with its own allowed text and no check must be listed above deliberately.
    unchecked = {name for name, spec in OPTIONS.items() if spec.check is None and spec.allowed != _PLAIN[spec.kind]}
    assert unchecked == FREE_FORM
    assert not any(_enumerable(OPTIONS[name]) for name in FREE_FORM)


# --- options with no effect here: out-of-range values are rejected, documented ones accepted ----------------

# Values upstream documents as not allowed; every no-effect option with a closed set or range is here.
OUTSIDE = {
    "variable_placement": ["device", ""],
    "graph_max_parallel_model_num": [0, -1],
    "quant_dumpable": ["bogus", "2", ""],
    "op_debug_level": [5, -1],
    "export_compile_stat": [3, -1],
    "ac_parallel_enable": ["2", "on"],
    "auto_multistream_parallel_mode": ["LoadBalance:0", "MainStream:65", "MainStream", "cv:1", "balance"],
    "atomic_clean_policy": [99, 2, -1],
    "static_memory_policy": [-1, 5],
    "variable_use_1g_huge_page": [3, -1],
    "graph_slice": ["AUTO", ""],
    "buffer_optimize": ["l1_optimize"],
    "enable_small_channel": [2, -1],
    "jit_compile": ["True", "2"],
    "shape_generalization_mode": ["full"],
    "op_compiler_cache_mode": ["enabled", "off", ""],
    "dynamic_graph_execute_mode": ["static"],
    "dynamic_node_type": [2, -1],
    "compile_hybrid_mode": [2, -1],
    "aoe_mode": ["3", "mdat", ""],
    "experimental_logical_device_cluster_deploy_mode": ["lb", "MULTI"],
}
# Accepted values, boundaries included.
INSIDE = {
    "variable_placement": ["Host", "Device"],
    "graph_max_parallel_model_num": [1, 8],
    "quant_dumpable": ["0", "1"],
    "op_debug_level": [0, 4],
    "export_compile_stat": [0, 2],
    "ac_parallel_enable": ["0", "1"],
    "auto_multistream_parallel_mode": ["cv", "LoadBalance", "LoadBalance:1", "MainStream:64"],
    "atomic_clean_policy": [0, 1],
    "static_memory_policy": [0, 1, 2, 3, 4],
    "variable_use_1g_huge_page": [0, 2],
    "graph_slice": ["auto", "manual"],
    "buffer_optimize": ["l2_optimize", "off_optimize"],
    "enable_small_channel": [0, 1],
    "jit_compile": ["true", "false", "auto"],
    "shape_generalization_mode": ["STRICT", "FULL"],
    "op_compiler_cache_mode": ["enable", "force", "disable"],
    "dynamic_graph_execute_mode": ["lazy_recompile", "dynamic_execute"],
    "dynamic_node_type": [0, 1],
    "compile_hybrid_mode": [0, 1],
    "aoe_mode": ["1", "2", "4"],
    "experimental_logical_device_cluster_deploy_mode": ["LB", "SINGLE"],
}
NEVER_REJECTS = {"input_fusion_size"}  # clamped into its range with a warning, as upstream does
_DYNAMIC = {"input_shape": "data:-1,3", "dynamic_dims": "2,4", "dynamic_node_type": 1}
COMPANIONS = {
    "dynamic_graph_execute_mode": {"dynamic_input": True},
    "dynamic_node_type": {"input_shape": "data:-1,3", "dynamic_dims": "2,4"},
    "compile_hybrid_mode": _DYNAMIC,
}


def _no_effect_closed():
    return {
        name
        for name, spec in OPTIONS.items()
        if spec.status == "no_effect" and spec.allowed != _PLAIN[spec.kind] and _closed(spec.allowed)
    }


def test_every_no_effect_option_with_a_closed_set_or_range_is_covered():
    assert len(_no_effect_closed()) >= 20
    assert _no_effect_closed() - NEVER_REJECTS == set(OUTSIDE) == set(INSIDE)


def _values(name, value, tmp_path):
    values = {**COMPANIONS.get(name, {}), name: value}
    if name == "aoe_mode":
        values["work_path"] = str(tmp_path)
    return values


@pytest.mark.parametrize("name, value", [(n, v) for n, values in sorted(OUTSIDE.items()) for v in values])
def test_value_outside_upstreams_range_raises_naming_key_value_and_allowed(name, value, tmp_path):
    with pytest.raises(NpuOptionError) as raised:
        parse_values(_values(name, value, tmp_path), "test")
    assert raised.value.key == name
    message = str(raised.value)
    assert f"'{name}'" in message and repr(value) in message and OPTIONS[name].allowed in message


@pytest.mark.parametrize("name, value", [(n, v) for n, values in sorted(INSIDE.items()) for v in values])
def test_value_inside_upstreams_range_is_accepted(name, value, tmp_path):
    assert parse_values(_values(name, value, tmp_path), "test").get(name) == value


def test_no_effect_value_is_still_reported_once(npu_log, caplog, monkeypatch):
    caplog.set_level(logging.INFO, logger="npu_bridge")
    monkeypatch.setattr(log, "_once_keys", set())
    values = {"op_debug_level": 2, "static_memory_policy": 4, "quant_dumpable": "1"}
    parse_values(values, "t")
    parse_values(values, "t")
    reports = [m for m in npu_log if "accepted, no effect here" in m]
    assert reports == [
        "NpuOptimizer options quant_dumpable, op_debug_level, static_memory_policy: accepted, "
        "no effect here (see the option table in docs/options.md)"
    ]


# --- formats and paths -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value", ["", ",", "Pooling,", ",Pooling", "Pooling,,SoftmaxV2", "Pooling, SoftmaxV2", "Pooling;SoftmaxV2", "2D"]
)
def test_optypelist_must_be_comma_separated_op_types(value):
    with pytest.raises(NpuOptionError, match="op types separated by commas") as raised:
        parse_values({"op_select_implmode": "high_precision", "optypelist_for_implmode": value}, "t")
    assert raised.value.key == "optypelist_for_implmode"


@pytest.mark.parametrize("value", ["Pooling", "Pooling,SoftmaxV2,LRN,ROIAlign", "_Internal_Op2"])
def test_optypelist_accepts_op_types_with_op_select_implmode(value):
    options = parse_values({"op_select_implmode": "high_precision", "optypelist_for_implmode": value}, "t")
    assert options.get("optypelist_for_implmode") == value
    with pytest.raises(NpuOptionError, match="op_select_implmode must be set"):
        parse_values({"optypelist_for_implmode": value}, "t")


@pytest.mark.parametrize(
    "name, good, bad",
    [
        ("enable_scope_fusion_passes", "ScopeLayerNormPass,ScopeClipBoxesPass", "ScopeA ScopeB"),
        ("stream_max_parallel_num", "DNN_VM_AICPU:10,AIcoreEngine:1", "DNN_VM_AICPU:ten"),
        ("aicore_num", "2|4", "2"),
        ("experimental_accelerate_train_mode", "fast1|loss|1.05", "fast|step"),
        ("graph_memory_max_size", "26843545600", "26843545600.0"),
        ("variable_memory_max_size", "5368709120", "5 GB"),
        ("graph_memory_max_size", "16 * 1024 * 1024 * 1024", "16 * 1024.5"),  # a zoo script's product
        ("variable_memory_max_size", "4*1024*1024*1024", "4*"),
    ],
)
def test_formats(name, good, bad):
    assert parse_values({name: good}, "t").get(name) == good
    with pytest.raises(NpuOptionError) as raised:
        parse_values({name: bad}, "t")
    assert raised.value.key == name


FILE_OPTIONS = (
    "op_debug_config",
    "compress_weight_conf",
    "insert_op_file",
    "aoe_config_file",
    "resource_config_path",
    "graph_parallel_option_path",
)


@pytest.mark.parametrize("name", FILE_OPTIONS)
def test_config_file_options_need_an_existing_file(name, tmp_path):
    existing = tmp_path / "some.cfg"
    existing.write_text("x\n")
    assert parse_values({name: str(existing)}, "t").get(name) == str(existing)
    for path, detail in ((tmp_path / "missing.cfg", "does not exist"), (tmp_path, "is not a file"), ("", "empty")):
        with pytest.raises(NpuOptionError, match=detail) as raised:
            parse_values({name: str(path)}, "t")
        assert raised.value.key == name


def test_relative_config_file_is_made_absolute(tmp_path, monkeypatch):
    (tmp_path / "aipp.cfg").write_text("x\n")
    monkeypatch.chdir(tmp_path)
    assert parse_values({"insert_op_file": "aipp.cfg"}, "t").get("insert_op_file") == str(tmp_path / "aipp.cfg")


@pytest.mark.parametrize(
    "content, detail",
    [
        ("{", "not valid JSON"),
        ('["Switch"]', 'a "Switch" object'),
        ('{"GraphFusion": {"ALL": "off"}}', 'a "Switch" object'),
        ('{"Switch": {"GraphFusion": {"ALL": "of"}}}', '"on" or "off"'),
        ('{"Switch": {"UBFusion": ["ALL"]}}', '"on" or "off"'),
    ],
)
def test_fusion_switch_file_layout(content, detail, tmp_path):
    path = tmp_path / "fusion.json"
    path.write_text(content)
    with pytest.raises(NpuOptionError, match=detail):
        parse_values({"fusion_switch_file": str(path)}, "t")
    path.write_text('{"Switch": {"GraphFusion": {"ALL": "off", "RequantFusionPass": "on"}, "UBFusion": {}}}')
    assert parse_values({"fusion_switch_file": str(path)}, "t").get("fusion_switch_file") == str(path)


def test_graph_compiler_cache_dir_must_exist(tmp_path):
    assert parse_values({"graph_compiler_cache_dir": str(tmp_path)}, "t").get("graph_compiler_cache_dir")
    with pytest.raises(NpuOptionError, match="does not exist"):
        parse_values({"graph_compiler_cache_dir": str(tmp_path / "missing")}, "t")


# --- the issue's examples, through a ConfigProto and at session creation ----------------------------------


@pytest.mark.parametrize(
    "name, value",
    [
        ("op_debug_level", 5),
        ("static_memory_policy", -1),
        ("atomic_clean_policy", 99),
        ("quant_dumpable", "bogus"),
        ("op_debug_config", "/nonexistent/npu_bridge/debug.cfg"),
    ],
)
def test_issue_examples_raise_from_a_config_proto(name, value):
    with pytest.raises(NpuOptionError) as raised:
        parse_config(npu_config(**{name: value}))
    assert raised.value.key == name and repr(value) in str(raised.value)


def test_bad_no_effect_value_raises_at_session_creation():
    graph = tf.Graph()
    with pytest.raises(NpuOptionError) as raised:
        tf.compat.v1.Session(graph=graph, config=npu_config(op_debug_level=5))
    message = str(raised.value)
    assert "'op_debug_level'" in message and "5" in message and "0 .. 4" in message


def test_valid_no_effect_value_creates_the_session():
    graph = tf.Graph()
    with graph.as_default():
        two = tf.constant(2.0) * 1.0
    with tf.compat.v1.Session(graph=graph, config=npu_config(op_debug_level=4, static_memory_policy=2)) as sess:
        assert sess.run(two) == 2.0


def test_hccl_timeout_is_capped_like_hccl_exec_timeout():
    cap = 2**31 - 1  # HCCL_EXEC_TIMEOUT's cap (npu_bridge/core/collectives/settings.py)
    assert parse_values({"hccl_timeout": cap}, "t").get("hccl_timeout") == cap
    assert parse_values({"hccl_timeout": str(cap)}, "t").get("hccl_timeout") == cap
    for value in (cap + 1, 2**63 - 1, 0):
        with pytest.raises(NpuOptionError, match=rf"'hccl_timeout' has invalid value {value}\b.*1 \.\. {cap}"):
            parse_values({"hccl_timeout": value}, "t")
