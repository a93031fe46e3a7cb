"""Keras optimizer updates keep float32 under a mixed precision mode, as the fused kernels on Ascend do.

The Keras 2.6 optimizers Ascend's TF2 scripts were written for update each variable with one fused kernel
(``ResourceApplyAdam``, ...), which Ascend's mixed precision lists keep in float32. tf_keras 2.21's optimizers
write the same update as element-wise ops (``m + (g - m) * (1 - beta_1)``, ``sqrt(v) + epsilon``, ...). Following
the fp16 gradient, those would compute in fp16, where Adam's second moment underflows to 0 and its epsilon (1e-7)
rounds to 0, so that the update divides by about 0 and training diverges. ``install`` builds every tf_keras
optimizer update in ``keep_dtype_scope()``, so it computes in float32 as the fused kernel does. The legacy
optimizers (``tf.keras.optimizers.legacy``, which user code's ``tf.keras.optimizers.Adam`` ... are: ``keras26``)
call the fused kernels themselves; these updates are those of the new ones installed packages and
``tf.keras.optimizers.experimental`` build.
"""

import functools
import threading

from tf_keras.src.optimizers import optimizer as keras_optimizer

from npu_bridge.core.compute.attr_scopes import keep_dtype_scope

_lock = threading.Lock()
_METHODS = ("_update_step", "_update_step_xla")


def install():
    """Wraps tf_keras' per-variable update methods (once per process)."""
    with _lock:
        for name in _METHODS:
            method = getattr(keras_optimizer.Optimizer, name)
            if not getattr(method, "_npu_keep_dtype", False):
                setattr(keras_optimizer.Optimizer, name, _in_keep_dtype_scope(method))


def _in_keep_dtype_scope(method):
    @functools.wraps(method)
    def update(self, *args, **kwargs):
        with keep_dtype_scope():
            return method(self, *args, **kwargs)

    update._npu_keep_dtype = True
    return update
