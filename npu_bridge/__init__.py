"""npu_bridge: Ascend NPU TensorFlow 1 scripts on CPU and GPU with TensorFlow 2.x.

Layout: the modules users import by upstream's paths (``npu_bridge.npu_init``, ``npu_bridge.estimator...``,
``npu_bridge.hccl...`` and the other folders here) are thin facades; the implementation lives in
``npu_bridge.core``, one folder per domain.

``import npu_bridge`` does not import TensorFlow. npu_bridge switches itself on (C++ library, session bridge,
``tf.estimator``, legacy Keras; see ``npu_bridge.core.activation``) as soon as TensorFlow is imported
in the process, before or after this package. The ``npu-run`` launcher therefore imports no TensorFlow.

``npu_bridge.NpuBridgeError`` is the base of every npu_bridge error; ``npu_bridge.errors`` holds all the classes.
"""

from npu_bridge.core import activation as _activation
from npu_bridge.core.runtime import interrupt as _interrupt
from npu_bridge.core.runtime.errors import NpuBridgeError
from npu_bridge.core.runtime.version import PACKAGE_VERSION
from npu_bridge.core.tf1 import environment as _environment

__version__ = PACKAGE_VERSION
__all__ = ["NpuBridgeError", "__version__"]

_interrupt.install()  # a rank npu-run started: Ctrl-C ends it with one line (npu_bridge.core.runtime.interrupt)
_activation.activate_with_tensorflow()
if _environment.requested():  # NPU_BRIDGE_TF1=1: user code that imports tensorflow after this gets TF 1.x
    from npu_bridge.core.tf1 import mode as _mode

    _mode.install_if_requested()
