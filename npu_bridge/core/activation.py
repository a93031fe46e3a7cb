"""Switching npu_bridge on in a process that uses TensorFlow, and only in such a process.

``import npu_bridge`` does not import TensorFlow: the launcher (``npu-run``) and the artifact readers use the
package without it. npu_bridge switches on as soon as TensorFlow is in the process: at once when TensorFlow was
imported first, otherwise right after TensorFlow's own import finishes (a meta-path hook on the module
``tensorflow``). Switching on:

  * selects legacy Keras (``TF_USE_LEGACY_KERAS=1``, from the tf-keras package) unless the user chose, so
    ``tf.compat.v1.layers`` and Keras-in-Session work (``npu_bridge.core.runtime.keras_selection``: also when
    TensorFlow was imported first, as long as it has not given Keras 3 for ``tf.keras`` yet; if it has, switching
    on fails with ``KerasVersionError`` saying what to change; a TF_USE_LEGACY_KERAS other than 1 / true / True /
    0 / false / False fails it with ``EnvironmentVariableError``);
  * configures the ``npu_bridge`` logger from ASCEND_GLOBAL_LOG_LEVEL / ASCEND_SLOG_PRINT_TO_STDOUT;
  * loads the C++ library once (ops, kernels and the NpuOptimizer Grappler pass);
  * wraps ``BaseSession.__init__`` so every session passes through the session bridge
    (``npu_bridge.core.session.bridge``);
  * provides ``tf.estimator`` when TensorFlow ships none (``npu_bridge.core.tf_estimator``);
  * adds back the names TensorFlow 2.21 moved that TF1-era code and tf_slim look for (``ops.Tensor``,
    ``tf_keras.legacy_tf_layers``, ...: ``npu_bridge.core.tf1.aliases``), so a script migrated by hand that uses
    tf_slim works as it does in the TF1 mode;
  * registers ``npu_close`` to run at interpreter exit;
  * moves the objects that exist by then (TensorFlow's modules, classes and functions) out of the cyclic garbage
    collector's reach (``gc.freeze()``): they last as long as the process, and walking them in every full
    collection and at exit costs each process 0.5-1 s of CPU. Objects made later are collected as usual;
    ``gc.unfreeze()`` gives the frozen ones back.

When npu_bridge was imported first, TensorFlow's import itself runs with its C++ start-up lines hidden (oneDNN,
CUDA drivers, CPU features; TensorFlow 2.21 prints them twice, its profiler extension carrying a second copy of
its logging): see ``log.hidden_tensorflow_startup``. Without a CUDA driver, the "failed call to cuInit" line of
TensorFlow's first GPU query is hidden too, in either import order (``_query_gpus_without_driver``).
``NPU_BRIDGE_TF_LOGS=1`` shows these lines; so does a failing import.

The TensorFlow import that switches npu_bridge on may come from one of npu_bridge's own modules while that
module is still half imported, so switching on imports none of them: the session bridge and ``npu_close``
are imported when a session is created and at exit.
"""

import atexit
import ctypes
import gc
import importlib.abc
import importlib.util
import sys
import threading

from npu_bridge.core.runtime import data_stack, keras_selection, log

_lock = threading.RLock()
_state = {"active": False, "error": None}


