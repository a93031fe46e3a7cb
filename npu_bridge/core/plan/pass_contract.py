"""The pass-parameter contract: what the C++ NpuOptimizer passes read, and the one place that writes it.

The contract is declared once, in ``contract_table.py`` (keys with kinds, defaults and meanings, record fields, node
attributes); ``optimizers/pass_contract_keys.h`` is generated from it (``contract_header.py``). This module builds
from the table ``PassPlan`` (one field per key), ``KEYS``, ``RECORD_FIELDS``, ``NODE_ATTRS`` and the node attribute
constants (``KEEP_DTYPE_ATTR``, ...), and encodes and decodes the values.

A bridged session's setup steps fill one ``PassPlan`` (``npu_bridge.core.session.planner``) and ``write``
puts all of it into the session's NpuOptimizer entry once, at the end of the plan. Values go down validated,
normalized and structured, never as text for C++ to parse: lists as AttrValue lists, rules as NameAttrList
records. C++ reads these keys only, never the user's options; what only Python reads (the init options) stays in
Python and goes down as a token.

Kinds name the AttrValue field that holds a value: b, i, s, list.i, list.s, list.func (records). ``read`` gives
back what ``write`` wrote, in the same Python forms the table's defaults use.
"""

import dataclasses
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from npu_bridge.core.plan import contract_table
from npu_bridge.core.runtime.errors import PassContractError

KINDS = ("b", "i", "s", "list.i", "list.s", "list.func")
FIELD_KINDS = ("s", "list.i", "list.type")
SELECTORS = ("type", "name")  # a rule selects ops by op type ("*": every computing op) or by node name
EVERY_SLOT = -1  # a rule slot standing for every float32 input / output
ROUNDING_DTYPES = ("float16", "bfloat16", "float32")  # round through float16 / bfloat16, or keep float32
IMPL_MODES = ("high_precision", "high_performance")


@dataclasses.dataclass(frozen=True)
class PrecisionRule:
    """How the precision pass treats the float32 slots of the ops one selector picks.

    Attributes:
      selector: "type" (``target`` is an op type, or "*" for every computing op) or "name" (a node name).
        A name rule wins over a type rule, which wins over the "*" rule.
      target: the op type, "*" or the node name.
      inputs, outputs: (slot, dtype) pairs; slot ``EVERY_SLOT`` is every float32 slot, a dtype from
        ``ROUNDING_DTYPES``. Slots not named are left alone.
    Raises:
      PassContractError: an unknown selector or dtype, or a slot below ``EVERY_SLOT``.
    """

    selector: str
    target: str
    inputs: Tuple[Tuple[int, str], ...] = ()
    outputs: Tuple[Tuple[int, str], ...] = ()

    def __post_init__(self):
        _check_selector(self.selector, self.target, "precision rule")
        for slot, dtype in self.inputs + self.outputs:
            if not isinstance(slot, int) or slot < EVERY_SLOT or dtype not in ROUNDING_DTYPES:
                raise PassContractError(
                    f"precision rule for {self.selector} {self.target!r}: slot {slot!r} / "
                    f"dtype {dtype!r}; slots are >= 0 or {EVERY_SLOT} (every float32 slot), "
                    f"dtypes {', '.join(ROUNDING_DTYPES)}"
                )


@dataclasses.dataclass(frozen=True)
class ImplModeRule:
    """The implementation mode of the ops one selector picks (selected as by ``PrecisionRule``).

    Raises:
      PassContractError: an unknown selector or mode.
    """

    selector: str
    target: str
    mode: str

    def __post_init__(self):
        _check_selector(self.selector, self.target, "implementation mode")
        if self.mode not in IMPL_MODES:
            raise PassContractError(
                f"implementation mode for {self.selector} {self.target!r}: mode {self.mode!r} "
                f"is not one of {', '.join(IMPL_MODES)}"
            )


def _check_selector(selector, target, what):
    if selector not in SELECTORS or not target or (selector == "name" and target == "*"):
        raise PassContractError(
            f"{what}: selector {selector!r} with target {target!r}; the selectors are "
            f"{', '.join(SELECTORS)} with a non-empty target ('*' only with type)"
        )


@dataclasses.dataclass(frozen=True)
class ContractKey:
    """One parameter_map key of the contract.

    Attributes:
      name: the key.
      kind: one of ``KINDS``.
      default: the value C++ assumes when the key is absent, in ``read``'s form (list kinds: empty).
      field: the ``PassPlan`` attribute the value comes from.
      meaning: what it says (the table's text, also the header's comment).
      to_wire: turns the attribute into ``read``'s form (None: it already is).
      option: the option whose validated value the key carries unchanged (None: a setup step decides it).
    """

    name: str
    kind: str
    default: Any
    field: str
    meaning: str
    to_wire: Optional[Callable[[Any], Any]] = None
    option: Optional[str] = None


