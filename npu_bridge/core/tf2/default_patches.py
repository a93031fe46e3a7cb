"""What ``NpuDeviceHandle.as_default()`` changes in TensorFlow, process-wide, as the adapter does.

- ``tf.function`` drops ``jit_compile`` / ``experimental_compile``: there is no XLA on the NPU, so a script's
  XLA request never reached a compiler there either (said once).
- ``tf.device(...)`` keeps the current device: the adapter ignores device requests, which is why scripts that
  pin a strategy or their ops to ``/gpu:0`` or ``/cpu:0`` run on NPU hosts. Here the current device is the
  backend's default one.
Nested ``tf.function`` calls need no change here: TensorFlow runs (and its function inliner inlines) them, where
the adapter inlined them as Python because the NPU's graph engine cannot call functions.
"""

import contextlib
import threading

import tensorflow as tf

from npu_bridge.core.runtime import log

_lock = threading.Lock()
_installed = {}  # (module, attribute) -> TensorFlow's original
_XLA_ARGUMENTS = ("jit_compile", "experimental_compile")


def npu_compat_function(func=None, *args, **kwargs):
    """``tf.function`` without XLA: ``jit_compile`` / ``experimental_compile`` are dropped (said once).

    Args:
      func, *args, **kwargs: as ``tf.function``'s.
    Returns:
      What ``tf.function`` returns.
    """
    for name in _XLA_ARGUMENTS:
        if kwargs.pop(name, None):
            log.info_once(
                ("npu_device-xla", name),
                "npu_device: tf.function(%s=True) is ignored, as on the NPU, which has no XLA",
                name,
            )
    return _installed.get(("tensorflow", "function"), tf.function)(func, *args, **kwargs)


def install():
    """Applies the changes (once per process)."""
    with _lock:
        if _installed:
            return
        _replace(tf, "function", npu_compat_function)
        for module in (tf, tf.compat.v1, tf.compat.v2):
            _replace(module, "device", _ignored_device_request)


def current_device_scope():
    """A context manager that keeps the current device (what device requests become)."""
    return contextlib.nullcontext()


def _replace(module, name, value):
    _installed[(module.__name__, name)] = getattr(module, name)
    setattr(module, name, value)


def _ignored_device_request(device_name):
    log.info_once(
        ("npu_device-device", str(device_name)),
        "npu_device: tf.device(%r) keeps the current device, as on the NPU, where the adapter ignores device requests",
        device_name,
    )
    return current_device_scope()
