"""``tf.contrib.training.HParams`` and ``parse_values`` for the TF1 mode: named hyperparameters with typed
overrides, with TensorFlow 1.x's rules.

A hyperparameter has the type of its first value (a list: of its first element) and stays a scalar or a list.
``set_hparam`` / ``override_from_dict`` / ``parse_json`` convert a new value to that type when it fits: the same
type as it is, an int where a float is wanted, anything where the first value was None; never a float to an int,
a number to a string, or anything to or from a bool. ``parse("lr=0.3,layers=[64,32],name=big,arr[1]=5")`` reads
text the way ``parse_values`` does, so ``parse(str(hparams))`` gives the same values back. Names may hold dots
(``a.b``, reached with ``getattr``). ``to_proto`` / ``HParams(hparam_def=...)`` write and read TensorFlow 1.x's
``HParamDef`` protocol buffer.
"""

import json
import numbers
import re

from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError, NpuKeyError
from npu_bridge.core.tf1.hparam_proto import HParamDef

# name[index]=value or name=[v1,v2]: a name starts with a letter and may hold dots; a scalar runs to the next
# comma (it may hold '=' and quotes, not '['); the clause ends the text or is followed by a comma.
_CLAUSE = re.compile(
    r"(?P<name>[a-zA-Z][\w.]*)(\[\s*(?P<index>\d+)\s*\])?\s*=\s*((?P<val>[^,\[]*)|\[(?P<vals>[^\]]*)\])($|,\s*)"
)
_TRUE, _FALSE = ("true", "True"), ("false", "False")


def _parse_bool(text):
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    return bool(int(text))  # "1" / "0"; anything else raises ValueError


def _cannot_parse(name, kind, text, values):
    return NpuArgumentError(
        f"Could not parse hparam '{name}' of type '{kind.__name__}' with value '{text}' in {values!r}: "
        + ("a bool is true, True, false, False or an integer" if kind is bool else f"it must parse as {kind.__name__}")
    )


def _assigned_twice(name, values):
    return NpuArgumentError(f"Multiple assignments to variable '{name}' in {values!r}: assign each name once")


def parse_values(values, type_map, ignore_unknown=False):
    """Reads ``"name=value,list=[v1,v2],arr[3]=value"`` into a dict, each value parsed as its name's type.

    A scalar runs to the next comma: an int, a float, a bool (``true`` / ``True`` / ``false`` / ``False`` or an
    integer) or a string (possibly empty). A list is ``[...]`` of such scalars split at commas and spaces. ``name[i]``
    assigns element i of a list hyperparameter.

    Args:
      values: the text.
      type_map: {name: type}: the type of each name's value (of its elements, for a list).
      ignore_unknown: skip clauses whose name ``type_map`` lacks, instead of raising.

    Returns:
      {name: value, a list of values, or {index: value} for index assignments}.

    Raises:
      NpuArgumentError: malformed text, an unknown name, a value that does not parse as its type, a name assigned
        twice, or a list assigned to an index.
    """
    parsed = {}
    position = 0
    while position < len(values):
        match = _CLAUSE.match(values, position)
        if not match:
            raise NpuArgumentError(
                f"Malformed hyperparameter value: {values[position:]!r} (in {values!r}); write comma-separated "
                "name=value, name=[v1,v2] or name[index]=value"
            )
        position = match.end()
        name, index, scalar, items = match.group("name", "index", "val", "vals")
        if name not in type_map:
            if ignore_unknown:
                continue
            raise NpuArgumentError(f"Unknown hyperparameter type for {name} (in {values!r}); known: {sorted(type_map)}")
        kind = type_map[name]
        parse = _parse_bool if kind is bool else kind
        if scalar is not None:
            try:
                value = parse(scalar)
            except ValueError:
                raise _cannot_parse(name, kind, scalar, values) from None
            if index is None:
                if name in parsed:
                    raise _assigned_twice(name, values)
                parsed[name] = value
            else:
                elements = parsed.setdefault(name, {})
                if not isinstance(elements, dict):
                    raise _assigned_twice(name, values)
                if int(index) in elements:
                    raise _assigned_twice(f"{name}[{index}]", values)
                elements[int(index)] = value
        else:
            if index is not None:
                raise NpuArgumentError(
                    f"Assignment of a list to a list index: {name}[{index}]=[{items}] in {values!r}; assign one value "
                    f"to {name}[{index}], or the whole list to {name}"
                )
            if name in parsed:
                raise _assigned_twice(name, values)
            try:
                parsed[name] = [parse(item) for item in re.split("[ ,]", items) if item]
            except ValueError:
                raise _cannot_parse(name, kind, items, values) from None
    return parsed


