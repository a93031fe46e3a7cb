"""npu_bridge: Ascend NPU TensorFlow 1 scripts on CPU and GPU with TensorFlow 2.x.

``import npu_bridge``:
  * selects legacy Keras (``TF_USE_LEGACY_KERAS=1``, from the tf-keras package) unless the user chose,
    so ``tf.compat.v1.layers`` and Keras-in-Session work;
  * configures the ``npu_bridge`` logger from ASCEND_GLOBAL_LOG_LEVEL / ASCEND_SLOG_PRINT_TO_STDOUT;
  * loads the C++ library once (ops, kernels and the NpuOptimizer Grappler pass);
  * installs the session bridge (see ``npu_bridge.session_bridge``);
  * provides ``tf.estimator`` when TensorFlow ships none (``npu_bridge.tf_estimator``; removed in TF 2.16);
  * registers ``npu_close`` to run at interpreter exit.
"""

import atexit as _atexit
import os as _os

__version__ = "0.1.0"

_os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

from npu_bridge import log as _log  # noqa: E402

_log.configure()

from npu_bridge import native_library as _native_library  # noqa: E402

_native_library.load()

from npu_bridge import resource as _resource  # noqa: E402
from npu_bridge import session_bridge as _session_bridge  # noqa: E402

_session_bridge.install()

from npu_bridge.tf_estimator import install as _estimator_install  # noqa: E402

_estimator_install.install()
_atexit.register(_resource.npu_close)
