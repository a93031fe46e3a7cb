"""The pass-parameter contract: what the C++ NpuOptimizer passes read, and the one place that writes it.

``KEYS`` lists every parameter_map key the passes read (name, kind, default, the ``PassPlan`` field it comes
from), ``RECORD_FIELDS`` the fields of the records of list.func keys, and ``NODE_ATTRS`` the node attributes
Python stamps on ops of the user's graph for the passes. ``optimizers/pass_contract.h`` declares the same;
``tests/test_pass_contract.py`` keeps the two equal.

A bridged session's setup steps fill one ``PassPlan`` (``npu_bridge.core.session.setup_steps``) and ``write``
puts all of it into the session's NpuOptimizer entry once, at the end of the plan. Values go down validated,
normalized and structured, never as text for C++ to parse: lists as AttrValue lists, rules as NameAttrList
records, the init options as one NameAttrList. C++ reads these keys only, never the user's options.

Kinds name the AttrValue field that holds a value: b, i, s, list.i, list.s, list.func (records), func (one
NameAttrList). ``read`` gives back what ``write`` wrote, in the same Python forms the table's defaults use.
"""

import dataclasses
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, Union

from npu_bridge.core.runtime.errors import PassContractError

KINDS = ("b", "i", "s", "list.i", "list.s", "list.func", "func")
FIELD_KINDS = ("s", "list.i", "list.type")
SELECTORS = ("type", "name")  # a rule selects ops by op type ("*": every computing op) or by node name
EVERY_SLOT = -1  # a rule slot standing for every float32 input / output
ROUNDING_DTYPES = ("float16", "bfloat16", "float32")  # round through float16 / bfloat16, or keep float32
IMPL_MODES = ("high_precision", "high_performance")

InitValue = Union[bool, int, str]


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


@dataclasses.dataclass
class PassPlan:
    """What the passes of one bridged session do; the setup steps fill it, ``write`` hands it down.

    Attributes:
      validated: the session bridge validated the options (always True for a bridged session).
      init_options: the session's init-stage options, name -> normalized value.
      dump_enabled: dump op inputs / outputs (enable_dump).
      dump_root: {dump_path}/{time}/{device id}; dumps and overflow records go below it.
      dump_base: dump_path as the user gave it; the dump writer creates the directories below it, or refuses
        those that are symlinks or another user's.
      dump_inputs, dump_outputs: what is dumped (dump_mode).
      dump_stats: statistic.csv instead of tensors (dump_data=stats).
      dump_golden: golden .npy files next to dumped outputs.
      dump_steps: (first, last) step ranges to dump (dump_step); empty dumps every step.
      dump_layers: op names to dump (dump_layer); empty dumps every op.
      overflow_check: check and report every floating-point output (enable_dump_debug).
      overflow_fp16_saturation: overflow reports count fp16 saturation (the simulated Ascend backend).
      exception_dump: capture the inputs of ops that fail (enable_exception_dump=1).
      exception_dir: where exception dumps go.
      exception_base: the directory ``exception_dir`` is {base}/extra-info/data-dump/{device id} of; as
        ``dump_base``.
      session_id: names the session's exception-capture slots.
      precision_rewrite: run the precision pass (its rules may be empty: kept ops in a mixed region).
      precision_rules: the ``PrecisionRule``s.
      mixed_dtype: a mixed mode's reduced precision, "float16" or "bfloat16"; "" outside mixed modes.
      mixed_convert: the mixed region really computes in ``mixed_dtype`` (GPU); else it is emulated by rounding.
      mixed_white, mixed_black: the mixed-precision white and black lists (``npu_bridge.core.precision.mixlist``).
      ascend_fp16: the simulated Ascend backend's saturating fp16 conversions.
      impl_modes: the ``ImplModeRule``s (simulated Ascend backend).
      iterations_per_loop: training steps per run of an IterationOp.
      collective_timeout: seconds every collective of the session may wait (0 leaves the ops' own timeout).
      collective_run_bound: the session's run hook bounds every run with collectives by the timeout, so the
        collectives outside loops drop their own (whose timer TensorFlow keeps alive per execution).
    """

    validated: bool = False
    init_options: Dict[str, InitValue] = dataclasses.field(default_factory=dict)
    dump_enabled: bool = False
    dump_root: str = ""
    dump_base: str = ""
    dump_inputs: bool = False
    dump_outputs: bool = True
    dump_stats: bool = False
    dump_golden: bool = False
    dump_steps: Tuple[Tuple[int, int], ...] = ()
    dump_layers: Tuple[str, ...] = ()
    overflow_check: bool = False
    overflow_fp16_saturation: bool = False
    exception_dump: bool = False
    exception_dir: str = ""
    exception_base: str = ""
    session_id: int = 0
    precision_rewrite: bool = False
    precision_rules: Tuple[PrecisionRule, ...] = ()
    mixed_dtype: str = ""
    mixed_convert: bool = False
    mixed_white: Tuple[str, ...] = ()
    mixed_black: Tuple[str, ...] = ()
    ascend_fp16: bool = False
    impl_modes: Tuple[ImplModeRule, ...] = ()
    iterations_per_loop: int = 1
    collective_timeout: int = 0
    collective_run_bound: bool = False