@dataclasses.dataclass(frozen=True)
class RecordField:
    """One field of the records (NameAttrLists) of a list.func key; every record has every field."""

    key: str
    name: str
    kind: str


def _flat_pairs(ranges):
    return [step for first_last in ranges for step in first_last]


def _rule_records(rules):
    return [
        {
            "selector": r.selector,
            "target": r.target,
            "input_slots": [slot for slot, _ in r.inputs],
            "input_dtypes": [dtype for _, dtype in r.inputs],
            "output_slots": [slot for slot, _ in r.outputs],
            "output_dtypes": [dtype for _, dtype in r.outputs],
        }
        for r in rules
    ]


def _impl_records(modes):
    return [{"selector": m.selector, "target": m.target, "mode": m.mode} for m in modes]


# How a PassPlan value becomes its wire form, by kind (list.i: (first, last) pairs) or by record.
_TO_WIRE = {"list.i": _flat_pairs, "list.s": list}
_RECORDS_TO_WIRE = {"precision_rule": _rule_records, "impl_mode": _impl_records}
_PLAN_TYPES = {
    "b": bool,
    "i": int,
    "s": str,
    "list.i": Tuple[Tuple[int, int], ...],
    "list.s": Tuple[str, ...],
    "list.func": tuple,
}


def _contract_key(field, name, kind, default, meaning, option=None):
    record = contract_table.RECORDS.get(name, (None,))[0]
    to_wire = _RECORDS_TO_WIRE[record] if kind == "list.func" else _TO_WIRE.get(kind)
    return ContractKey(name, kind, default, field, meaning, to_wire, option)


KEYS = tuple(_contract_key(*entry) for entry in contract_table.KEYS if not isinstance(entry, str))
KEY_BY_FIELD = {key.field: key for key in KEYS}
KEY_BY_NAME = {key.name: key for key in KEYS}
RECORD_FIELDS = tuple(
    RecordField(key, field, kind) for key, (_, _, fields) in contract_table.RECORDS.items() for field, kind, _ in fields
)
_RECORD_NAMES = {key: record for key, (record, _, _) in contract_table.RECORDS.items()}
KEY_PREFIX = contract_table.KEY_PREFIX


def _plan_field(key):
    return (key.field, _PLAN_TYPES[key.kind], dataclasses.field(default=key.default))


PassPlan = dataclasses.make_dataclass("PassPlan", [_plan_field(key) for key in KEYS])
PassPlan.__module__ = __name__
PassPlan.__doc__ = "What the passes of one bridged session do; the setup steps fill it, ``write`` hands it down.\n\n"
PassPlan.__doc__ += "Attributes (one per contract key, from contract_table.KEYS):\n" + "".join(
    f"  {key.field}: {key.meaning}\n" for key in KEYS
)


def plan_from_options(options, **fields):
    """A session's ``PassPlan`` with the keys that carry an option filled from ``options``.

    Args:
      options: the session's validated options (anything with ``get(name)``).
      **fields: other fields, set as given.
    Returns:
      The ``PassPlan``; the setup steps fill the rest.
    """
    carried = {key.field: options.get(key.option) for key in KEYS if key.option is not None}
    return PassPlan(**carried, **fields)


# Node attributes Python stamps on ops of the user's graph for the passes: KEEP_DTYPE_ATTR, ITERATION_OP_ATTR,
# COLLECTIVE_GROUP_ATTR, IMPL_OP_ATTR, IMPL_NAME_ATTR, COMPOSED_OP_ATTR, COMPOSED_OUTPUTS_ATTR (contract_table).
NODE_ATTRS = tuple(attribute for _, attribute, _ in contract_table.NODE_ATTRS)
globals().update({constant: attribute for constant, attribute, _ in contract_table.NODE_ATTRS})


def write(entry, plan: PassPlan) -> None:
    """Writes every contract key into a session's NpuOptimizer entry (the only writer of these keys).

    Args:
      entry: the session's ``RewriterConfig.CustomGraphOptimizer`` named NpuOptimizer (edited in place).
      plan: the session's finished ``PassPlan``.
    Raises:
      PassContractError: a plan value does not fit its key's kind (a bug in a setup step).
    """
    for key in KEYS:
        value = getattr(plan, key.field)
        entry.parameter_map[key.name].CopyFrom(_encode(key, key.to_wire(value) if key.to_wire else value))


