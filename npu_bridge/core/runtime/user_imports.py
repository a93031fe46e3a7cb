"""The one ``__import__`` wrapper that gives user code imports of its own (the TF1 mode, the TF2 adapter).

``sys.modules['tensorflow']`` and ``sys.modules['keras']`` are shared by everything in the process, so neither
can be replaced: installed libraries must keep TensorFlow 2 and Keras 3. Instead every ``import`` statement goes
through ``builtins.__import__``, and a *route* redirects what the statement gets when user code imports one of
the route's top-level names. Routes are tried newest first; a route that has nothing of its own for an import
passes it on (``proceed``) to the older routes and then to the original ``__import__``. Imports by everything
else, and relative imports, go to the original untouched. (``importlib.import_module`` does not pass through
here: it always gets the real module.)
"""

import builtins
import collections
import functools
import threading

Route = collections.namedtuple("Route", "name top_names is_user resolve")

_lock = threading.Lock()
_routes = ()  # newest first
_original = None


def add_route(name, top_names, is_user, resolve):
    """Adds a route (once per name and process) and installs the wrapper.

    Args:
      name: the route's name ("tf1", "tf2").
      top_names: the top-level module names it redirects (``{"tensorflow"}``).
      is_user: function(globals of the importing module) -> True for user code.
      resolve: function(name, globals, locals, fromlist, proceed) -> what the statement gets; ``proceed`` takes
        ``__import__``'s arguments and imports through the older routes.
    Returns:
      False when a route of that name was there already.
    """
    global _routes, _original
    with _lock:
        if has_route(name):
            return False
        _routes = (Route(name, frozenset(top_names), is_user, resolve), *_routes)
        if builtins.__import__ is not _import:
            _original = builtins.__import__
            builtins.__import__ = _import
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
