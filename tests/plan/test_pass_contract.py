"""The pass-parameter contract: declared once (contract_table.py), the C++ header generated from it is current;
a bridged session's parameter_map carries exactly those keys with structured values; hostile option values fail at
session creation; and the C++ NpuOptimizer rejects a contract key of the wrong kind with an error naming it (no
crash)."""

import dataclasses
import os
import pathlib

import pytest
import tensorflow as tf
from helpers.config import npu_config
from helpers.paths import REPO_ROOT
from helpers.processes import run_python

from npu_bridge.core.plan import contract_header, contract_table, pass_contract
from npu_bridge.core.runtime import system
from npu_bridge.core.runtime.errors import NpuOptionError, PassContractError

v1 = tf.compat.v1
GENERATED = pathlib.Path(REPO_ROOT, contract_header.HEADER)


def test_the_generated_header_is_what_the_table_renders():
    assert GENERATED.read_text() == contract_header.render(contract_table), (
        f"{contract_header.HEADER} is stale: the build regenerates it "
        "(python3 -m pip install --no-build-isolation -e .)"
    )


def test_the_header_declares_every_key_field_and_attribute_of_the_table_and_can_fail():
    text = contract_header.render(contract_table)
    for key in pass_contract.KEYS:
        assert f'{contract_header.key_constant(key.name, pass_contract.KEY_PREFIX)}{{"{key.name}"' in text
        assert f"Spec({contract_header.key_constant(key.name, pass_contract.KEY_PREFIX)})," in text
    for field in pass_contract.RECORD_FIELDS:
        assert f'{{"{field.key}", "{field.name}", Kind::' in text
    for attribute in pass_contract.NODE_ATTRS:
        assert f'{{"{attribute}"}};' in text
    assert 'constexpr BoolKey kDumpOutputs{"_npu_dump_outputs", true};' in text
    assert 'constexpr IntKey kIterationsPerLoop{"_npu_iterations_per_loop", 1};' in text
    changed = dict(vars(contract_table), KEYS=contract_table.KEYS[:-1])  # one key less: the header differs
    assert contract_header.render(changed) != text


def test_the_table_is_well_formed():
    names = [k.name for k in pass_contract.KEYS]
    assert len(set(names)) == len(names) and all(n.startswith(pass_contract.KEY_PREFIX) for n in names)
    assert {k.kind for k in pass_contract.KEYS} <= set(pass_contract.KINDS)
    assert {f.kind for f in pass_contract.RECORD_FIELDS} <= set(pass_contract.FIELD_KINDS)
    assert {k.name for k in pass_contract.KEYS if k.kind in ("list.func", "func")} == set(contract_table.RECORDS)
    assert [f.name for f in dataclasses.fields(pass_contract.PassPlan)] == [k.field for k in pass_contract.KEYS]
    assert pass_contract.KEEP_DTYPE_ATTR == "_keep_dtype" and len(pass_contract.NODE_ATTRS) == 7


def test_keys_that_carry_an_option_name_an_option_of_the_same_kind_and_default_and_fill_every_plan():
    from npu_bridge.core.options import OPTIONS, parse_values

    carried = [key for key in pass_contract.KEYS if key.option is not None]
    assert [key.option for key in carried] == ["iterations_per_loop"]
    for key in carried:
        spec = OPTIONS[key.option]
        assert (spec.kind, spec.default) == (key.kind, key.default), key
    plan = pass_contract.plan_from_options(parse_values({"iterations_per_loop": 7}, "test"), validated=True)
    assert (plan.iterations_per_loop, plan.validated) == (7, True)
    assert pass_contract.plan_from_options(parse_values({}, "test")).iterations_per_loop == 1


def test_an_empty_plan_writes_the_defaults():
    entry = v1.ConfigProto().graph_options.rewrite_options.custom_optimizers.add()
    pass_contract.write(entry, pass_contract.PassPlan())
    defaults = {k.name: list(k.default) if k.kind.startswith("list") else k.default for k in pass_contract.KEYS}
    assert pass_contract.read(entry) == defaults


def test_a_plan_value_of_the_wrong_type_and_a_key_of_the_wrong_kind_are_errors():
    entry = v1.ConfigProto().graph_options.rewrite_options.custom_optimizers.add()
    with pytest.raises(PassContractError, match="_npu_dump_steps"):
        pass_contract.write(entry, pass_contract.PassPlan(dump_steps=((0, 2**64),)))
    entry.parameter_map[pass_contract.KEY_BY_FIELD["dump_steps"].name].s = b"0|5"
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
        "_npu_bridge_init_token": system.register_init_options(options.by_stage("init")),
        "_npu_function_graphs": False,  # a session's graphs (npu_device's plans set it)
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
    init_options = system.init_options_for(values["_npu_bridge_init_token"])  # only Python reads them
    assert init_options == options.by_stage("init") and init_options["precision_mode"] == "force_fp16"


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


def test_compact_keeps_only_the_contract_keys_that_differ_from_their_defaults(tmp_path):
    config = npu_config(enable_dump=True, dump_path=str(tmp_path), precision_mode="allow_mix_precision")
    with v1.Session(graph=tf.Graph(), config=config) as sess:
        entry = _bridged_entry(sess)
    full = pass_contract.read(entry)
    pass_contract.compact(entry)
    kept = pass_contract.read(entry)
    assert set(entry.parameter_map) == set(kept)  # the user's options are gone: the passes never read them
    assert "precision_mode" not in entry.parameter_map and kept["_npu_dump_enabled"] is True
    for key in pass_contract.KEYS:  # an absent key is read as its default, so the passes see the same values
        default = list(key.default) if isinstance(key.default, tuple) else key.default
        assert kept.get(key.name, default) == full[key.name], key.name
    assert "_npu_dump_inputs" not in kept  # False, its default
