"""npu_bridge: Ascend NPU TensorFlow 1 scripts on CPU and GPU with TensorFlow 2.x.

``import npu_bridge``:
  * selects legacy Keras (``TF_USE_LEGACY_KERAS=1``, from the tf-keras package) unless the user chose,
    so ``tf.compat.v1.layers`` and Keras-in-Session work;
  * configures the ``npu_bridge`` logger from ASCEND_GLOBAL_LOG_LEVEL / ASCEND_SLOG_PRINT_TO_STDOUT;
  * loads the C++ library once (ops, kernels and the NpuOptimizer Grappler pass);
  * installs the session bridge (see ``npu_bridge.session_bridge``);
  * provides ``tf.estimator`` when TensorFlow ships none (``npu_bridge.tf_estimator``; removed in TF 2.16);
  * registers ``npu_close`` to run at interpreter exit.

None of this happens in the ``npu-run`` launcher (``python -m npu_bridge.launch`` or the ``npu-run``
command): it only starts rank processes and would pay seconds and half a gigabyte for TensorFlow.
"""

import atexit as _atexit
import os as _os
import sys as _sys

__version__ = "0.1.0"


def _runs_launcher():
    argv = list(getattr(_sys, "orig_argv", ()))
    if "-m" in argv:
        return argv[argv.index("-m") + 1:argv.index("-m") + 2] == ["npu_bridge.launch"]
    return bool(_sys.argv) and _os.path.basename(_sys.argv[0]) == "npu-run"


if not _runs_launcher():
    _os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

    from npu_bridge import log as _log

    _log.configure()

    from npu_bridge import native_library as _native_library

    _native_library.load()

    from npu_bridge import resource as _resource
    from npu_bridge import session_bridge as _session_bridge

    _session_bridge.install()

    from npu_bridge.tf_estimator import install as _estimator_install

    _estimator_install.install()
    _atexit.register(_resource.npu_close)
