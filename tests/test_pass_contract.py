"""The pass-parameter contract: optimizers/pass_contract.h and npu_bridge/core/session/pass_contract.py declare
the same keys, record fields and node attributes; a bridged session's parameter_map carries exactly those keys
with structured values; hostile option values fail at session creation; and the C++ NpuOptimizer rejects a
contract key of the wrong kind with an error naming it (no crash)."""

import os
import pathlib
import re

import pytest
import tensorflow as tf
from conftest import REPO_ROOT, npu_config, run_python

from npu_bridge.core.runtime.errors import NpuOptionError, PassContractError
from npu_bridge.core.session import pass_contract

v1 = tf.compat.v1
HEADER = pathlib.Path(REPO_ROOT, "optimizers", "pass_contract.h")
_KEY_KINDS = {
    "BoolKey": "b",
    "IntKey": "i",
    "StringKey": "s",
    "IntListKey": "list.i",
    "StringListKey": "list.s",
    "RecordListKey": "list.func",
    "RecordKey": "func",
}
_FIELD_KINDS = {
    "kBool": "b",
    "kInt": "i",
    "kString": "s",
    "kIntList": "list.i",
    "kStringList": "list.s",
    "kTypeList": "list.type",
    "kRecordList": "list.func",
    "kRecord": "func",
}
_SCALAR_KEY = re.compile(r"constexpr (BoolKey|IntKey|StringKey) (k\w+)\{\"([^\"]+)\", ([^}]+)\};")
_LIST_KEY = re.compile(r"constexpr (IntListKey|StringListKey|RecordListKey|RecordKey) (k\w+)\{\"([^\"]+)\"\};")
_FIELD = re.compile(r"constexpr RecordField k\w+\{\"([^\"]+)\", \"([^\"]+)\", Kind::(k\w+)\};")
_NODE_ATTR = re.compile(r"constexpr NodeAttr k\w+\{\"([^\"]+)\"\};")
_ALL_KEYS = re.compile(r"kAllKeys\[\] = \{(.*?)\};", re.S)
_EMPTY = "empty"


def _default(text):
    text = text.strip()
    if text in ("true", "false"):
        return text == "true"
    if text.startswith('"'):
        return text[1:-1]
    return int(text)


def parse_header(text):
    """Reads the contract from pass_contract.h text: ({key: (kind, default)}, {(key, field): kind}, node attrs,
    names of the keys listed in kAllKeys)."""
    constants, keys = {}, {}
    for cpp_type, constant, name, default in _SCALAR_KEY.findall(text):
        constants[constant] = name
        keys[name] = (_KEY_KINDS[cpp_type], _default(default))
    for cpp_type, constant, name in _LIST_KEY.findall(text):
        constants[constant] = name
        keys[name] = (_KEY_KINDS[cpp_type], _EMPTY)
    fields = {(key, name): _FIELD_KINDS[kind] for key, name, kind in _FIELD.findall(text)}
    listed = _ALL_KEYS.search(text)
    all_keys = {constants.get(c, c) for c in re.findall(r"Spec\((k\w+)\)", listed.group(1))} if listed else set()
    return keys, fields, set(_NODE_ATTR.findall(text)), all_keys


def contract_differences(header_text):
    """Everything in which pass_contract.h (as ``header_text``) and the Python table disagree; [] when equal."""
    keys, fields, node_attrs, all_keys = parse_header(header_text)
    python_keys = {
        k.name: (k.kind, _EMPTY if k.kind.startswith("list") or k.kind == "func" else k.default)
        for k in pass_contract.KEYS
    }
    problems = []
    for name in sorted(set(keys) | set(python_keys)):
        if name not in keys:
            problems.append(f"{name}: in the Python table, not in the header")
        elif name not in python_keys:
            problems.append(f"{name}: in the header, not in the Python table")
        elif keys[name] != python_keys[name]:
            problems.append(f"{name}: header (kind, default) {keys[name]} != Python {python_keys[name]}")
        if name in keys and name not in all_keys:
            problems.append(f"{name}: declared in the header but missing from kAllKeys")
    problems += [f"{name}: listed in kAllKeys but not declared" for name in sorted(all_keys - set(keys))]
    problems += [
        f"{name}: does not start with {pass_contract.KEY_PREFIX}"
        for name in sorted(python_keys)
        if not name.startswith(pass_contract.KEY_PREFIX)
    ]
    python_fields = {(f.key, f.name): f.kind for f in pass_contract.RECORD_FIELDS}
    for field in sorted(set(fields) | set(python_fields)):
        if fields.get(field) != python_fields.get(field):
            problems.append(
                f"{field[0]} record field {field[1]}: header {fields.get(field)} != Python {python_fields.get(field)}"
            )
    for attr in sorted(node_attrs ^ set(pass_contract.NODE_ATTRS)):
        problems.append(f"node attribute {attr}: only in the {'header' if attr in node_attrs else 'Python table'}")
    return problems


