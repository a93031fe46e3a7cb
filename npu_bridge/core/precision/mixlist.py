"""The mixed-precision op lists: Ascend-style defaults and their edits by ``modify_mixlist``.

In a mixed mode every op that computes on float32 values is in one of three classes, as on Ascend:

  white list   computes in fp16 / bf16 (the cube ops: matrix multiplications and convolutions).
  black list   keeps float32 (losses, exp / log, reductions, normalization statistics, loss scaling and
               float-status ops): values that lose too much in fp16.
  gray list    every other op: follows its inputs (reduced precision when a float input comes from the
               reduced-precision region), as Ascend's ops without a precision_reduce flag do.

The lists name TensorFlow op types; this module is their only source: the session's pass plan carries them
to the C++ ``precision`` pass and ``markdown`` renders them for the docs. A ``modify_mixlist`` file is JSON,
``{"black-list": {"to-add": [...], "to-remove": [...]}, "white-list": {...}, "gray-list": {...}}`` with Ascend
op types; an op removed from the black or white list becomes gray.
"""

import dataclasses
import json
import pathlib
from typing import Tuple

from npu_bridge.core.precision.modes import CUBE_OPS
from npu_bridge.core.precision.op_types import tf_op_type
from npu_bridge.core.runtime import bounded_files
from npu_bridge.core.runtime.errors import OptionValueError

DOCS_PAGE = pathlib.Path(__file__).resolve().parents[3] / "docs" / "mixed_precision.md"
DOCS_BLOCK = "mixed-precision-lists"  # a block of DOCS_PAGE (npu_bridge.core.runtime.doc_blocks)

LISTS = ("black-list", "white-list", "gray-list")
ACTIONS = ("to-add", "to-remove")

WHITE = "white"
BLACK = "black"
GRAY = "gray"

DEFAULT_WHITE = CUBE_OPS

# (op types, why they keep float32), in the order the docs show them.
_BLACK_GROUPS = (
    (
        (
            "SoftmaxCrossEntropyWithLogits",
            "SparseSoftmaxCrossEntropyWithLogits",
            "LogSoftmax",
            "L2Loss",
        ),
        "losses",
    ),
    (("Exp", "Expm1", "Log", "Log1p", "Pow", "Xlogy", "Xlog1py", "Softplus"), "exponentials and logarithms"),
    (("Sum", "Mean", "Prod", "EuclideanNorm", "Cumsum", "Cumprod"), "reductions"),
    (
        (
            "FusedBatchNorm",
            "FusedBatchNormV2",
            "FusedBatchNormV3",
            "FusedBatchNormGrad",
            "FusedBatchNormGradV2",
            "FusedBatchNormGradV3",
            "SquaredDifference",
            "Rsqrt",
            "RsqrtGrad",
            "Sqrt",
            "SqrtGrad",
        ),
        "normalization statistics",
    ),
    (
        (
            "NpuAllocFloatStatus",
            "NpuGetFloatStatus",
            "NpuClearFloatStatus",
            "NpuGetFloatStatusV2",
            "NpuClearFloatStatusV2",
            "IsFinite",
            "IsInf",
            "IsNan",
        ),
        "loss scaling and float status",
    ),
)
DEFAULT_BLACK = tuple(op for ops, _ in _BLACK_GROUPS for op in ops)

# For each op, which (list, action) pairs may appear together (Ascend's rules): add to one list and
# optionally remove from another, or only remove from the black or white list.
_VALID_COMBINATIONS = {
    frozenset(c)
    for c in (
        {("black-list", "to-remove")},
        {("white-list", "to-remove")},
        {("gray-list", "to-add")},
        {("gray-list", "to-add"), ("black-list", "to-remove")},
        {("gray-list", "to-add"), ("white-list", "to-remove")},
        {("white-list", "to-add")},
        {("white-list", "to-add"), ("gray-list", "to-remove")},
        {("white-list", "to-add"), ("black-list", "to-remove")},
        {("black-list", "to-add")},
        {("black-list", "to-add"), ("gray-list", "to-remove")},
        {("black-list", "to-add"), ("white-list", "to-remove")},
    )
}


@dataclasses.dataclass(frozen=True)
class MixedLists:
    """The white and black lists of a session (TensorFlow op types); every other op is gray."""

    white: Tuple[str, ...] = ()
    black: Tuple[str, ...] = ()


def load(path):
    """Reads and validates a modify_mixlist file.

    Args:
      path: the file path.
    Returns:
      {TensorFlow op type: WHITE, BLACK or GRAY}: the list each named op ends in.
    Raises:
      OptionValueError: missing or unreadable file, invalid JSON, unknown keys, wrong value types, or an
        invalid combination of edits for one op.
    """
    try:
        content = bounded_files.parse_json(bounded_files.read_text(path))
    except OSError as e:
        raise OptionValueError(f"cannot read the file: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise OptionValueError(f"the file is not valid JSON ({e})") from None
    if not isinstance(content, dict):
        raise OptionValueError("the file must hold a JSON object with black-list / white-list / gray-list")
    edits = {}  # op -> set of (list, action)
    for list_name, actions in content.items():
        if list_name not in LISTS:
            raise OptionValueError(f"unknown key {list_name!r}; the keys are {', '.join(LISTS)}")
        if not isinstance(actions, dict):
            raise OptionValueError(f"{list_name} must be an object with to-add / to-remove")
        for action, ops in actions.items():
            if action not in ACTIONS:
                raise OptionValueError(f"unknown key {action!r} in {list_name}; the keys are to-add, to-remove")
            if not isinstance(ops, list) or not all(isinstance(op, str) and op for op in ops):
                raise OptionValueError(f"{list_name}.{action} must be a list of op type names")
            for op in ops:
                edits.setdefault(op, set()).add((list_name, action))
    placement = {}
    for op, pairs in sorted(edits.items()):
        if frozenset(pairs) not in _VALID_COMBINATIONS:
            described = " and ".join(f"{action} {list_name}" for list_name, action in sorted(pairs))
            raise OptionValueError(
                f"Operation {described} for op {op} is invalid: add an op to one list (and "
                "optionally remove it from another), or only remove it from black-list or "
                "white-list"
            )
        if ("black-list", "to-add") in pairs:
            placement[tf_op_type(op)] = BLACK
        elif ("white-list", "to-add") in pairs:
            placement[tf_op_type(op)] = WHITE
        else:
            placement[tf_op_type(op)] = GRAY
    return placement


def session_lists(path):
    """Returns the ``MixedLists`` of a session: the defaults, edited by a modify_mixlist file.

    Args:
      path: a validated modify_mixlist path, or None for the defaults.
    Returns:
      The lists, sorted.
    """
    placement = load(path) if path else {}
    white = {op for op in DEFAULT_WHITE if op not in placement} | {op for op, c in placement.items() if c == WHITE}
    black = {op for op in DEFAULT_BLACK if op not in placement} | {op for op, c in placement.items() if c == BLACK}
    return MixedLists(white=tuple(sorted(white)), black=tuple(sorted(black)))


def markdown():
    """The default lists as a markdown table (docs/mixed_precision.md holds a copy, checked by a test)."""
    rows = ["| List | Op types (TensorFlow names) |", "| --- | --- |"]
    rows.append(f"| white: cube ops, fp16 / bf16 | {', '.join(DEFAULT_WHITE)} |")
    for ops, why in _BLACK_GROUPS:
        rows.append(f"| black: {why}, float32 | {', '.join(ops)} |")
    rows.append("| gray: follow their inputs | every other op with float32 inputs |")
    return "\n".join(rows)
