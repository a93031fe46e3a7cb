"""tf.contrib.training's HParams and parse_values of the TF1 mode (npu_bridge.core.tf1.hparams): TensorFlow 1.x's
text syntax, type rules, string round trip, dotted names and HParamDef protocol buffer."""

import pytest
import tensorflow as tf

from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError, NpuKeyError
from npu_bridge.core.tf1 import contrib
from npu_bridge.core.tf1.hparam_proto import HParamDef
from npu_bridge.core.tf1.hparams import HParams, parse_values


def test_str_is_text_parse_reads_back():
    source = HParams(rate=0.25, sizes=[3.0, 4.5], name="relu6", steps=7, fine=False, path="/a=b/c")
    assert str(source) == "rate=0.25,sizes=[3.0, 4.5],name=relu6,steps=7,fine=False,path=/a=b/c"
    target = HParams(rate=1.0, sizes=[0.0], name="x", steps=0, fine=True, path="")
    assert target.parse(str(source)).values() == source.values()
    assert repr(source).startswith("HParams([('fine', False), ('name', 'relu6'), ")


def test_parse_values_reads_scalars_lists_and_index_assignments_by_type():
    types = {"n": int, "x": float, "on": bool, "s": str, "arr": int, "words": str}
    got = parse_values("n=+3,x=-2.0e10, on=1,s=,arr[0]=10,arr[5]=20,words=[a b,c'd\"]", types)
    assert got == {"n": 3, "x": -2e10, "on": True, "s": "", "arr": {0: 10, 5: 20}, "words": ["a", "b", "c'd\""]}
    for text, expected in (("true", True), ("True", True), ("false", False), ("False", False), ("0", False)):
        assert parse_values(f"on={text}", {"on": bool}) == {"on": expected}
    assert parse_values("a.b=1.5,d..=2", {"a.b": float, "d..": float}) == {"a.b": 1.5, "d..": 2.0}
    assert parse_values("", {}) == {}
    skipped = parse_values("arr[1]=10,b=5,c[0]=kkk", {"arr": int}, ignore_unknown=True)
    assert skipped == {"arr": {1: 10}}


@pytest.mark.parametrize(
    "text, types, message",
    [
        ("n=1.0", {"n": int}, r"Could not parse hparam 'n' of type 'int' with value '1.0' in 'n=1.0'"),
        ("on=yep", {"on": bool}, r"Could not parse hparam 'on' of type 'bool' with value 'yep'.*true, True, false"),
        ("x=[1.0,relu]", {"x": float}, r"Could not parse hparam 'x' of type 'float' with value '1.0,relu'"),
        ("y=1", {"x": int}, r"Unknown hyperparameter type for y \(in 'y=1'\); known: \['x'\]"),
        ("arr[1]=1", {"arr[1]": int}, r"Unknown hyperparameter type for arr"),
        ("x=1,x=1", {"x": int}, r"Multiple assignments to variable 'x' in 'x=1,x=1'"),
        ("arr=[1,2],arr[0]=1", {"arr": int}, r"Multiple assignments to variable 'arr'"),
        ("arr[0]=1,arr[0]=2", {"arr": int}, r"Multiple assignments to variable 'arr\[0\]'"),
        ("arr[0]=1,arr=[1]", {"arr": int}, r"Multiple assignments to variable 'arr'"),
        ("arr[1]=[1,2]", {"arr": int}, r"Assignment of a list to a list index: arr\[1\]=\[1,2\]"),
        ("x=1;y=2", {"x": int}, r"Could not parse hparam 'x'"),
        ("=1", {"x": int}, r"Malformed hyperparameter value: '=1'"),
    ],
)
def test_parse_values_refuses_bad_text_naming_it(text, types, message):
    with pytest.raises(NpuArgumentError, match=message):
        parse_values(text, types)


def test_set_hparam_keeps_each_hyperparameter_s_type():
    hparams = HParams(i=1, s="str", on=True, f=1.1, ints=[1, 2], none=None)
    hparams.set_hparam("f", 1)  # an int may set a float
    assert hparams.f == 1.0 and isinstance(hparams.f, float)
    hparams.set_hparam("none", "1")  # a hyperparameter first None takes anything
    assert hparams.none == "1"
    for name, value in (
        ("s", 2.2),
        ("i", False),
        ("on", 1),
        ("on", "true"),
        ("i", 2.2),
        ("i", "2"),
        ("ints", [2, 3.3]),
    ):
        with pytest.raises(NpuArgumentError, match=f"Could not cast hparam '{name}' of type"):
            hparams.set_hparam(name, value)
    with pytest.raises(NpuArgumentError, match=r"Must not pass a list for single-valued parameter: i \(got \[1.0\]"):
        hparams.set_hparam("i", [1.0])
    with pytest.raises(NpuArgumentError, match=r"Must pass a list for multi-valued parameter: ints \(got 1"):
        hparams.set_hparam("ints", 1)
    with pytest.raises(KeyError, match="unknown hyperparameter 'missing'"):
        hparams.set_hparam("missing", 1)
    with pytest.raises(NpuKeyError):
        hparams.override_from_dict({"missing": 1})