def test_the_header_and_the_python_table_agree():
    keys, fields, node_attrs, _ = parse_header(HEADER.read_text())
    assert len(keys) == len(pass_contract.KEYS) and len(fields) == len(pass_contract.RECORD_FIELDS)
    assert len(node_attrs) == len(pass_contract.NODE_ATTRS)
    assert contract_differences(HEADER.read_text()) == []


@pytest.mark.parametrize(
    "old, new, named",
    [
        ('kDumpSteps{"_npu_dump_steps"}', 'kDumpSteps{"_npu_dump_step"}', "_npu_dump_steps"),
        ('kDumpOutputs{"_npu_dump_outputs", true}', 'kDumpOutputs{"_npu_dump_outputs", false}', "_npu_dump_outputs"),
        ("constexpr IntKey kSessionId", "constexpr BoolKey kSessionId", "_npu_session_id"),
        ("constexpr StringListKey kDumpLayers", "constexpr IntListKey kDumpLayers", "_npu_dump_layers"),
        ('"input_dtypes", Kind::kTypeList', '"input_dtypes", Kind::kStringList', "input_dtypes"),
        ('constexpr NodeAttr kKeepDtypeAttr{"_keep_dtype"};', "", "_keep_dtype"),
        ("Spec(kCollectiveTimeout),", "", "_npu_collective_timeout"),
    ],
)
def test_a_header_that_disagrees_is_caught(old, new, named):
    text = HEADER.read_text()
    assert text.count(old) == 1
    problems = contract_differences(text.replace(old, new))
    assert any(named in problem for problem in problems), problems


def test_an_empty_plan_writes_the_defaults():
    entry = v1.ConfigProto().graph_options.rewrite_options.custom_optimizers.add()
    pass_contract.write(entry, pass_contract.PassPlan())
    defaults = {k.name: list(k.default) if k.kind.startswith("list") else k.default for k in pass_contract.KEYS}
    assert pass_contract.read(entry) == defaults


def test_a_plan_value_of_the_wrong_type_and_a_key_of_the_wrong_kind_are_errors():
    entry = v1.ConfigProto().graph_options.rewrite_options.custom_optimizers.add()
    with pytest.raises(PassContractError, match="_npu_dump_steps"):
        pass_contract.write(entry, pass_contract.PassPlan(dump_steps=((0, 2**64),)))
    entry.parameter_map[pass_contract.DUMP_STEPS.name].s = b"0|5"
    with pytest.raises(PassContractError, match="_npu_dump_steps holds .*declares list.i"):
        pass_contract.read(entry)


def _bridged_entry(sess):
    config = sess._config
    entries = [e for e in config.graph_options.rewrite_options.custom_optimizers if e.name == "NpuOptimizer"]
    assert len(entries) == 1
    return entries[0]


