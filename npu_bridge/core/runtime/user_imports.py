"""The one ``__import__`` wrapper that gives user code imports of its own (the TF1 mode, the TF2 adapter).

``sys.modules['tensorflow']`` and ``sys.modules['keras']`` are shared by everything in the process, so neither
can be replaced: installed libraries must keep TensorFlow 2 and Keras 3. Instead every ``import`` statement goes
through ``builtins.__import__``, and a *route* redirects what the statement gets when user code imports one of
the route's top-level names. Routes are tried newest first; a route that has nothing of its own for an import
passes it on (``proceed``) to the older routes and then to the original ``__import__``. Imports by everything
else, and relative imports, go to the original untouched.

A route of user code (``calls_too``) also answers that code's ``importlib.import_module(name)`` calls, with what
``import name as m`` written at the call would bind (the zoo's vendored vega library looks up
``importlib.import_module('tensorflow.losses')``); every other call gets the real module.
"""

import builtins
import collections
import functools
import importlib
import sys
import threading

Route = collections.namedtuple("Route", "name top_names is_user resolve calls_too")

_lock = threading.Lock()
_routes = ()  # newest first
_original = None
_original_import_module = None


def add_route(name, top_names, is_user, resolve, calls_too=False):
    """Adds a route (once per name and process) and installs the wrapper.

    Args:
      name: the route's name ("tf1", "tf2").
      top_names: the top-level module names it redirects (``{"tensorflow"}``).
      is_user: function(globals of the importing module) -> True for user code.
      resolve: function(name, globals, locals, fromlist, proceed) -> what the statement gets; ``proceed`` takes
        ``__import__``'s arguments and imports through the older routes.
      calls_too: the route also answers ``importlib.import_module`` calls of the code ``is_user`` accepts.
    Returns:
      False when a route of that name was there already.
    """
    global _routes, _original, _original_import_module
    with _lock:
        if has_route(name):
            return False
        _routes = (Route(name, frozenset(top_names), is_user, resolve, calls_too), *_routes)
        if builtins.__import__ is not _import:
            _original = builtins.__import__
            builtins.__import__ = _import
        if calls_too and importlib.import_module is not _import_module:
            _original_import_module = importlib.import_module
            importlib.import_module = _import_module
        return True


def has_route(name):
    """True when a route of that name is installed."""
    return any(route.name == name for route in _routes)


def _import(name, globals=None, locals=None, fromlist=(), level=0):  # __import__'s own signature
    return _through(_routes, name, globals, locals, fromlist, level)


def _through(routes, name, globals, locals, fromlist, level):
    if level == 0 and globals:
        top = name.partition(".")[0]
        for index, route in enumerate(routes):
            if top in route.top_names and route.is_user(globals):
                proceed = functools.partial(_through, routes[index + 1 :])
                return route.resolve(name, globals, locals, fromlist, proceed)
    return _original(name, globals, locals, fromlist, level)


def _import_module(name, package=None):  # importlib.import_module's own signature
    caller = sys._getframe(1).f_globals
    if isinstance(name, str) and not name.startswith("."):
        top = name.partition(".")[0]
        for index, route in enumerate(_routes):
            if route.calls_too and top in route.top_names and route.is_user(caller):
                proceed = functools.partial(_through, _routes[index + 1 :])
                return _leaf(route.resolve(name, caller, None, None, proceed), name)
    return _original_import_module(name, package)


def _leaf(module, name):
    """What ``import a.b.c as m`` binds, given the ``a`` that ``import a.b.c`` bound: ``a.b.c`` by attributes,
    each falling back to ``sys.modules`` as the statement's does."""
    parts = name.split(".")
    for depth in range(1, len(parts)):
        try:
            module = getattr(module, parts[depth])
        except AttributeError:
            module = sys.modules.get(".".join(parts[: depth + 1]))
            if module is None:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name) from None
    return module
