"""Calling a function on a module right after its first import finishes (or at once, if it is imported already).

For changes to a library that must be in place before user code subclasses its classes, without importing the
library early (importing tf_keras at start-up would cost every script a second).
"""

import importlib.abc
import importlib.util
import sys
import threading

_lock = threading.Lock()
_waiting = {}  # module name -> [callback]


def when_imported(name, callback):
    """Calls ``callback(module)`` once module ``name`` is imported: now if it is, else right after its import."""
    with _lock:
        module = sys.modules.get(name)
        if module is None:
            _waiting.setdefault(name, []).append(callback)
            if _finder not in sys.meta_path:
                sys.meta_path.insert(0, _finder)
            return
    callback(module)


class _AfterImportFinder(importlib.abc.MetaPathFinder):
    """Finds a waited-for module as usual and runs its callbacks once its code has run."""

    def find_spec(self, fullname, path=None, target=None):  # the finder protocol
        with _lock:
            if fullname not in _waiting:
                return None
            callbacks = _waiting.pop(fullname)
            if not _waiting and _finder in sys.meta_path:
                sys.meta_path.remove(_finder)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run_module = spec.loader.exec_module

        def exec_then_call(module):
            run_module(module)
            for callback in callbacks:
                callback(module)

        spec.loader.exec_module = exec_then_call  # this loader instance serves only this import
        return spec


_finder = _AfterImportFinder()