def _cast(name, kind, value):
    """``value`` as ``kind`` (the type of hyperparameter ``name``), when TensorFlow 1.x's rules allow it."""
    if type(value) is kind or kind is type(None):
        return value
    strings = (str, bytes)
    allowed = not (
        (issubclass(kind, strings) and not isinstance(value, strings))
        or issubclass(kind, bool) != isinstance(value, bool)
        or (issubclass(kind, numbers.Integral) and not isinstance(value, numbers.Integral))
        or (issubclass(kind, numbers.Number) and not isinstance(value, numbers.Number))
    )
    if allowed:
        try:
            return kind(value)
        except (TypeError, ValueError):
            pass
    raise NpuArgumentError(
        f"Could not cast hparam '{name}' of type '{kind.__name__}' from value {value!r} ({type(value).__name__}): "
        "it takes its own type, an int where a float is wanted, nothing else"
    )


_PROTO_KINDS = ((bool, "bool"), (numbers.Integral, "int64"), ((str, bytes), "bytes"), (float, "float"))


class HParams:
    """Named hyperparameters, reached as attributes (``hparams.learning_rate``; ``getattr`` for dotted names).

    Args:
      hparam_def: an ``HParamDef`` protocol buffer (from ``to_proto``) to read the hyperparameters from.
      model_structure: anything; returned by ``get_model_structure()``.
      **kwargs: the hyperparameters and their initial values (with no ``hparam_def``).

    Raises:
      NpuArgumentTypeError: ``hparam_def`` is not an ``HParamDef``.
      NpuArgumentError: both ``hparam_def`` and keyword values given, or a value ``add_hparam`` refuses.
    """

    def __init__(self, hparam_def=None, model_structure=None, **kwargs):
        self._hparam_types = {}  # {name: (type, is_list)}, in order of creation
        self._model_structure = model_structure
        if hparam_def is not None:
            if not isinstance(hparam_def, HParamDef):
                raise NpuArgumentTypeError(
                    f"HParams: hparam_def must be an HParamDef protocol buffer (from HParams.to_proto()), got "
                    f"{hparam_def!r} ({type(hparam_def).__name__})"
                )
            if kwargs:
                raise NpuArgumentError(
                    "HParams: hparam_def and keyword values are mutually exclusive, got both "
                    f"(keywords {sorted(kwargs)})"
                )
            self._read_proto(hparam_def)
        for name, value in kwargs.items():
            self.add_hparam(name, value)

    def add_hparam(self, name, value):
        """Adds hyperparameter ``name`` with ``value`` (a scalar, or a non-empty list or tuple).

        Raises:
          NpuArgumentError: the name is in use (by a hyperparameter or an attribute of HParams), or the list is
            empty (its element type would be unknown).
        """
        if getattr(self, name, None) is not None:
            raise NpuArgumentError(
                f"Hyperparameter name is reserved: {name!r} is already a hyperparameter or an attribute of HParams"
            )
        if isinstance(value, (list, tuple)):
            if not value:
                raise NpuArgumentError(
                    f"Multi-valued hyperparameters cannot be empty: {name} = {value!r}; give at least one value"
                )
            self._hparam_types[name] = (type(value[0]), True)
        else:
            self._hparam_types[name] = (type(value), False)
        setattr(self, name, value)

    def set_hparam(self, name, value):
        """Sets hyperparameter ``name`` to ``value``, converted to its type.

        ``value`` may be ``{index: value}`` for a list hyperparameter (what ``parse_values`` gives for
        ``name[index]=value``): those elements change.

        Raises:
          NpuKeyError: no such hyperparameter (a ``KeyError``).
          NpuArgumentError: ``value`` does not fit its type, a list for a scalar or a scalar for a list, or an index
            beyond the list.
        """
        if name not in self._hparam_types:
            raise NpuKeyError(f"unknown hyperparameter {name!r}; known: {list(self._hparam_types)}")
        kind, is_list = self._hparam_types[name]
        if isinstance(value, dict) and is_list:
            elements = list(getattr(self, name))
            for index, element in value.items():
                if not 0 <= index < len(elements):
                    raise NpuArgumentError(
                        f"hyperparameter {name} has {len(elements)} elements; index {index} is outside [0, "
                        f"{len(elements) - 1}]"
                    )
                elements[index] = _cast(name, kind, element)
            setattr(self, name, elements)
        elif isinstance(value, list):
            if not is_list:
                raise NpuArgumentError(
                    f"Must not pass a list for single-valued parameter: {name} (got {value!r}; give one "
                    f"{kind.__name__})"
                )
            setattr(self, name, [_cast(name, kind, v) for v in value])
        else:
            if is_list:
                raise NpuArgumentError(
                    f"Must pass a list for multi-valued parameter: {name} (got {value!r}; give a list of "
                    f"{kind.__name__})"
                )
            setattr(self, name, _cast(name, kind, value))

    def del_hparam(self, name):
        """Removes hyperparameter ``name`` (nothing happens when there is none)."""
        if name in self._hparam_types:
            del self._hparam_types[name]
            delattr(self, name)

    def parse(self, values):
        """Overrides hyperparameters from text (see ``parse_values``); returns self.

        Raises:
          NpuArgumentError: malformed text, an unknown name, or a value that does not fit its hyperparameter.
        """
        type_map = {name: kind for name, (kind, _) in self._hparam_types.items()}
        return self.override_from_dict(parse_values(values, type_map))

    def override_from_dict(self, values_dict):
        """Sets every hyperparameter of ``values_dict`` (``set_hparam``); returns self."""
        for name, value in values_dict.items():
            self.set_hparam(name, value)
        return self

    def set_from_map(self, values_map):
        """The former name of ``override_from_dict``."""
        return self.override_from_dict(values_map)

    def parse_json(self, values_json):
        """Overrides hyperparameters from a JSON object; returns self."""
        return self.override_from_dict(json.loads(values_json))

    def values(self):
        """The hyperparameters as a dict, in order of creation."""
        return {name: getattr(self, name) for name in self._hparam_types}

    def to_json(self, indent=None, separators=None, sort_keys=False):
        """The hyperparameters as JSON (``json.dumps``'s arguments)."""
        return json.dumps(self.values(), indent=indent, separators=separators, sort_keys=sort_keys)

    def get(self, key, default=None):
        """The value of ``key``, or ``default`` when there is no such hyperparameter.

        Raises:
          NpuArgumentError: ``key`` exists and ``default`` (not None) could not be one of its values.
        """
        if key not in self._hparam_types:
            return default
        if default is not None:
            kind, is_list = self._hparam_types[key]
            described = f"list<{kind.__name__}>" if is_list else kind.__name__
            if is_list != isinstance(default, list):
                raise NpuArgumentError(f"Hparam '{key}' of type '{described}' is incompatible with default={default!r}")
            try:
                for value in default if is_list else [default]:
                    _cast(key, kind, value)
            except NpuArgumentError as error:
                raise NpuArgumentError(
                    f"Hparam '{key}' of type '{described}' is incompatible with default={default!r}: {error}"
                ) from None
        return getattr(self, key)

    def get_model_structure(self):
        """The ``model_structure`` given to the constructor (or ``set_model_structure``)."""
        return self._model_structure

    def set_model_structure(self, model_structure):
        """Replaces the model structure."""
        self._model_structure = model_structure

    def to_proto(self, export_scope=None):
        """The hyperparameters as an ``HParamDef`` protocol buffer (``export_scope`` is unused, as upstream).

        Raises:
          NpuArgumentTypeError: a hyperparameter is not a bool, int, float or string (or a list of them).
        """
        del export_scope
        proto = HParamDef()
        for name, (kind, is_list) in self._hparam_types.items():
            field = f"{_proto_kind(name, kind)}_{'list' if is_list else 'value'}"
            value = getattr(self, name)
            encode = (lambda v: v.encode() if isinstance(v, str) else v) if field.startswith("bytes") else None
            if is_list:
                getattr(proto.hparam[name], field).value.extend([encode(v) if encode else v for v in value])
            else:
                setattr(proto.hparam[name], field, encode(value) if encode else value)
        return proto

    @staticmethod
    def from_proto(hparam_def, import_scope=None):
        """``HParams(hparam_def=hparam_def)``."""
        del import_scope
        return HParams(hparam_def=hparam_def)

    def _read_proto(self, hparam_def):
        for name, value in hparam_def.hparam.items():
            field = value.WhichOneof("kind")
            if field.endswith("_value"):
                read = getattr(value, field)
                items = None
            else:
                items = list(getattr(value, field).value)
            convert = {"int64": int, "bytes": lambda v: v.decode() if isinstance(v, bytes) else v}.get(
                field.split("_")[0], lambda v: v
            )
            self.add_hparam(name, convert(read) if items is None else [convert(v) for v in items])

    def __contains__(self, key):
        return key in self._hparam_types

    def __str__(self):
        # "name=value,..." that parse() reads back: lists print as [v1, v2]
        return ",".join(f"{name}={value}" for name, value in self.values().items())

    def __repr__(self):
        return f"{type(self).__name__}({sorted(self.values().items())})"


def _proto_kind(name, kind):
    for types, field in _PROTO_KINDS:
        if issubclass(kind, types):
            return field
    raise NpuArgumentTypeError(
        f"HParams.to_proto: hyperparameter {name} is a {kind.__name__}; an HParamDef holds bools, ints, floats and "
        "strings (or lists of them)"
    )
