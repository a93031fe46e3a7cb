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
    """Finds a waited-for module as usual and runs its callbacks once its code has run.

    Callbacks are taken when the module is executed, not when it is found: ``importlib.util.find_spec`` only asks
    (TensorFlow asks where ``tf_keras`` is before importing it), and a spec found that way is never executed.
    """

    def find_spec(self, fullname, path=None, target=None):  # the finder protocol
        with _lock:
            if fullname not in _waiting or fullname in _finding.names:
                return None
        _finding.names = _finding.names | {fullname}
        try:
            spec = importlib.util.find_spec(fullname)  # the other finders' answer
        finally:
            _finding.names = _finding.names - {fullname}
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run_module = spec.loader.exec_module

        def exec_then_call(module):
            run_module(module)
            with _lock:
                callbacks = _waiting.pop(fullname, [])
                if not _waiting and _finder in sys.meta_path:
                    sys.meta_path.remove(_finder)
            for callback in callbacks:
                callback(module)

        spec.loader.exec_module = exec_then_call  # this loader instance serves only this spec
        return spec


class _Finding(threading.local):
    names = frozenset()  # the modules this thread is looking up through the other finders


_finding = _Finding()
_finder = _AfterImportFinder()