def test_parse_assigns_list_elements_and_refuses_what_does_not_fit():
    hparams = HParams(aaa=[1, 2, 3], b=2.0)
    hparams.parse("aaa[2]=30,aaa[0]=10")
    assert hparams.aaa == [10, 2, 30]
    hparams.parse("aaa=[],b=-3")  # a list may become empty once it has its type
    assert hparams.values() == {"aaa": [], "b": -3.0}
    with pytest.raises(NpuArgumentError, match=r"aaa has 0 elements; index 1 is outside"):
        hparams.parse("aaa[1]=5")
    with pytest.raises(NpuArgumentError, match="Must not pass a list for single-valued parameter: b"):
        hparams.parse("b=[1.0]")


def test_dotted_names_are_hyperparameters_reached_with_getattr():
    hparams = HParams()
    hparams.add_hparam("a.b", 0.0)
    hparams.add_hparam("e.f", "")
    hparams.parse("a.b=1.0,e.f=abc")
    assert getattr(hparams, "a.b") == 1.0 and getattr(hparams, "e.f") == "abc"
    assert hparams.values() == {"a.b": 1.0, "e.f": "abc"}
    with pytest.raises(NpuArgumentError, match="Could not parse hparam 'a.b' of type 'float' with value 'abc'"):
        hparams.parse("a.b=abc")


def test_add_get_and_delete():
    hparams = HParams(aaa=1, b=2.0, c="relu6", d=True, e=[5.0, 6.0])
    assert hparams.get("b", 3) == 2.0 and hparams.get("e", [1, 2]) == [5.0, 6.0]
    assert hparams.get("unknown") is None and hparams.get("unknown", [1]) == [1]
    for name, default in (("aaa", 2.0), ("b", False), ("c", [1]), ("d", "relu"), ("e", 123.0), ("e", ["a"])):
        with pytest.raises(NpuArgumentError, match=f"Hparam '{name}' of type .* is incompatible with default="):
            hparams.get(name, default)
    with pytest.raises(NpuArgumentError, match=r"Hyperparameter name is reserved: 'aaa'"):
        hparams.add_hparam("aaa", "again")
    with pytest.raises(NpuArgumentError, match=r"Hyperparameter name is reserved: 'parse'"):
        hparams.add_hparam("parse", 1)
    with pytest.raises(NpuArgumentError, match=r"Multi-valued hyperparameters cannot be empty: z = \[\]"):
        hparams.add_hparam("z", [])
    hparams.del_hparam("aaa")
    hparams.del_hparam("aaa")  # nothing left to delete: nothing happens
    hparams.add_hparam("aaa", "a string now")
    hparams.set_hparam("aaa", "still a string")
    assert hparams.get("aaa") == "still a string" and list(hparams.values())[-1] == "aaa"


def test_json_round_trip():
    hparams = HParams(aaa=123, b="hello", c_c=False)
    assert hparams.to_json(sort_keys=True) == '{"aaa": 123, "b": "hello", "c_c": false}'
    assert HParams(aaa=123).to_json(indent=2) == '{\n  "aaa": 123\n}'
    other = HParams(aaa=0, b="", c_c=True).parse_json(hparams.to_json())
    assert other.values() == hparams.values()


def test_hparam_def_round_trip_keeps_types_and_reads_tensorflow_1_bytes():
    hparams = HParams(n=10, rate=1.5, name='2.3"', on=False, sizes=[3], rates=[1.0], words=["_12", "3'4"], flags=[True])
    proto = hparams.to_proto()
    assert isinstance(proto, HParamDef)
    assert proto.hparam["n"].WhichOneof("kind") == "int64_value"
    assert proto.hparam["name"].bytes_value == b'2.3"'
    assert list(proto.hparam["words"].bytes_list.value) == [b"_12", b"3'4"]
    restored = HParams(hparam_def=HParamDef.FromString(proto.SerializeToString()))
    assert restored.values() == hparams.values()
    assert type(restored.on) is bool and type(restored.n) is int
    # bytes as TensorFlow 1.15's HParamDef serialised HParams(lr=0.5) (field 1: map entry "lr" -> float_value 0.5)
    assert HParams.from_proto(HParamDef.FromString(b"\n\x0b\n\x02lr\x12\x05\x15\x00\x00\x00?")).values() == {"lr": 0.5}
    with pytest.raises(NpuArgumentTypeError, match=r"hparam_def must be an HParamDef protocol buffer .*got 1 \(int\)"):
        HParams(hparam_def=1)
    with pytest.raises(NpuArgumentError, match="hparam_def and keyword values are mutually exclusive"):
        HParams(hparam_def=proto, n=1)
    with pytest.raises(NpuArgumentTypeError, match="hyperparameter x is a dict; an HParamDef holds"):
        HParams(x={}).to_proto()


def test_tf_contrib_training_routes_here():
    training = contrib.ContribModule("", None, tf).training
    assert training.HParams is HParams
    assert training.parse_values is parse_values
    assert training.python.training.hparam.HParams is HParams
