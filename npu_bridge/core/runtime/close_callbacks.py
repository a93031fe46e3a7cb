"""Clean-up steps that run in ``npu_close`` (at interpreter exit), before the system shuts down.

Capabilities that hold process resources (the dump writer's report, the profiler's files) register here; the
session layer's ``npu_close`` runs them, newest first.
"""

import threading

from npu_bridge.core.runtime import log

_callbacks = []
_lock = threading.Lock()


def register(callback):
    """Registers ``callback()`` to run in ``npu_close``."""
    with _lock:
        _callbacks.append(callback)


def run_all():
    """Runs and forgets every registered callback, newest first; a failing one is logged and the rest still run."""
    with _lock:
        callbacks = list(reversed(_callbacks))
        _callbacks.clear()
    for callback in callbacks:
        try:
            callback()
        except Exception:  # each clean-up step runs whatever the others did
            log.logger.exception("npu_close: clean-up step %r failed", callback)
