"""The ``tensorflow`` module user code gets in the TF1 mode.

Every attribute is looked up in ``tensorflow.compat.v1`` first (``tf.placeholder``, ``tf.Session``,
``tf.layers``, ``tf.estimator`` as npu_bridge provides it), then in the real module (``tf.python``,
``tf.__version__``); ``tf.contrib`` and ``tf.examples`` are the mode's shims. Nothing is copied: each name is
looked up once, when first used, and kept.

A submodule whose TensorFlow 2 module has names its ``compat.v1`` module lacks (``tf.summary.create_file_writer``,
``tf.nn.gelu``, ``tf.random.set_seed``) is a ``V1WithV2Names`` module: ``compat.v1``'s names first, then
TensorFlow 2's, each such use said once (scripts of the TF 1.15 / 2.x transition mix both).
"""

import types

from npu_bridge.core.runtime import log

_told = set()


class TensorFlow1(types.ModuleType):
    """A module named ``tensorflow`` over the real TensorFlow 2 module.

    Args:
      real: the real ``tensorflow`` module.
      extras: {name: module} the facade adds (``contrib``, ``examples``).
    """

    def __init__(self, real, extras):
        super().__init__("tensorflow", "TensorFlow 1.x for user code (npu_bridge TF1 mode): tensorflow.compat.v1")
        self.__dict__.update(extras)
        self.__dict__["_npu_real"] = real
        for name in ("__file__", "__path__", "__version__", "__git_version__", "__compiler_version__"):
            if hasattr(real, name):
                self.__dict__[name] = getattr(real, name)

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
            self.__dict__[name] = value
            return value
        raise AttributeError(f"module 'tensorflow' (tensorflow.compat.v1 in the TF1 mode) has no attribute {name!r}")

    def __dir__(self):
        real = self.__dict__["_npu_real"]
        return sorted(set(dir(real.compat.v1)) | set(self.__dict__) - {"_npu_real"})


def _with_v2_names(v1_value, v2_value, path):
    """``v1_value``, or a ``V1WithV2Names`` over it when both are different modules."""
    modules = isinstance(v1_value, types.ModuleType) and isinstance(v2_value, types.ModuleType)
    if not modules or v1_value is v2_value or path.startswith("_"):
        return v1_value
    return V1WithV2Names(v1_value, v2_value, path)


class V1WithV2Names(types.ModuleType):
    """A ``compat.v1`` submodule that also answers the names only its TensorFlow 2 module has.

    Args:
      v1: the ``tensorflow.compat.v1`` submodule (asked first).
      v2: the TensorFlow 2 submodule of the same name.
      path: its path below ``tf`` (e.g. "summary"), for the message.
    """

    def __init__(self, v1, v2, path):
        super().__init__(v1.__name__, v1.__doc__)
        self.__dict__["_npu"] = (v1, v2, path)

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        v1, v2, path = self.__dict__["_npu"]
        try:
            value = _with_v2_names(getattr(v1, name), getattr(v2, name, None), f"{path}.{name}")
        except AttributeError:
            try:
                value = getattr(v2, name)
            except AttributeError:
                raise AttributeError(f"module 'tf.{path}' (TF1 mode) has no attribute {name!r}") from None
            if f"{path}.{name}" not in _told:
                _told.add(f"{path}.{name}")
                log.logger.warning(
                    "tf.%s.%s is a TensorFlow 2 name (tensorflow.compat.v1 has none): the TF1 mode gives TensorFlow "
                    "2's, which may expect eager execution (see docs/tf1_mode.md)",
                    path,
                    name,
                )
        self.__dict__[name] = value
        return value

    def __dir__(self):
        v1, v2, _ = self.__dict__["_npu"]
        return sorted(set(dir(v1)) | set(dir(v2)))
