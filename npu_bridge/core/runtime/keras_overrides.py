"""Keras subclasses written against the private methods of Keras 2.6 / TensorFlow 1.15 keep working on tf_keras 2.21.

``BatchNormalization._moments(inputs, reduction_axes, keep_dims)``: EfficientNet's and MnasNet's
``TpuBatchNormalization`` (9 model directories of the zoo, TF1 and TF2) override it with that signature, which
tf_keras 2.21 calls with ``mask=`` as well (a TypeError at the first call). Such an override is called without
``mask`` when the layer has no mask, as Keras 2.6 called it; with a mask it raises, naming the class, since the
override cannot apply one. Overrides that take ``mask`` (or ``**kwargs``) are left as they are.

``Model(input=..., output=...)``: Keras 2.0-2.2 still took Keras 1's argument names for a functional model, with a
warning (U-Net and other zoo scripts of that era call it so); tf_keras refuses them. They are taken as ``inputs`` /
``outputs`` when those are not given, and the first use is logged once.

``Conv._convolution_op(inputs, kernel)``: Keras 2.3-2.6 convolution layers kept their convolution in that attribute,
and subclasses that change the kernel first (weight standardization, DeepLabV3's ``conv2d_ws``) call it;
tf_keras names it ``convolution_op``. The old name reads the new method, unless a layer sets it itself.

A scalar model output as the loss: Keras 2.2 scripts (YAD2K, keras-yolo ports, DifferentiableBinarization) compute
the whole loss in a ``Lambda`` layer and compile with ``loss=lambda y_true, y_pred: y_pred``. Keras 2.2 passed the
scalar through; tf_keras' graph-mode training, whose target placeholder for a scalar output has no known rank, fails
building the loss (``squeeze_or_expand_dimensions`` indexes the last dimension of the scalar). A prediction of
known rank 0 is returned with its target as they are, as there is nothing to squeeze against a scalar; everything
else (other shapes, the weighting of losses) goes through tf_keras unchanged.

Nothing is imported early: each change is made when its tf_keras module is first imported.
"""

import functools
import inspect

from npu_bridge.core.runtime import after_import, log
from npu_bridge.core.runtime.errors import NpuArgumentError

_MODULE = "tf_keras.src.layers.normalization.batch_normalization"
_FUNCTIONAL_MODULE = "tf_keras.src.engine.functional"
_CONV_MODULE = "tf_keras.src.layers.convolutional.base_conv"
_LOSSES_MODULE = "tf_keras.src.utils.losses_utils"
_KERAS_1_NAMES = {"input": "inputs", "output": "outputs"}


def install():
    """Adapts old-signature ``_moments`` overrides of every BatchNormalization subclass defined from now on, makes
    ``Model`` take Keras 1's ``input`` / ``output``, gives convolution layers Keras 2.6's ``_convolution_op``, and
    lets a scalar model output be the loss."""
    after_import.when_imported(_MODULE, _adapt_subclasses)
    after_import.when_imported(_FUNCTIONAL_MODULE, _take_keras_1_names)
    after_import.when_imported(_CONV_MODULE, _give_convolution_op)
    after_import.when_imported(_LOSSES_MODULE, _keep_scalar_predictions)


def _keep_scalar_predictions(module):
    original = module.squeeze_or_expand_dimensions
    if getattr(original, "_npu_bridge_keeps_scalars", False):
        return

    @functools.wraps(original)
    def squeeze_or_expand_dimensions(y_pred, y_true=None, sample_weight=None):
        if y_true is not None and getattr(y_pred, "shape", None) is not None and y_pred.shape.rank == 0:
            return (y_pred, y_true) if sample_weight is None else (y_pred, y_true, sample_weight)
        return original(y_pred, y_true, sample_weight)

    squeeze_or_expand_dimensions._npu_bridge_keeps_scalars = True
    module.squeeze_or_expand_dimensions = squeeze_or_expand_dimensions


class _ConvolutionOp:
    """Keras 2.6's ``Conv._convolution_op``: the layer's ``convolution_op`` (no ``__set__``: a layer that assigns
    the attribute itself, as Keras 2.6's ``build`` did, keeps its own)."""

    def __get__(self, layer, owner=None):
        return self if layer is None else layer.convolution_op


def _give_convolution_op(module):
    if "_convolution_op" not in vars(module.Conv):
        module.Conv._convolution_op = _ConvolutionOp()


def _take_keras_1_names(module):
    model, functional = module.training_lib.Model, module.Functional
    if "_npu_bridge_keras_1_names" in vars(model):
        return
    original_new = model.__new__

    def __new__(cls, *args, **kwargs):  # noqa: N807 - replaces Model.__new__
        return original_new(cls, *args, **_renamed(kwargs))

    model.__new__ = staticmethod(functools.wraps(original_new)(__new__))
    for cls in (model, functional):
        cls.__init__ = _renaming_init(cls.__init__)
    model._npu_bridge_keras_1_names = True


def _renaming_init(original):
    @functools.wraps(original)
    def __init__(self, *args, **kwargs):  # noqa: N807 - replaces a Model's __init__
        return original(self, *args, **_renamed(kwargs))

    return __init__


def _renamed(kwargs):
    """``kwargs`` with Keras 1's ``input`` / ``output`` as ``inputs`` / ``outputs`` (when those are not given)."""
    old = [name for name in _KERAS_1_NAMES if name in kwargs and _KERAS_1_NAMES[name] not in kwargs]
    if not old:
        return kwargs
    log.warn_once(
        ("keras-1-model-names",),
        "Model(input=..., output=...) uses Keras 1's argument names: taken as inputs= / outputs= (write those)",
    )
    kwargs = dict(kwargs)
    for name in old:
        kwargs[_KERAS_1_NAMES[name]] = kwargs.pop(name)
    return kwargs


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