def test_a_bridged_session_carries_exactly_the_contract_keys_with_structured_values(tmp_path):
    config = npu_config(
        enable_dump=True,
        enable_dump_debug=True,
        dump_path=str(tmp_path),
        dump_step="0|5|10-20",
        dump_layer="dense/MatMul  loss",
        dump_mode="all",
        iterations_per_loop=3,
        hccl_timeout=7,
        precision_mode="force_fp16",
        device_target="ascend",
    )
    with v1.Session(graph=tf.Graph(), config=config) as sess:
        entry = _bridged_entry(sess)
        options = sess._npu_bridge_options
    assert {key for key in entry.parameter_map if key.startswith("_npu_")} == {k.name for k in pass_contract.KEYS}
    values = pass_contract.read(entry)
    root = values.pop("_npu_dump_root")
    assert root.startswith(os.path.realpath(tmp_path) + os.sep) and root.endswith(os.sep + "0")
    fp16 = {"input_slots": [-1], "input_dtypes": ["float16"], "output_slots": [-1], "output_dtypes": ["float16"]}
    assert values == {
        "_npu_bridge_validated": True,
        "_npu_bridge_init_options": options.by_stage("init"),
        "_npu_dump_enabled": True,
        "_npu_dump_base": os.path.realpath(tmp_path),
        "_npu_dump_inputs": True,
        "_npu_dump_outputs": True,
        "_npu_dump_stats": False,
        "_npu_dump_golden": True,
        "_npu_dump_steps": [0, 0, 5, 5, 10, 20],
        "_npu_dump_layers": ["dense/MatMul", "loss"],
        "_npu_overflow_check": True,
        "_npu_overflow_fp16_saturation": True,
        "_npu_exception_dump": False,
        "_npu_exception_dir": "",
        "_npu_exception_base": "",
        "_npu_session_id": 0,
        "_npu_precision_rewrite": True,
        "_npu_precision_rules": [{"selector": "type", "target": "*", **fp16}],
        "_npu_precision_mixed_dtype": "",
        "_npu_precision_mixed_convert": False,
        "_npu_precision_mixed_white": [],
        "_npu_precision_mixed_black": [],
        "_npu_precision_ascend_fp16": True,
        "_npu_precision_impl_modes": [{"selector": "type", "target": "*", "mode": "high_performance"}],
        "_npu_iterations_per_loop": 3,
        "_npu_collective_timeout": 7,
        "_npu_collective_run_bound": False,  # a world of one rank: its collectives keep their own timeout
    }
    assert values["_npu_bridge_init_options"]["precision_mode"] == "force_fp16"


@pytest.mark.parametrize("step", ["99999999999999999999", "\u0663", "0|1-\u0663", "5-99999999999999999999"])
def test_a_hostile_dump_step_is_an_option_error_at_session_creation(step, tmp_path):
    with pytest.raises(NpuOptionError, match="'dump_step' has invalid value"):
        v1.Session(graph=tf.Graph(), config=npu_config(enable_dump=True, dump_path=str(tmp_path), dump_step=step))


def test_the_cpp_optimizer_rejects_a_contract_key_of_the_wrong_kind_without_crashing():
    result = run_python(
        """
        import tensorflow as tf
        import npu_bridge
        from tensorflow.python.grappler import tf_optimizer
        tf.compat.v1.disable_eager_execution()

        def optimize(**attrs):
            graph = tf.Graph()
            with graph.as_default():
                out = tf.identity(tf.constant(1.0) * 2.0, name="out")
                graph.add_to_collection("train_op", out)
            config = tf.compat.v1.ConfigProto()
            config.graph_options.rewrite_options.min_graph_nodes = -1
            entry = config.graph_options.rewrite_options.custom_optimizers.add()
            entry.name = "NpuOptimizer"
            for key, attr in attrs.items():
                entry.parameter_map[key].CopyFrom(attr)
            try:
                tf_optimizer.OptimizeGraph(config, tf.compat.v1.train.export_meta_graph(graph=graph))
                return "accepted"
            except Exception as e:  # the Status of NpuOptimizer::Init, raised by TensorFlow
                return type(e).__name__ + ": " + str(e).splitlines()[0]

        AttrValue = tf.compat.v1.AttrValue
        print(optimize(_npu_bridge_validated=AttrValue(s=b"yes")))
        print(optimize(_npu_dump_steps=AttrValue(s=b"0|5")))
        print(optimize(_npu_no_such_key=AttrValue(b=True)))
        steps = AttrValue(list=AttrValue.ListValue(i=[0, 5]))
        print(optimize(_npu_bridge_validated=AttrValue(b=True), _npu_dump_steps=steps))
    """,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.strip().splitlines()[-4:]
    assert "_npu_bridge_validated holds s, but the pass contract" in lines[0] and "declares it b" in lines[0]
    assert "_npu_dump_steps holds s" in lines[1] and "declares it list.i" in lines[1]
    assert "_npu_no_such_key is not a key of the pass contract" in lines[2]
    assert lines[3] == "accepted"