def compact(entry) -> None:
    """Leaves in an NpuOptimizer entry only what the passes read differently from an absent key: the contract keys
    whose values are not their defaults (the passes never read the user's own options).

    For configurations TensorFlow hands on with every call (the function-call options of TF2 code), where a
    smaller entry costs less per call.

    Args:
      entry: a ``RewriterConfig.CustomGraphOptimizer`` written by ``write`` (edited in place).
    """
    values = read(entry)
    for name in list(entry.parameter_map):
        key = KEY_BY_NAME.get(name)
        if key is None or values[name] == (list(key.default) if isinstance(key.default, tuple) else key.default):
            del entry.parameter_map[name]


def read(entry) -> Dict[str, Any]:
    """Returns the contract keys present in an NpuOptimizer entry, decoded into ``write``'s forms.

    b -> bool, i -> int, s -> str, list.i -> list of int, list.s -> list of str, list.func -> list of
    {field: value} (list.type fields as dtype names).

    Args:
      entry: a ``RewriterConfig.CustomGraphOptimizer``.
    Returns:
      {key name: value}.
    Raises:
      PassContractError: a key holds another kind than the contract declares.
    """
    return {key.name: _decode(key, entry.parameter_map[key.name]) for key in KEYS if key.name in entry.parameter_map}


def _encode(key, value):
    from tensorflow.core.framework import attr_value_pb2

    attr = attr_value_pb2.AttrValue
    try:
        if key.kind == "b":
            return attr(b=_typed(value, bool, key))
        if key.kind == "i":
            return attr(i=_typed(value, int, key))
        if key.kind == "s":
            return attr(s=_typed(value, str, key).encode("utf-8"))
        if key.kind == "list.i":
            return attr(list=attr.ListValue(i=[_typed(v, int, key) for v in value]))
        if key.kind == "list.s":
            return attr(list=attr.ListValue(s=[_typed(v, str, key).encode("utf-8") for v in value]))
        return attr(list=attr.ListValue(func=[_record(key, record) for record in value]))
    except PassContractError:
        raise
    except (TypeError, ValueError, KeyError) as e:  # also protobuf's range check of an int beyond int64
        raise PassContractError(f"pass contract key {key.name} ({key.kind}) cannot hold {value!r}: {e}") from None


def _typed(value, python_type, key):
    if not isinstance(value, python_type) or (python_type is int and isinstance(value, bool)):
        raise PassContractError(f"{type(value).__name__} {value!r} in {key.name} is not a {python_type.__name__}")
    return value


def _record(key, record: Mapping[str, Any]):
    from tensorflow.core.framework import attr_value_pb2, types_pb2

    attr = attr_value_pb2.AttrValue
    encoded = {}
    for field in _fields_of(key.name):
        value = record[field.name]
        if field.kind == "s":
            encoded[field.name] = attr(s=_typed(value, str, key).encode("utf-8"))
        elif field.kind == "list.i":
            encoded[field.name] = attr(list=attr.ListValue(i=[_typed(v, int, key) for v in value]))
        else:
            encoded[field.name] = attr(
                list=attr.ListValue(type=[types_pb2.DataType.Value(_DTYPE_ENUMS[d]) for d in value])
            )
    return attr_value_pb2.NameAttrList(name=_RECORD_NAMES[key.name], attr=encoded)


_DTYPE_ENUMS = {"float16": "DT_HALF", "bfloat16": "DT_BFLOAT16", "float32": "DT_FLOAT"}
_DTYPE_NAMES = {enum: name for name, enum in _DTYPE_ENUMS.items()}


def _fields_of(key_name) -> List[RecordField]:
    return [field for field in RECORD_FIELDS if field.key == key_name]


def _decode(key, attr):
    field = attr.WhichOneof("value")
    expected = key.kind.split(".")[0]
    if field != expected or (field == "list" and not _only_list(attr.list, key.kind.split(".")[1])):
        raise PassContractError(
            f"pass contract key {key.name} holds {str(attr).strip() or 'nothing'}; the contract declares {key.kind}"
        )
    if key.kind in ("b", "i"):
        return getattr(attr, key.kind)
    if key.kind == "s":
        return attr.s.decode("utf-8")
    if key.kind == "list.i":
        return list(attr.list.i)
    if key.kind == "list.s":
        return [item.decode("utf-8") for item in attr.list.s]
    return [_decode_record(key, record) for record in attr.list.func]


def _only_list(values, kind):
    return all(
        kind == other or not getattr(values, other) for other in ("s", "i", "f", "b", "type", "shape", "tensor", "func")
    )


def _decode_record(key, record):
    from tensorflow.core.framework import types_pb2

    decoded = {}
    for field in _fields_of(key.name):
        value = record.attr[field.name]
        if field.kind == "s":
            decoded[field.name] = value.s.decode("utf-8")
        elif field.kind == "list.i":
            decoded[field.name] = list(value.list.i)
        else:
            decoded[field.name] = [_DTYPE_NAMES[types_pb2.DataType.Name(t)] for t in value.list.type]
    return decoded
