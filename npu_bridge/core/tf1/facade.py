"""The ``tensorflow`` module user code gets in the TF1 mode.

Every attribute is looked up in ``tensorflow.compat.v1`` first (``tf.placeholder``, ``tf.Session``,
``tf.layers``, ``tf.estimator`` as npu_bridge provides it), then in the real module (``tf.python``,
``tf.__version__``); ``tf.contrib`` and ``tf.examples`` are the mode's shims. Nothing is copied: each name is
looked up once, when first used, and kept.
"""

import types


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
            self.__dict__[name] = value
            return value
        raise AttributeError(f"module 'tensorflow' (tensorflow.compat.v1 in the TF1 mode) has no attribute {name!r}")

    def __dir__(self):
        real = self.__dict__["_npu_real"]
        return sorted(set(dir(real.compat.v1)) | set(self.__dict__) - {"_npu_real"})
