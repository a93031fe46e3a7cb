"""Keras subclasses written against the private methods of Keras 2.6 / TensorFlow 1.15 keep working on tf_keras 2.21.

``BatchNormalization._moments(inputs, reduction_axes, keep_dims)``: EfficientNet's and MnasNet's
``TpuBatchNormalization`` (9 model directories of the zoo, TF1 and TF2) override it with that signature, which
tf_keras 2.21 calls with ``mask=`` as well (a TypeError at the first call). Such an override is called without
``mask`` when the layer has no mask, as Keras 2.6 called it; with a mask it raises, naming the class, since the
override cannot apply one. Overrides that take ``mask`` (or ``**kwargs``) are left as they are. Nothing is imported
early: the change is made when tf_keras' batch normalization module is first imported.
"""

import functools
import inspect

from npu_bridge.core.runtime import after_import
from npu_bridge.core.runtime.errors import NpuArgumentError

_MODULE = "tf_keras.src.layers.normalization.batch_normalization"


def install():
    """Adapts old-signature ``_moments`` overrides of every BatchNormalization subclass defined from now on."""
    after_import.when_imported(_MODULE, _adapt_subclasses)


def _adapt_subclasses(module):
    base = module.BatchNormalizationBase
    if "_npu_bridge_moments" in vars(base):
        return
    own = vars(base).get("__init_subclass__")  # a classmethod object, if the class defines one

    def init_subclass(cls, **kwargs):
        if own is not None:
            own.__func__(cls, **kwargs)
        else:
            super(base, cls).__init_subclass__(**kwargs)
        override = vars(cls).get("_moments")
        if override is not None and not _takes_mask(override):
            cls._moments = _without_mask(cls.__name__, override)

    base.__init_subclass__ = classmethod(init_subclass)
    base._npu_bridge_moments = True


def _takes_mask(function):
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):  # not introspectable: leave it alone
        return True
    return any(p.name == "mask" or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


def _without_mask(class_name, override):
    @functools.wraps(override)
    def _moments(self, inputs, reduction_axes, keep_dims, mask=None):
        if mask is not None:
            raise NpuArgumentError(
                f"{class_name}._moments(inputs, reduction_axes, keep_dims) was written for Keras 2.6, which passed no "
                "mask; this layer was called with a mask, which the override cannot apply: call it without one"
            )
        return override(self, inputs, reduction_axes, keep_dims)

    return _moments
