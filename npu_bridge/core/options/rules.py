"""Rules that involve more than one option.

Each rule reads effective values through ``get(name)`` (explicit value, else default, None when unset) and
returns a ``Violation`` or None. The parser turns a violation into an ``NpuOptionError``.
"""

from typing import Any, Callable, NamedTuple, Optional

from npu_bridge.core.options.table import MIXED_PRECISION_MODES, MIXED_PRECISION_MODES_V2

_DYNAMIC_TRIO = ("input_shape", "dynamic_dims", "dynamic_node_type")


class Violation(NamedTuple):
    """A broken rule: the key to blame, why, and what is allowed (None = the key's own ``allowed`` text)."""

    key: str
    detail: str
    allowed: Optional[str] = None


def _dump_path_required(get):
    if (get("enable_dump") or get("enable_dump_debug")) and get("dump_path") is None:
        return Violation("dump_path", "if use dump function, dump_path must be set.")
    return None


def _precision_modes_exclusive(get):
    if get("precision_mode") is not None and get("precision_mode_v2") is not None:
        return Violation(
            "precision_mode_v2",
            "'precision_mode' and 'precision_mode_v2' can not be assigned at the same time.",
            "set precision_mode or precision_mode_v2, not both",
        )
    return None


def _modify_mixlist_needs_mixed_mode(get):
    if get("modify_mixlist") is None:
        return None
    allowed = (
        "a mixed precision mode: precision_mode "
        + " / ".join(MIXED_PRECISION_MODES)
        + " or precision_mode_v2 "
        + " / ".join(MIXED_PRECISION_MODES_V2)
    )
    mode, mode_v2 = get("precision_mode"), get("precision_mode_v2")
    if mode is not None and mode not in MIXED_PRECISION_MODES:
        return Violation(
            "precision_mode",
            "modify_mixlist is assigned, please ensure precision_mode is one of " + ", ".join(MIXED_PRECISION_MODES),
            allowed,
        )
    if mode_v2 is not None and mode_v2 not in MIXED_PRECISION_MODES_V2:
        return Violation(
            "precision_mode_v2",
            "modify_mixlist is assigned, please ensure precision_mode_v2 is one "
            "of " + ", ".join(MIXED_PRECISION_MODES_V2),
            allowed,
        )
    if mode is None and mode_v2 is None:
        return Violation(
            "modify_mixlist",
            "modify_mixlist is assigned, please ensure precision_mode or "
            "precision_mode_v2 is set to a mixed precision mode",
            allowed,
        )
    return None


def _implmode_list_needs_implmode(get):
    if get("optypelist_for_implmode") is not None and get("op_select_implmode") is None:
        return Violation("optypelist_for_implmode", "when use optypelist_for_implmode, op_select_implmode must be set.")
    return None


def _dynamic_inputs_together(get):
    present = [name for name in _DYNAMIC_TRIO if get(name) is not None]
    if present and len(present) < len(_DYNAMIC_TRIO):
        missing = ", ".join(name for name in _DYNAMIC_TRIO if name not in present)
        return Violation(
            present[0], f"input_shape, dynamic_dims and dynamic_node_type should use together (missing: {missing})."
        )
    return None


def _compile_hybrid_mode_inputs(get):
    if get("compile_hybrid_mode") != 1:
        return None
    if any(get(name) is None for name in _DYNAMIC_TRIO):
        return Violation(
            "compile_hybrid_mode",
            "input_shape, dynamic_dims and dynamic_node_type should be set when compile_hybrid_mode is 1",
        )
    if get("dynamic_node_type") != 1:
        return Violation(
            "dynamic_node_type",
            "When compile_hybrid_mode set, dynamic_node_type should be 1.",
            "1 when compile_hybrid_mode is 1",
        )
    return None


def _compress_weight_exclusive(get):
    # Upstream rejects the two keys merely being present, but NPUEstimator always writes
    # enable_compress_weight, so only a real conflict (switch on and a config file) is an error here.
    if get("enable_compress_weight") and get("compress_weight_conf") is not None:
        return Violation(
            "compress_weight_conf",
            "enable_compress_weight can not use with compress_weight_conf.",
            "a compression config file, or enable_compress_weight=true, not both",
        )
    return None


RULES = (
    _dump_path_required,
    _precision_modes_exclusive,
    _modify_mixlist_needs_mixed_mode,
    _implmode_list_needs_implmode,
    _dynamic_inputs_together,
    _compile_hybrid_mode_inputs,
    _compress_weight_exclusive,
)


def find_violation(get: Callable[[str], Any]) -> Optional[Violation]:
    """Returns the first broken cross-option rule.

    Args:
      get: callable(name) -> effective value of an option (None when unset).
    Returns:
      A ``Violation``, or None when every rule holds.
    """
    for rule in RULES:
        violation = rule(get)
        if violation is not None:
            return violation
    return None
