"""The TF2 adapter ``npu_device`` (facade over ``npu_bridge.core.tf2``).

TF2 scripts written for Ascend run here unchanged::

    import npu_device
    npu_device.global_options().precision_mode = "allow_mix_precision"
    npu_device.open().as_default()

The device is a name over the backend that computes (cpu, gpu or the simulated Ascend backend); the options act
on every ``tf.function`` graph the script runs. See docs/tf2_adapter.md.
"""

import npu_bridge  # noqa: F401  (switches npu_bridge on)
from npu_bridge.core.tf2 import keras26 as _keras26
from npu_bridge.core.tf2 import legacy_imports as _legacy_imports
from npu_device import compat, configs, distribute, npu_device, ops, train
from npu_device.npu_device import *  # noqa: F403  (its __all__: open, global_options, gen_npu_ops, ...)

_legacy_imports.install()  # user code's Keras 2.6 / TensorFlow-internal imports from here on (docs/tf2_adapter.md)
_keras26.install()  # user code's tf.keras optimizers, 1-D fit inputs and __version__ as in Keras 2.6 (same page)

__all__ = ["compat", "configs", "distribute", "npu_device", "ops", "train", *npu_device.__all__]