@dataclasses.dataclass(frozen=True)
class ContractKey:
    """One parameter_map key of the contract.

    Attributes:
      name: the key.
      kind: one of ``KINDS``.
      default: the value C++ assumes when the key is absent, in ``read``'s form (list and record kinds: empty).
      field: the ``PassPlan`` attribute the value comes from.
      to_wire: turns the attribute into ``read``'s form (None: it already is).
    """

    name: str
    kind: str
    default: Any
    field: str
    to_wire: Optional[Callable[[Any], Any]] = None


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


VALIDATED = ContractKey("_npu_bridge_validated", "b", False, "validated")
INIT_OPTIONS = ContractKey("_npu_bridge_init_options", "func", {}, "init_options", dict)
DUMP_ENABLED = ContractKey("_npu_dump_enabled", "b", False, "dump_enabled")
DUMP_ROOT = ContractKey("_npu_dump_root", "s", "", "dump_root")
DUMP_BASE = ContractKey("_npu_dump_base", "s", "", "dump_base")
DUMP_INPUTS = ContractKey("_npu_dump_inputs", "b", False, "dump_inputs")
DUMP_OUTPUTS = ContractKey("_npu_dump_outputs", "b", True, "dump_outputs")
DUMP_STATS = ContractKey("_npu_dump_stats", "b", False, "dump_stats")
DUMP_GOLDEN = ContractKey("_npu_dump_golden", "b", False, "dump_golden")
DUMP_STEPS = ContractKey("_npu_dump_steps", "list.i", (), "dump_steps", _flat_pairs)
DUMP_LAYERS = ContractKey("_npu_dump_layers", "list.s", (), "dump_layers", list)
OVERFLOW_CHECK = ContractKey("_npu_overflow_check", "b", False, "overflow_check")
OVERFLOW_FP16_SATURATION = ContractKey("_npu_overflow_fp16_saturation", "b", False, "overflow_fp16_saturation")
EXCEPTION_DUMP = ContractKey("_npu_exception_dump", "b", False, "exception_dump")
EXCEPTION_DIR = ContractKey("_npu_exception_dir", "s", "", "exception_dir")
EXCEPTION_BASE = ContractKey("_npu_exception_base", "s", "", "exception_base")
SESSION_ID = ContractKey("_npu_session_id", "i", 0, "session_id")
PRECISION_REWRITE = ContractKey("_npu_precision_rewrite", "b", False, "precision_rewrite")
PRECISION_RULES = ContractKey("_npu_precision_rules", "list.func", (), "precision_rules", _rule_records)
PRECISION_MIXED_DTYPE = ContractKey("_npu_precision_mixed_dtype", "s", "", "mixed_dtype")
PRECISION_MIXED_CONVERT = ContractKey("_npu_precision_mixed_convert", "b", False, "mixed_convert")
PRECISION_MIXED_WHITE = ContractKey("_npu_precision_mixed_white", "list.s", (), "mixed_white", list)
PRECISION_MIXED_BLACK = ContractKey("_npu_precision_mixed_black", "list.s", (), "mixed_black", list)
PRECISION_ASCEND_FP16 = ContractKey("_npu_precision_ascend_fp16", "b", False, "ascend_fp16")
PRECISION_IMPL_MODES = ContractKey("_npu_precision_impl_modes", "list.func", (), "impl_modes", _impl_records)
ITERATIONS_PER_LOOP = ContractKey("_npu_iterations_per_loop", "i", 1, "iterations_per_loop")
COLLECTIVE_TIMEOUT = ContractKey("_npu_collective_timeout", "i", 0, "collective_timeout")
COLLECTIVE_RUN_BOUND = ContractKey("_npu_collective_run_bound", "b", False, "collective_run_bound")

KEYS = (
    VALIDATED,
    INIT_OPTIONS,
    DUMP_ENABLED,
    DUMP_ROOT,
    DUMP_BASE,
    DUMP_INPUTS,
    DUMP_OUTPUTS,
    DUMP_STATS,
    DUMP_GOLDEN,
    DUMP_STEPS,
    DUMP_LAYERS,
    OVERFLOW_CHECK,
    OVERFLOW_FP16_SATURATION,
    EXCEPTION_DUMP,
    EXCEPTION_DIR,
    EXCEPTION_BASE,
    SESSION_ID,
    PRECISION_REWRITE,
    PRECISION_RULES,
    PRECISION_MIXED_DTYPE,
    PRECISION_MIXED_CONVERT,
    PRECISION_MIXED_WHITE,
    PRECISION_MIXED_BLACK,
    PRECISION_ASCEND_FP16,
    PRECISION_IMPL_MODES,
    ITERATIONS_PER_LOOP,
    COLLECTIVE_TIMEOUT,
    COLLECTIVE_RUN_BOUND,
)

