"""The ``tensorflow`` module user code gets in the TF1 mode.

Every attribute is looked up in ``tensorflow.compat.v1`` first (``tf.placeholder``, ``tf.Session``,
``tf.layers``, ``tf.estimator`` as npu_bridge provides it), then in the real module (``tf.python``); ``tf.contrib``
and ``tf.examples`` are the mode's shims. Nothing is copied: each name is looked up once, when first used, and kept.

A ``compat.v1`` submodule whose TensorFlow 2 module has names it lacks (``tf.summary.create_file_writer``,
``tf.nn.gelu``, ``tf.random.set_seed``) is a ``V1WithV2Names`` module: ``compat.v1``'s names first, then TensorFlow
2's, each such use said once (scripts of the TF 1.15 / 2.x transition mix both). So is a submodule with functions
that have shape parameters (``tf.manip``, ``tf.layers``): every function the facade and these modules hand out takes
integral floats as shape dimensions (``shapes``). The other submodules are ``compat.v1``'s own (``tf.logging``).
``submodule`` is what ``import tensorflow.<x>`` / ``from tensorflow.<x> import y`` of user code gets.

The version user code sees is TensorFlow 1.15's (``TF1_VERSION``), as the API it gets is 1.15's: scripts that
check for 1.x run. ``tf.GIT_VERSION`` / ``tf.version.GIT_VERSION`` / ``tf.__git_version__`` stay TensorFlow's own
(``v2.21.0-...``), so the real version stays in sight.
"""

import types

from npu_bridge.core.runtime import log
from npu_bridge.core.tf1 import shapes

# The last release of TensorFlow 1.15, whose API the mode gives
TF1_VERSION = "1.15.5"

_MISSING = object()

_told = set()


class TensorFlow1(types.ModuleType):
    """A module named ``tensorflow`` over the real TensorFlow 2 module.

    Args:
      real: the real ``tensorflow`` module.
      extras: {name: module} the facade adds (``contrib``, ``examples``).
    """

    def __init__(self, real, extras):
        super().__init__("tensorflow", "TensorFlow 1.x for user code (npu_bridge TF1 mode): tensorflow.compat.v1")
        for name in ("__file__", "__path__", "__git_version__", "__compiler_version__"):
            if hasattr(real, name):
                self.__dict__[name] = getattr(real, name)
        self.__dict__.update(__version__=TF1_VERSION, VERSION=TF1_VERSION, version=_version_module(real))
        self.__dict__.update(extras)
        self.__dict__["_npu_real"] = real
        self.__dict__["_npu_own"] = frozenset(extras) | {"version"}  # the names it sets itself

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        real = self.__dict__["_npu_real"]
        for source in (real.compat.v1, real):
            try:
                value = getattr(source, name)
            except AttributeError:
                continue
            if source is real.compat.v1:
                value = _with_v2_names(value, getattr(real, name, None), name)
            value = shapes.accepting_integral_floats(value, f"tf.{name}")
            self.__dict__[name] = value
            return value
        raise AttributeError(f"module 'tensorflow' (tensorflow.compat.v1 in the TF1 mode) has no attribute {name!r}")

    def __dir__(self):
        real = self.__dict__["_npu_real"]
        return sorted(set(dir(real.compat.v1)) | set(self.__dict__) - {"_npu_real", "_npu_own"})


def submodule(tensorflow1, parts):
    """The facade's module at ``tensorflow.<parts>``: what ``import tensorflow.<parts> as m`` and ``from
    tensorflow.<parts> import x`` of user code get.

    A path starting with a name the facade has of its own (a ``compat.v1`` name or an extra: ``nn``, ``train``,
    ``layers``, ``keras``, ``version``, ``compat``) follows the facade's attributes, so it gives what ``tf.<parts>``
    gives (``tensorflow.nn.rnn_cell`` is compat.v1's).

    Args:
      tensorflow1: the facade (a ``TensorFlow1``).
      parts: the path below ``tensorflow`` (``["nn", "rnn_cell"]``; ``[]`` for the facade itself).
    Returns:
      The module, or None where the facade has no module of its own at that path (``tensorflow.python.ops``,
      ``tensorflow.core``: TensorFlow's, to be imported as they are).
    """
    real, own = tensorflow1.__dict__["_npu_real"], tensorflow1.__dict__["_npu_own"]
    if parts and parts[0] not in own and not hasattr(real.compat.v1, parts[0]):
        return None
    module = tensorflow1
    for part in parts:
        module = getattr(module, part, None)
        if not isinstance(module, types.ModuleType):
            return None
    return module


def _version_module(real):
    """``tf.version`` for user code: compat.v1's, with ``VERSION`` the 1.15 one."""
    version = types.ModuleType("tensorflow.version", "TensorFlow 1.15's version, in npu_bridge's TF1 mode")
    source = real.compat.v1.version
    version.__dict__.update({name: getattr(source, name) for name in dir(source) if not name.startswith("_")})
    version.VERSION = TF1_VERSION
    return version


def _with_v2_names(v1_value, v2_value, path):
    """``v1_value``, or a ``V1WithV2Names`` over it when it is a module with something to add: TensorFlow 2 names
    (``v2_value`` is another module) or functions with shape parameters. Other modules stay as they are
    (``tf.logging.__dict__["INFO"]`` keeps working)."""
    if not isinstance(v1_value, types.ModuleType) or path.startswith("_"):
        return v1_value
    if not isinstance(v2_value, types.ModuleType) or v2_value is v1_value:
        if not shapes.module_takes_shapes(v1_value):
            return v1_value
        v2_value = None
    return V1WithV2Names(v1_value, v2_value, path)


class V1WithV2Names(types.ModuleType):
    """A ``compat.v1`` submodule that also answers the names only its TensorFlow 2 module has; its functions take
    integral floats as shape dimensions.

    Args:
      v1: the ``tensorflow.compat.v1`` submodule (asked first).
      v2: the TensorFlow 2 submodule of the same name (None: none, or the same module).
      path: its path below ``tf`` (e.g. "summary"), for the message.
    """

    def __init__(self, v1, v2, path):
        super().__init__(v1.__name__, v1.__doc__)
        self.__dict__["_npu"] = (v1, v2, path)

    def __getattr__(self, name):
        v1, v2, path = self.__dict__["_npu"]
        if name == "__all__":  # from tensorflow.nn import *: compat.v1's names (TensorFlow's list holds __path__)
            return [n for n in getattr(v1, "__all__", dir(v1)) if not n.startswith("_")]
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        try:
            value = _with_v2_names(getattr(v1, name), getattr(v2, name, None), f"{path}.{name}")
        except AttributeError:
            value = getattr(v2, name, _MISSING) if v2 is not None else _MISSING
            if value is _MISSING:
                raise AttributeError(f"module 'tf.{path}' (TF1 mode) has no attribute {name!r}") from None
            if f"{path}.{name}" not in _told:
                _told.add(f"{path}.{name}")
                log.logger.warning(
                    "tf.%s.%s is a TensorFlow 2 name (tensorflow.compat.v1 has none): the TF1 mode gives TensorFlow "
                    "2's, which may expect eager execution (see docs/tf1_mode.md)",
                    path,
                    name,
                )
        value = shapes.accepting_integral_floats(value, f"tf.{path}.{name}")
        self.__dict__[name] = value
        return value

    def __dir__(self):
        v1, v2, _ = self.__dict__["_npu"]
        return sorted(set(dir(v1)) | set(dir(v2) if v2 is not None else ()))
