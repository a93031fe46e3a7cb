"""``modify_mixlist``: edits of Ascend's mixed-precision op lists, mapped onto TensorFlow's AMP lists.

The file is JSON: ``{"black-list": {"to-add": [...], "to-remove": [...]}, "white-list": {...},
"gray-list": {...}}`` with Ascend op types. Ascend's white list is TensorFlow's allow list (fp16), the black
list TensorFlow's deny list (float32) and the gray list TensorFlow's infer list (follows its neighbours). An op
removed from the black or white list becomes gray, as on Ascend. TensorFlow's AMP pass reads its lists from
``TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_<LIST>_<ADD|REMOVE>`` environment variables each time it optimizes a
graph; ``apply_to_environment`` sets them (on top of what the user set), process-wide like the init option.
"""

import json
import os

from npu_bridge.core.precision.op_types import tf_op_type
from npu_bridge.core.runtime import log
from npu_bridge.core.runtime.errors import OptionValueError

LISTS = ("black-list", "white-list", "gray-list")
ACTIONS = ("to-add", "to-remove")
ENV_PREFIX = "TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_"
TF_LISTS = ("ALLOWLIST", "INFERLIST", "DENYLIST", "CLEARLIST")

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

_original_environment = {}  # list key (e.g. "DENYLIST_ADD") this module changed -> the user's value or None


def load(path):
    """Reads and validates a modify_mixlist file.

    Args:
      path: the file path.
    Returns:
      {ascend op type: TensorFlow list name ("ALLOWLIST", "INFERLIST" or "DENYLIST")}: where each op ends.
    Raises:
      ValueError: missing or unreadable file, invalid JSON, unknown keys, wrong value types, or an invalid
        combination of edits for one op.
    """
    try:
        with open(path, encoding="utf-8") as f:
            content = json.load(f)
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
            placement[op] = "DENYLIST"
        elif ("white-list", "to-add") in pairs:
            placement[op] = "ALLOWLIST"
        else:
            placement[op] = "INFERLIST"
    return placement


def environment_for(placement):
    """Returns the TensorFlow AMP list variables (without prefix) that put each op in its list.

    Args:
      placement: the result of ``load``.
    Returns:
      {"ALLOWLIST_ADD": "MatMul,Conv2D", "DENYLIST_REMOVE": ..., ...}; only non-empty entries.
    """
    lists = {f"{name}_{action}": [] for name in TF_LISTS for action in ("ADD", "REMOVE")}
    for ascend_op, target in sorted(placement.items()):
        op = tf_op_type(ascend_op)
        lists[f"{target}_ADD"].append(op)
        for other in TF_LISTS:  # TensorFlow rejects an op that is in two lists
            if other != target:
                lists[f"{other}_REMOVE"].append(op)
    return {key: ",".join(ops) for key, ops in lists.items() if ops}


def apply_to_environment(path):
    """Makes TensorFlow's AMP pass use the lists of a modify_mixlist file (or the defaults for None).

    Values the user set in these variables are kept; the file's entries are appended to them.

    Args:
      path: a validated modify_mixlist path, or None.
    """
    wanted = environment_for(load(path)) if path else {}
    for key in sorted(set(wanted) | set(_original_environment)):
        variable = ENV_PREFIX + key
        if key not in _original_environment:
            _original_environment[key] = os.environ.get(variable)
        user_value = _original_environment[key]
        parts = [part for part in (user_value, wanted.get(key)) if part]
        if parts:
            os.environ[variable] = ",".join(parts)
        else:
            os.environ.pop(variable, None)
    if path:
        log.info_once(
            ("modify_mixlist", path),
            "modify_mixlist %s: TensorFlow mixed-precision lists %s",
            path,
            ", ".join(f"{k}={v}" for k, v in sorted(wanted.items())),
        )
