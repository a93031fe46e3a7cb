"""The ``__import__`` wrapper that gives user code its own ``tensorflow``.

``sys.modules['tensorflow']`` is shared by everything in the process, so the mode cannot replace it: libraries
must keep TensorFlow 2. Instead every ``import`` statement goes through ``builtins.__import__``; for an import of
``tensorflow`` or ``tensorflow.<...>`` by user code (``is_user(globals)``), ``resolve`` decides what the statement
gets. Imports by everything else, and relative imports, go to the original ``__import__`` untouched.
(``importlib.import_module`` does not pass through here: it always gets the real module.)
"""

import builtins

_original = None
_is_user = None
_resolve = None


def install(is_user, resolve):
    """Wraps ``builtins.__import__`` (once per process).

    Args:
      is_user: function(globals of the importing module) -> True for user code.
      resolve: function(name, globals, locals, fromlist, original_import) -> what a user import of ``name``
        (``tensorflow`` or below it) returns.
    """
    global _original, _is_user, _resolve
    _is_user, _resolve = is_user, resolve
    if builtins.__import__ is not _import:
        _original = builtins.__import__
        builtins.__import__ = _import


def installed():
    """True when the wrapper is in place."""
    return builtins.__import__ is _import


def _import(name, globals=None, locals=None, fromlist=(), level=0):  # __import__'s own signature
    if level == 0 and name.partition(".")[0] == "tensorflow" and globals and _is_user(globals):
        return _resolve(name, globals, locals, fromlist, _original)
    return _original(name, globals, locals, fromlist, level)
