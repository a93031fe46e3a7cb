"""Switching npu_bridge on in a process that uses TensorFlow, and only in such a process.

``import npu_bridge`` does not import TensorFlow: the launcher (``npu-run``) and the artifact readers use the
package without it. npu_bridge switches on as soon as TensorFlow is in the process: at once when TensorFlow was
imported first, otherwise right after TensorFlow's own import finishes (a meta-path hook on the module
``tensorflow``). Switching on:

  * selects legacy Keras (``TF_USE_LEGACY_KERAS=1``, from the tf-keras package) unless the user chose, so
    ``tf.compat.v1.layers`` and Keras-in-Session work (``npu_bridge.core.runtime.keras_selection``: also when
    TensorFlow was imported first, as long as it has not given Keras 3 for ``tf.keras`` yet; if it has, switching
    on fails with ``KerasVersionError`` saying what to change);
  * configures the ``npu_bridge`` logger from ASCEND_GLOBAL_LOG_LEVEL / ASCEND_SLOG_PRINT_TO_STDOUT;
  * loads the C++ library once (ops, kernels and the NpuOptimizer Grappler pass);
  * wraps ``BaseSession.__init__`` so every session passes through the session bridge
    (``npu_bridge.core.session.bridge``);
  * provides ``tf.estimator`` when TensorFlow ships none (``npu_bridge.core.tf_estimator``);
  * registers ``npu_close`` to run at interpreter exit.

The TensorFlow import that switches npu_bridge on may come from one of npu_bridge's own modules while that
module is still half imported, so switching on imports none of them: the session bridge and ``npu_close``
are imported when a session is created and at exit.
"""

import atexit
import importlib.abc
import importlib.util
import sys
import threading

from npu_bridge.core.runtime import keras_selection, log

_lock = threading.RLock()
_state = {"active": False, "error": None}


def activate():
    """Switches npu_bridge on in this process (idempotent; imports TensorFlow).

    Raises:
      NativeLibraryError: the C++ library is missing or was built for another TensorFlow; raised again by
        every later call.
      KerasVersionError: TensorFlow already gave Keras 3 for ``tf.keras``; raised again by every later call.
    """
    with _lock:
        if _state["error"] is not None:
            raise _state["error"]
        if _state["active"]:
            return
        _state["active"] = True
        try:
            keras_selection.select()
            log.configure()
            from npu_bridge.core.runtime import native_library  # pylint: disable=import-outside-toplevel
            from npu_bridge.core.tf_estimator import install  # pylint: disable=import-outside-toplevel

            native_library.load()
            _wrap_session_init()
            install.install()
            atexit.register(_close_at_exit)
        except BaseException as e:
            _state["error"] = e
            raise


def _wrap_session_init():
    from tensorflow.python.client import session as tf_session  # pylint: disable=import-outside-toplevel

    original_init = tf_session.BaseSession.__init__
    if getattr(original_init, "_npu_bridge_wrapped", False):
        return

    def __init__(self, target="", graph=None, config=None):  # noqa: N807 (it replaces a class's __init__)
        from npu_bridge.core.session import bridge  # pylint: disable=import-outside-toplevel

        bridge.create_session(original_init, self, target, graph, config)

    __init__.__doc__ = original_init.__doc__
    __init__._npu_bridge_wrapped = True  # pylint: disable=protected-access
    __init__.__wrapped__ = original_init
    tf_session.BaseSession.__init__ = __init__


def _close_at_exit():
    from npu_bridge.core.runtime import resource  # pylint: disable=import-outside-toplevel

    resource.npu_close()


class _TensorFlowImportHook(importlib.abc.MetaPathFinder):
    """Finds the module ``tensorflow`` as usual and switches npu_bridge on once its import has finished."""

    def find_spec(self, fullname, path=None, target=None):  # noqa: ARG002 (the finder protocol)
        if fullname != "tensorflow":
            return None
        _remove_hook()
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        load_tensorflow = spec.loader.exec_module

        def exec_then_activate(module):
            keras_selection.select(before_import=True)
            load_tensorflow(module)
            activate()

        spec.loader.exec_module = exec_then_activate  # this loader instance serves only this import
        return spec


_hook = _TensorFlowImportHook()


def _remove_hook():
    if _hook in sys.meta_path:
        sys.meta_path.remove(_hook)


def activate_with_tensorflow():
    """Switches npu_bridge on now if TensorFlow is imported, else as soon as it is; never imports it itself."""
    log.configure()
    if "tensorflow" in sys.modules:
        activate()
    elif _hook not in sys.meta_path:
        sys.meta_path.insert(0, _hook)
