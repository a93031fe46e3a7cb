"""``tf.contrib.training.HParams`` for the TF1 mode: named hyperparameters with typed overrides.

Written here from the behaviour TensorFlow 1.x documents: hyperparameters are attributes (``hparams.lr``), created
by the constructor's keyword arguments or ``add_hparam``; ``parse("lr=0.3,layers=[64,32],name=big")``,
``set_hparam``, ``override_from_dict`` and ``parse_json`` change them, converting each new value to the type of the
value it replaces (an int may become a float parameter, nothing else changes type; a list stays a list);
``values()`` / ``to_json()`` give them back.
"""

import json
import numbers
import re

from npu_bridge.core.runtime.errors import NpuArgumentError

_ASSIGNMENT = re.compile(r"\s*(?P<name>[A-Za-z_]\w*)\s*=\s*(?P<value>\[[^\]]*\]|[^,]*)\s*(?:,|$)")


def _cast(name, value, like):
    """``value`` as the type of ``like`` (the current value of hyperparameter ``name``)."""
    if isinstance(like, bool):
        if isinstance(value, bool):
            return value
    elif isinstance(like, numbers.Integral):
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            return int(value)
    elif isinstance(like, numbers.Real):
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            return float(value)
    elif isinstance(like, str):
        if isinstance(value, str):
            return value
    else:
        return value
    raise NpuArgumentError(
        f"hyperparameter {name!r} is a {type(like).__name__} ({like!r}); cannot set it to {value!r} "
        f"({type(value).__name__})"
    )


def _parse_scalar(name, text, like):
    text = text.strip()
    if isinstance(like, bool):
        value = {"true": True, "1": True, "false": False, "0": False}.get(text.lower())
    elif isinstance(like, (numbers.Integral, numbers.Real)):
        kind = int if isinstance(like, numbers.Integral) else float
        try:
            value = kind(text)
        except ValueError:
            value = None
    else:
        return text
    if value is None:
        raise NpuArgumentError(f"hyperparameter {name!r} is a {type(like).__name__}; cannot parse {text!r} as one")
    return value


class HParams:
    """Named hyperparameters.

    Args:
      hparam_def: not supported (a protocol buffer of TensorFlow 1.x); must be None.
      model_structure: anything; returned by ``get_model_structure()``.
      **kwargs: the hyperparameters and their initial values.
    Raises:
      NpuArgumentError: ``hparam_def`` given, or a name is taken by a method.
    """

    def __init__(self, hparam_def=None, model_structure=None, **kwargs):
        if hparam_def is not None:
            raise NpuArgumentError("HParams(hparam_def=...) is not supported: pass the values as keyword arguments")
        self._names = {}  # in order of creation
        self._model_structure = model_structure
        for name, value in kwargs.items():
            self.add_hparam(name, value)

    def add_hparam(self, name, value):
        """Adds hyperparameter ``name`` with ``value``.

        Raises:
          NpuArgumentError: it exists already, or the name is taken by an attribute of HParams.
        """
        if name in self._names or hasattr(self, name):
            raise NpuArgumentError(f"hyperparameter name {name!r} is already used")
        self._names[name] = None
        setattr(self, name, list(value) if isinstance(value, list) else value)

    def set_hparam(self, name, value):
        """Sets hyperparameter ``name`` to ``value``, converted to its type.

        Raises:
          NpuArgumentError: no such hyperparameter, or ``value`` cannot have its type (or list-ness).
        """
        current = self._current(name)
        if isinstance(current, list):
            if not isinstance(value, (list, tuple)):
                raise NpuArgumentError(f"hyperparameter {name!r} is a list; cannot set it to {value!r}")
            like = current[0] if current else None
            setattr(self, name, [_cast(name, v, like) if current else v for v in value])
            return
        if isinstance(value, (list, tuple)):
            raise NpuArgumentError(f"hyperparameter {name!r} is not a list; cannot set it to {value!r}")
        setattr(self, name, _cast(name, value, current))

    def del_hparam(self, name):
        """Removes hyperparameter ``name`` (nothing happens when there is none)."""
        if name in self._names:
            del self._names[name]
            delattr(self, name)

    def parse(self, values):
        """Overrides hyperparameters from ``"name=value,name=[v1,v2],..."``; returns self.

        Raises:
          NpuArgumentError: malformed text, an unknown name, or a value that does not parse as its type.
        """
        position = 0
        text = values.strip()
        while position < len(text):
            match = _ASSIGNMENT.match(text, position)
            if not match or match.end() == position:
                raise NpuArgumentError(f"cannot parse hyperparameters {values!r} at {text[position:]!r}")
            name, raw = match.group("name"), match.group("value").strip()
            current = self._current(name)
            if raw.startswith("["):
                if not isinstance(current, list):
                    raise NpuArgumentError(f"hyperparameter {name!r} is not a list; cannot set it to {raw}")
                like = current[0] if current else ""
                items = [t for t in raw[1:-1].split(",") if t.strip()]
                setattr(self, name, [_parse_scalar(name, t, like) for t in items])
            else:
                if isinstance(current, list):
                    raise NpuArgumentError(f"hyperparameter {name!r} is a list; give [values], not {raw!r}")
                setattr(self, name, _parse_scalar(name, raw, current))
            position = match.end()
        return self

    def override_from_dict(self, values_dict):
        """Sets every hyperparameter of ``values_dict`` (``set_hparam``); returns self."""
        for name, value in values_dict.items():
            self.set_hparam(name, value)
        return self

    def parse_json(self, values_json):
        """Overrides hyperparameters from a JSON object; returns self."""
        return self.override_from_dict(json.loads(values_json))

    def values(self):
        """The hyperparameters as a dict."""
        return {name: getattr(self, name) for name in self._names}

    def to_json(self, indent=None, separators=None, sort_keys=False):
        """The hyperparameters as JSON."""
        return json.dumps(self.values(), indent=indent, separators=separators, sort_keys=sort_keys)

    def get(self, key, default=None):
        """The value of ``key``, or ``default`` when there is no such hyperparameter."""
        return getattr(self, key) if key in self._names else default

    def get_model_structure(self):
        """The ``model_structure`` given to the constructor."""
        return self._model_structure

    def __contains__(self, key):
        return key in self._names

    def __str__(self):
        return str(sorted(self.values().items()))

    def __repr__(self):
        return f"{type(self).__name__}({self})"

    def _current(self, name):
        if name not in self._names:
            raise NpuArgumentError(f"unknown hyperparameter {name!r}; known: {sorted(self._names)}")
        return getattr(self, name)
