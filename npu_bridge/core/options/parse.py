"""Reads NpuOptimizer options from a ConfigProto or from Python values, validates them, writes them back.

Validation happens here, when the options are parsed (session creation, config-class construction), and a
bad value always raises ``NpuOptionError``; upstream validates at the first ``sess.run`` and aborts the process
for many bad values.
"""

import numbers
import re
import types
from typing import Any, Dict, Iterable, Mapping, Optional, Tuple

from npu_bridge.core.options import checks, rules
from npu_bridge.core.options.spec import STAGES, STATUS_TEXT
from npu_bridge.core.options.table import OPTIONS, did_you_mean
from npu_bridge.core.runtime import log
from npu_bridge.core.runtime.errors import NpuOptionError

NPU_OPTIMIZER = "NpuOptimizer"
SESSION_ATTRIBUTE = "_npu_bridge_options"  # every bridged session instance keeps its NpuOptions here

_ZERO = {"b": False, "i": 0, "s": ""}
_FIELD_TEXT = {"b": "bool (.b)", "i": "int (.i)", "s": "string (.s)"}
_TRUE_TEXTS = ("true", "1")
_FALSE_TEXTS = ("false", "0")
_INT_TEXT = re.compile(r"[+-]?[0-9]+")  # ASCII digits: int() also reads other scripts' digits
_UNCONVERTIBLE = object()


class NpuOptions:
    """Validated NpuOptimizer options; immutable.

    Build instances with ``parse_config``, ``parse_values`` or ``with_values``; the constructor does not
    validate.
    """

    __slots__ = ("_explicit", "_unknown")

    def __init__(self, explicit: Optional[Mapping[str, Any]] = None, unknown: Iterable[str] = ()):
        object.__setattr__(self, "_explicit", types.MappingProxyType(dict(explicit or {})))
        object.__setattr__(self, "_unknown", tuple(unknown))

    def __setattr__(self, name, value):
        raise AttributeError("NpuOptions is immutable; use with_values() to get a changed copy")

    def __eq__(self, other):
        if not isinstance(other, NpuOptions):
            return NotImplemented
        return dict(self._explicit) == dict(other._explicit) and self._unknown == other._unknown

    __hash__ = None

    def __repr__(self):
        return f"NpuOptions({dict(self._explicit)!r})"

    @property
    def explicit(self) -> Dict[str, Any]:
        """dict of the explicitly set options, name -> normalized value (bool, int or str)."""
        return dict(self._explicit)

    @property
    def unknown(self) -> Tuple[str, ...]:
        """tuple of the unknown keys that were seen (and ignored), in the order seen."""
        return self._unknown

    def get(self, name: str) -> Any:
        """Returns the effective value of an option.

        Args:
          name: an option name from the table.
        Returns:
          The explicit value, else the table default; None when the option is unset.
        Raises:
          KeyError: ``name`` is not in the option table.
        """
        if name not in OPTIONS:
            raise KeyError(f"{name!r} is not an NpuOptimizer option{did_you_mean(name)}")
        return self._explicit.get(name, OPTIONS[name].default)

    def is_set(self, name: str) -> bool:
        """Tells whether an option was set explicitly (as opposed to taking its default).

        Args:
          name: an option name from the table.
        Returns:
          True when the option has an explicit value.
        Raises:
          KeyError: ``name`` is not in the option table.
        """
        self.get(name)
        return name in self._explicit

    def by_stage(self, stage: str) -> Dict[str, Any]:
        """Returns {name: effective value} of the options of one stage whose effective value is not None.

        Args:
          stage: "init", "session", "graph" or "pass".
        Returns:
          A dict in table order.
        Raises:
          ValueError: unknown stage.
        """
        if stage not in STAGES:
            raise ValueError(f"stage {stage!r} is not one of {STAGES}")
        return {
            name: self.get(name) for name, spec in OPTIONS.items() if spec.stage == stage and self.get(name) is not None
        }

    def with_values(self, overrides: Mapping[str, Any]) -> "NpuOptions":
        """Returns a copy with some options replaced, validated again as a whole.

        Args:
          overrides: {name: value}; a None value removes the explicit setting (back to the default).
        Returns:
          A new ``NpuOptions``.
        Raises:
          KeyError: a name is not in the option table.
          NpuOptionError: a value, or the combination, is invalid.
        """
        for name in overrides:
            self.get(name)
        values = {**self._explicit, **overrides}
        return _validated(_converted_values(values, "NpuOptions.with_values"), self._unknown, "NpuOptions.with_values")

    def write_parameter_map(self, custom_optimizer: Any, explicit_only: bool = False) -> None:
        """Replaces an NpuOptimizer entry's parameter_map by every option whose effective value is not None (the
        normalized write-back of a session's entry), or by the explicitly set ones only.

        Each value goes into its canonical AttrValue field: .b for bool, .i for int, .s (UTF-8 bytes) for str.
        Unknown keys are not written.

        Args:
          custom_optimizer: a ``RewriterConfig.CustomGraphOptimizer`` message (modified in place).
          explicit_only: write only the explicitly set options, so that parsing the entry gives these options
            back, set and unset alike. Options whose default yields to an environment variable when they are
            unset (``device_target`` to NPU_BRIDGE_DEVICE_TARGET, ``profiling_mode`` to PROFILING_MODE) keep
            doing so; with every effective value written they would count as set.
        """
        parameter_map = custom_optimizer.parameter_map
        parameter_map.clear()
        for name, spec in OPTIONS.items():
            if explicit_only and name not in self._explicit:
                continue
            value = self.get(name)
            if value is None:
                continue
            if spec.kind == "b":
                parameter_map[name].b = value
            elif spec.kind == "i":
                parameter_map[name].i = value
            else:
                parameter_map[name].s = value.encode("utf-8")


