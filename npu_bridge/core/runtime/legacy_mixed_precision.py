"""``tf.keras.mixed_precision.experimental`` as TensorFlow 1.15 to 2.6 had it, on tf_keras 2.21's mixed precision.

TensorFlow's official models (the zoo's BERT, Transformer, ResNet and NCF directories) set their policy with
``tf.keras.mixed_precision.experimental.Policy('mixed_float16', loss_scale=...)`` and ``set_policy``; tf_keras
2.21 removed the module. ``add_experimental`` puts it back on a ``mixed_precision`` API module, add-only (the TF2
adapter on ``tf.keras``'s, the TF1 mode on ``tf.compat.v1.keras``'s):

- ``Policy(name, loss_scale="auto")``: tf_keras' ``Policy`` that also keeps a loss scale: "auto" is "dynamic" for
  ``mixed_float16`` and None otherwise; "dynamic", None or a positive number are kept as given (2.6 returned a
  ``LossScale`` object from ``loss_scale``; here it is the value). Its config is tf_keras' (a saved layer's policy
  comes back as tf_keras' ``Policy``).
- ``set_policy(policy)`` / ``global_policy()`` / ``get_layer_policy(layer)``: tf_keras' global policy functions.
- ``LossScaleOptimizer(optimizer, loss_scale)``: tf_keras' ``LossScaleOptimizer`` (an instance of it), with 2.6's
  second argument: "dynamic" (start at 2**15, grow every 2000 finite steps) or a positive number (a fixed scale).

``Model.compile`` wraps the optimizer as tf_keras does for ``mixed_float16`` (a dynamic scale); a fixed
``loss_scale`` of the policy is not applied by ``compile`` (TensorFlow 2.6 applied it): wrap the optimizer in
``LossScaleOptimizer(optimizer, 128)`` for a fixed scale.
"""

import numbers
import types

from tf_keras.src.mixed_precision import loss_scale_optimizer
from tf_keras.src.mixed_precision import policy as keras_policy

from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError

_AUTO = "auto"
_DYNAMIC = "dynamic"


def _checked_loss_scale(owner, loss_scale, allow_none):
    if loss_scale == _DYNAMIC or (loss_scale is None and allow_none):
        return loss_scale
    if isinstance(loss_scale, numbers.Real) and not isinstance(loss_scale, bool) and loss_scale > 0:
        return float(loss_scale)
    allowed = '"dynamic", None or a positive number' if allow_none else '"dynamic" or a positive number'
    raise NpuArgumentError(f"{owner}: loss_scale must be {allowed}, got {loss_scale!r}")


class Policy(keras_policy.Policy):
    """A dtype policy with TensorFlow 2.6's ``loss_scale`` (see the module docstring).

    Raises:
      NpuArgumentError: ``loss_scale`` is not "auto", "dynamic", None or a positive number.
    """

    def __init__(self, name, loss_scale=_AUTO):
        super().__init__(name)
        if loss_scale == _AUTO:
            loss_scale = _DYNAMIC if name == "mixed_float16" else None
        self._loss_scale = _checked_loss_scale("Policy", loss_scale, allow_none=True)

    @property
    def loss_scale(self):
        """The loss scale: "dynamic", a number, or None (no loss scaling)."""
        return self._loss_scale

    def __repr__(self):
        return f'<Policy "{self.name}", loss_scale={self._loss_scale!r}>'


class LossScaleOptimizer(loss_scale_optimizer.LossScaleOptimizer):
    """tf_keras' ``LossScaleOptimizer`` built from TensorFlow 2.6's ``(optimizer, loss_scale)`` arguments.

    Raises:
      NpuArgumentError: ``loss_scale`` is not "dynamic" or a positive number.
    """

    def __init__(self, optimizer, loss_scale):
        loss_scale = _checked_loss_scale("LossScaleOptimizer", loss_scale, allow_none=False)
        if loss_scale == _DYNAMIC:
            super().__init__(optimizer)
        else:
            super().__init__(optimizer, dynamic=False, initial_scale=loss_scale)


def set_policy(policy):
    """Sets the global dtype policy (a ``Policy`` or a policy name), as ``tf.keras.mixed_precision.set_global_policy``.

    Raises:
      NpuArgumentTypeError: ``policy`` is neither a policy, a name nor None.
    """
    if policy is not None and not isinstance(policy, (str, keras_policy.Policy)):
        raise NpuArgumentTypeError(f"set_policy: policy must be a Policy or a policy name, got {policy!r}")
    keras_policy.set_global_policy(policy)


def get_layer_policy(layer):
    """The dtype policy of ``layer``."""
    return layer.dtype_policy


def add_experimental(mixed_precision):
    """Gives the ``mixed_precision`` module an ``experimental`` module holding the names above, unless it has one."""
    if "experimental" in vars(mixed_precision):
        return
    name = f"{mixed_precision.__name__}.experimental"
    module = types.ModuleType(name, "TensorFlow 2.6's experimental mixed precision API.")
    module.Policy = Policy
    module.LossScaleOptimizer = LossScaleOptimizer
    module.set_policy = set_policy
    module.global_policy = keras_policy.global_policy
    module.get_layer_policy = get_layer_policy
    mixed_precision.experimental = module