RECORD_FIELDS = (
    RecordField(PRECISION_RULES.name, "selector", "s"),
    RecordField(PRECISION_RULES.name, "target", "s"),
    RecordField(PRECISION_RULES.name, "input_slots", "list.i"),
    RecordField(PRECISION_RULES.name, "input_dtypes", "list.type"),
    RecordField(PRECISION_RULES.name, "output_slots", "list.i"),
    RecordField(PRECISION_RULES.name, "output_dtypes", "list.type"),
    RecordField(PRECISION_IMPL_MODES.name, "selector", "s"),
    RecordField(PRECISION_IMPL_MODES.name, "target", "s"),
    RecordField(PRECISION_IMPL_MODES.name, "mode", "s"),
)

# Node attributes Python stamps on ops of the user's graph for the passes.
KEEP_DTYPE_ATTR = "_keep_dtype"  # i (or b) != 0: the precision passes leave the op's dtypes
ITERATION_OP_ATTR = "_npu_iteration_op"  # b: the IterationOp of iterations_per_loop
COLLECTIVE_GROUP_ATTR = "_npu_hccl_group"  # s: a collective npu_bridge built (the group name)
IMPL_OP_ATTR = "_npu_impl_op"  # s: the Ascend op a composed op implements (a LayerNorm's Rsqrt)
IMPL_NAME_ATTR = "_npu_impl_name"  # s: the name the user gave that op
COMPOSED_OP_ATTR = "_npu_op_type"  # s: a function call that is one Ascend op (core/compute/composite.py)
COMPOSED_OUTPUTS_ATTR = "_npu_op_outputs"  # i: how many of that call's outputs are the op's
NODE_ATTRS = (
    KEEP_DTYPE_ATTR,
    ITERATION_OP_ATTR,
    COLLECTIVE_GROUP_ATTR,
    IMPL_OP_ATTR,
    IMPL_NAME_ATTR,
    COMPOSED_OP_ATTR,
    COMPOSED_OUTPUTS_ATTR,
)

KEY_PREFIX = "_npu_"  # every key starts with it; C++ rejects any other key with it
_RECORD_NAMES = {
    PRECISION_RULES.name: "precision_rule",
    PRECISION_IMPL_MODES.name: "impl_mode",
    INIT_OPTIONS.name: "init_options",
}


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


def read(entry) -> Dict[str, Any]:
    """Returns the contract keys present in an NpuOptimizer entry, decoded into ``write``'s forms.

    b -> bool, i -> int, s -> str, list.i -> list of int, list.s -> list of str, list.func -> list of
    {field: value} (list.type fields as dtype names), func -> {name: value}.

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
        if key.kind == "list.func":
            return attr(list=attr.ListValue(func=[_record(key, record) for record in value]))
        return attr(
            func=attr_value_pb2.NameAttrList(
                name=_RECORD_NAMES[key.name], attr={name: _scalar(key, name, v) for name, v in value.items()}
            )
        )
    except PassContractError:
        raise
    except (TypeError, ValueError, KeyError) as e:  # also protobuf's range check of an int beyond int64
        raise PassContractError(f"pass contract key {key.name} ({key.kind}) cannot hold {value!r}: {e}") from None


def _typed(value, python_type, key):
    if not isinstance(value, python_type) or (python_type is int and isinstance(value, bool)):
        raise PassContractError(f"{type(value).__name__} {value!r} in {key.name} is not a {python_type.__name__}")
    return value


def _scalar(key, name, value):
    from tensorflow.core.framework import attr_value_pb2

    if isinstance(value, bool):
        return attr_value_pb2.AttrValue(b=value)
    if isinstance(value, int):
        return attr_value_pb2.AttrValue(i=value)
    if isinstance(value, str):
        return attr_value_pb2.AttrValue(s=value.encode("utf-8"))
    raise PassContractError(f"{name}={value!r} in {key.name} is not a bool, int or str")


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
    if key.kind == "list.func":
        return [_decode_record(key, record) for record in attr.list.func]
    return {name: _scalar_value(key, name, value) for name, value in sorted(attr.func.attr.items())}


def _scalar_value(key, name, value):
    field = value.WhichOneof("value")
    if field not in ("b", "i", "s"):
        raise PassContractError(
            f"pass contract key {key.name}: {name} holds {str(value).strip() or 'nothing'}; its values are b, i or s"
        )
    return value.s.decode("utf-8") if field == "s" else getattr(value, field)


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