def find_npu_optimizers(config_proto: Any) -> list:
    """Returns the ``custom_optimizers`` entries named "NpuOptimizer".

    Args:
      config_proto: a ``tf.compat.v1.ConfigProto`` or None.
    Returns:
      A list of ``RewriterConfig.CustomGraphOptimizer`` messages (empty when there are none).
    """
    if config_proto is None:
        return []
    return [
        entry for entry in config_proto.graph_options.rewrite_options.custom_optimizers if entry.name == NPU_OPTIMIZER
    ]


def parse_config(config_proto: Any) -> NpuOptions:
    """Parses and validates the NpuOptimizer options of a ConfigProto.

    Several NpuOptimizer entries (NPUEstimator adds one) are merged; later entries win per key and a
    disagreement is logged once. Unknown keys are logged once and ignored.

    Args:
      config_proto: a ``tf.compat.v1.ConfigProto`` or None.
    Returns:
      ``NpuOptions``; all defaults when there is no NpuOptimizer entry.
    Raises:
      NpuOptionError: a value cannot be converted to its kind, fails its check, or breaks a cross-option rule.
    """
    attrs = {}
    unknown = []
    for entry in find_npu_optimizers(config_proto):
        for name in sorted(entry.parameter_map):
            attr = entry.parameter_map[name]
            if name not in OPTIONS:
                _note_unknown(name, unknown)
                continue
            if name in attrs and attrs[name] != attr:
                log.warn_once(
                    (__name__, "disagree", name),
                    "NpuOptimizer option %s is set differently in several NpuOptimizer entries; the "
                    "last entry wins (%s)",
                    name,
                    str(attr).strip(),
                )
            attrs[name] = attr
    values = {name: _attr_value(OPTIONS[name], attr) for name, attr in attrs.items()}
    return _validated(values, unknown, None)


def parse_values(values: dict, source: str, paths_later: bool = False) -> NpuOptions:
    """Validates options given as Python values keyed by option name.

    Used for ``npu_resource_init(...)`` keyword arguments and the config classes. None values count as not
    set. Unknown keys are logged once and ignored.

    Args:
      values: {name: value}; bool, int, str or bytes values.
      source: who passed the values (e.g. "NPURunConfig"); named in error messages.
      paths_later: skip the checks that read the file system (``checks.FILE_SYSTEM_CHECKS``: a directory or file
        that must exist), which the session the values reach applies when it is created, as upstream does; the
        config classes pass True, since a config may be built and never used.
    Returns:
      ``NpuOptions``.
    Raises:
      NpuOptionError: a value cannot be converted to its kind, fails its check, or breaks a cross-option rule.
    """
    unknown = []
    known = {}
    for name, value in values.items():
        if name not in OPTIONS:
            _note_unknown(name, unknown)
        else:
            known[name] = value
    return _validated(_converted_values(known, source), unknown, source, paths_later)


def _converted_values(values, source):
    """Converts Python values to their option's kind; returns {name: bool | int | str}."""
    converted = {}
    for name, value in values.items():
        if value is None:
            continue
        spec = OPTIONS[name]
        if isinstance(value, bytes):
            value = _decoded(spec, value, source)
        if isinstance(value, bool):
            field = "b"
        elif isinstance(value, numbers.Integral):
            field, value = "i", int(value)
        elif isinstance(value, str):
            field = "s"
        else:
            raise _error(
                spec.name,
                value,
                spec.allowed,
                f"expected {_FIELD_TEXT[spec.kind].split()[0]}, got {type(value).__name__}",
                source,
            )
        converted[name] = _to_kind(spec, field, value, source)
    return converted


def _attr_value(spec, attr):
    """Reads one AttrValue as the option's kind, converting values set in another field."""
    field = attr.WhichOneof("value")
    if field is None:
        log.warn_once(
            (__name__, "empty", spec.name),
            "NpuOptimizer option %s is present but has no value; using %r",
            spec.name,
            _ZERO[spec.kind],
        )
        return _ZERO[spec.kind]
    if field not in _ZERO:
        raise _error(
            spec.name,
            str(attr).strip(),
            spec.allowed,
            f"the value is in the AttrValue field .{field}; {spec.name} is read from {_FIELD_TEXT[spec.kind]}",
            None,
        )
    value = getattr(attr, field)
    if field == "s":
        value = _decoded(spec, value, None)
    return _to_kind(spec, field, value, None)


