"""The ``__import__`` wrapper that gives user code the modules ``legacy_paths`` maps.

``sys.modules['keras']`` is Keras 3 for every installed package, so it cannot change. Every ``import`` statement
goes through ``builtins.__import__``: one of user code (``user_code``) that names ``keras...``,
``tensorflow.python.keras...`` or a moved TensorFlow-internal module gets what ``legacy_modules`` gives; everything
else, and relative imports, go to the previous ``__import__`` untouched (the TF1 mode's wrapper, when it is on).
``importlib.import_module`` does not pass through here.
"""

import builtins
import threading

from npu_bridge.core.tf2 import legacy_modules, legacy_paths, user_code

_lock = threading.Lock()
_previous = None


def install():
    """Wraps ``builtins.__import__`` (once per process: a wrapper installed after this one, e.g. the TF1 mode's,
    already calls it)."""
    global _previous
    with _lock:
        if _previous is None:
            _previous = builtins.__import__
            builtins.__import__ = _import


def installed():
    """True when the wrapper is installed."""
    return _previous is not None


def _import(name, globals=None, locals=None, fromlist=(), level=0):  # __import__'s own signature
    if level == 0 and name.partition(".")[0] in legacy_paths.TOP_NAMES and globals and user_code.contains(globals):
        found = legacy_modules.import_for_user(name, fromlist or ())
        if found is not None:
            return found
    return _previous(name, globals, locals, fromlist, level)