def activate():
    """Switches npu_bridge on in this process (idempotent; imports TensorFlow).

    Raises:
      NativeLibraryError: the C++ library is missing or was built for another TensorFlow; raised again by
        every later call.
      KerasVersionError: TensorFlow already gave Keras 3 for ``tf.keras``; raised again by every later call.
      EnvironmentVariableError: TF_USE_LEGACY_KERAS, ASCEND_GLOBAL_LOG_LEVEL or ASCEND_SLOG_PRINT_TO_STDOUT has a
        bad value; raised again by every later call.
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
            from npu_bridge.core.runtime import keras_overrides, native_library
            from npu_bridge.core.tf1 import aliases
            from npu_bridge.core.tf_estimator import install

            native_library.load()
            _query_gpus_without_driver()
            _wrap_session_init()
            install.install()
            aliases.add()
            keras_overrides.install()
            atexit.register(_close_at_exit)
            gc.freeze()  # see the module docstring
        except BaseException as e:
            _state["error"] = e
            raise


def set_npu_default_config():
    """Makes every session created from now on an NPU session, as ``from npu_bridge.npu_init import *`` does.

    Upstream's name for patching the session classes with ``decorator_tf_session``: switches npu_bridge on, then
    sessions created without an ``NpuOptimizer`` entry get ``npu_config_proto``'s default one. Safe to call more
    than once.
    """
    activate()
    from npu_bridge.core.session import bridge

    bridge.inject_npu_config(True)


def _query_gpus_without_driver():
    """Makes TensorFlow's first GPU query now, with its output hidden, when there is no CUDA driver to find.

    A CUDA build of TensorFlow on a machine without the driver (libcuda) says so among its start-up lines ("Could
    not find cuda drivers on your machine, GPU will not be used"), and its first GPU query -- by the first session,
    the first ``tf.cond`` built in graph mode, or npu_bridge's backend choice -- logs the same fact again as an
    ERROR line, "failed call to cuInit". Without a driver that query finds nothing whenever it runs, so it runs
    here, hidden like the start-up lines; TensorFlow does not repeat it. It goes through the C API, which leaves
    Python's eager context alone (creating that context this early, as ``tf.config.list_physical_devices`` does,
    broke graph building in examples/mixed_precision_loss_scale.py: "Attempting to capture an EagerTensor without
    building a function"). With a driver nothing happens here: the query initializes CUDA, which must see the
    script's CUDA_VISIBLE_DEVICES, and a failure then is a real error.
    """
    import tensorflow as tf

    try:
        if not tf.sysconfig.get_build_info().get("is_cuda_build"):
            return
    except Exception:  # an unusual build: leave the query to TensorFlow
        return
    try:
        ctypes.CDLL("libcuda.so.1")
        return  # there is a driver
    except OSError:
        pass
    with log.hidden_tensorflow_startup():
        try:
            from tensorflow.python import pywrap_tfe

            pywrap_tfe.TF_ListPhysicalDevices()
        except Exception:  # TensorFlow's own first query reports it again
            pass


def _wrap_session_init():
    from tensorflow.python.client import session as tf_session

    original_init = tf_session.BaseSession.__init__
    if getattr(original_init, "_npu_bridge_wrapped", False):
        return

    def __init__(self, target="", graph=None, config=None):  # noqa: N807 (it replaces a class's __init__)
        from npu_bridge.core.session import bridge

        bridge.create_session(original_init, self, target, graph, config)

    __init__.__doc__ = original_init.__doc__
    __init__._npu_bridge_wrapped = True
    __init__.__wrapped__ = original_init
    tf_session.BaseSession.__init__ = __init__


def _close_at_exit():
    from npu_bridge.core.session import resource

    resource.npu_close()


class _TensorFlowImportHook(importlib.abc.MetaPathFinder):
    """Finds the module ``tensorflow`` as usual and switches npu_bridge on once its import has finished."""

    def find_spec(self, fullname, path=None, target=None):  # the finder protocol
        if fullname != "tensorflow":
            return None
        _remove_hook()
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        load_tensorflow = spec.loader.exec_module

        def exec_then_activate(module):
            try:
                keras_selection.select(before_import=True)  # a bad TF_USE_LEGACY_KERAS fails TensorFlow's import
                log.tensorflow_startup_shown()  # and so does a bad NPU_BRIDGE_TF_LOGS
            except BaseException as e:
                with _lock:
                    _state["error"] = e  # npu_bridge stays off: every later activate() raises it again
                raise
            data_stack.call_with_room(load_then_activate, module)  # the import's calls nest deep: room for them

        def load_then_activate(module):
            with log.hidden_tensorflow_startup():
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