def _decoded(spec, data, source):
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise _error(spec.name, data, spec.allowed, "the bytes are not valid UTF-8", source) from None


_INT64 = (-(2**63), 2**63 - 1)


def _to_kind(spec, field, value, source):
    """Returns ``value`` (found in ``field``) as the option's kind; logs once when it had to convert."""
    result = _converted_to_kind(spec, field, value, source)
    if spec.kind == "i" and isinstance(result, int) and not _INT64[0] <= result <= _INT64[1]:
        raise _error(spec.name, value, spec.allowed, "the number is outside the 64-bit integer range", source)
    return result


def _converted_to_kind(spec, field, value, source):
    if field == spec.kind:
        return value
    if field == "b" and spec.bool_texts:
        text = spec.bool_texts[0] if value else spec.bool_texts[1]
        log.info_once(
            (__name__, "bool_text", spec.name, value),
            "NpuOptimizer option %s is a string today; read the bool %r (older releases' form) as %r",
            spec.name,
            value,
            text,
        )
        return text
    if spec.strict_kind:
        raise _error(
            spec.name,
            value,
            spec.allowed,
            f"The data type of {spec.name} is invalid. Expected {_FIELD_TEXT[spec.kind]} type.",
            source,
        )
    converted = _convert(spec.kind, field, value)
    if converted is _UNCONVERTIBLE:
        raise _error(
            spec.name,
            value,
            spec.allowed,
            f"{spec.name} is read from {_FIELD_TEXT[spec.kind]}; the {_FIELD_TEXT[field]} value has no "
            f"unambiguous meaning",
            source,
        )
    log.info_once(
        (__name__, "convert", spec.name, field, value),
        "NpuOptimizer option %s is read from %s; converted the %s value %r to %r",
        spec.name,
        _FIELD_TEXT[spec.kind],
        _FIELD_TEXT[field],
        value,
        converted,
    )
    return converted


def _convert(kind, field, value):
    """Converts between kinds where the meaning is unambiguous; returns _UNCONVERTIBLE otherwise."""
    if kind == "b":
        if field == "i" and value in (0, 1):
            return bool(value)
        if field == "s" and value.strip().lower() in _TRUE_TEXTS + _FALSE_TEXTS:
            return value.strip().lower() in _TRUE_TEXTS
    elif kind == "i":
        if field == "b":
            return int(value)
        if field == "s" and _INT_TEXT.fullmatch(value.strip()):
            return int(value)
    elif field == "i":
        return str(value)
    return _UNCONVERTIBLE


def _validated(values, unknown, source, paths_later=False):
    """Runs the per-option checks (without the file-system ones when ``paths_later``) and the cross-option rules;
    returns ``NpuOptions``."""

    def effective(name):
        return values.get(name, OPTIONS[name].default)

    checked = dict(values)
    for name, value in values.items():
        spec = OPTIONS[name]
        if spec.check is None or (spec.checked_when and not any(effective(s) for s in spec.checked_when)):
            continue
        if paths_later and spec.check in checks.FILE_SYSTEM_CHECKS:
            continue
        try:
            checked[name] = spec.check(value)
        except ValueError as e:
            raise _error(name, value, spec.allowed, str(e), source) from None
    ordered = {name: checked[name] for name in OPTIONS if name in checked}
    options = NpuOptions(ordered, unknown)
    violation = rules.find_violation(options.get)
    if violation is not None:
        allowed = violation.allowed or OPTIONS[violation.key].allowed
        raise _error(violation.key, options.get(violation.key), allowed, violation.detail, source)
    _report_status(ordered)
    return options


def _report_status(explicit):
    """Logs once (info: they only tune Ascend hardware, results here are unaffected) which options set to a
    non-default value have no effect here."""
    names = tuple(
        name
        for name, value in explicit.items()
        if OPTIONS[name].status == "no_effect" and value != OPTIONS[name].default
    )
    if names:
        log.info_once(
            (__name__, "no_effect", names),
            "NpuOptimizer options %s: %s (see the option table in docs/options.md)",
            ", ".join(names),
            STATUS_TEXT["no_effect"],
        )


def _note_unknown(name, unknown):
    if name not in unknown:
        unknown.append(name)
    log.warn_once(
        (__name__, "unknown", name),
        "NpuOptimizer option %r is not known to npu_bridge and is ignored%s",
        name,
        did_you_mean(name),
    )


def _error(name, value, allowed, detail, source):
    if source:
        detail = f"{detail} (given to {source})"
    return NpuOptionError(name, value, allowed, detail)
