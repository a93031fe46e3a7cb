"""A package importable under a second name, imported only when that name is (``alias_package``).

Importing ``old`` or ``old.x.y`` gives the module object of ``new`` / ``new.x.y`` itself (one module, one set of
classes), imported at that moment; nothing is imported before. A name the other finders resolve is left to them.
An optional ``on_import(name)`` hears each name the first time it is imported this way.
"""

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import threading

_lock = threading.Lock()
_packages = {}  # old package name -> (new package name, on_import or None)


def alias_package(old, new, on_import=None):
    """Makes ``import old[.sub...]`` give ``new[.sub...]`` from now on, unless ``old`` exists on its own.

    ``on_import(name)``, if given, is called with the old name of each module imported through the alias.
    """
    with _lock:
        _packages[old] = new, on_import
        if not any(isinstance(finder, _AliasFinder) for finder in sys.meta_path):
            sys.meta_path.insert(0, _AliasFinder())


def _target(fullname):
    for old, (new, on_import) in _packages.items():
        if fullname == old or fullname.startswith(old + "."):
            return old, new, new + fullname[len(old) :], on_import
    return None, None, None, None


class _AliasFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):  # the finder protocol
        with _lock:
            old, package, new, on_import = _target(fullname)
        if new is None:
            return None
        if fullname == old and importlib.machinery.PathFinder.find_spec(fullname, path) is not None:
            return None  # the package has that name itself
        if fullname != old and getattr(sys.modules.get(old), "__name__", None) != package:
            return None  # a submodule of a package that has the old name itself
        # no search locations of its own: the module keeps its own ``__path__`` (a plain module none)
        return importlib.util.spec_from_loader(fullname, _Alias(new, on_import))


class _Alias(importlib.abc.Loader):
    def __init__(self, new, on_import):
        self._new, self._on_import = new, on_import

    def create_module(self, spec):
        if self._on_import is not None:
            self._on_import(spec.name)
        return importlib.import_module(self._new)

    def exec_module(self, module):
        pass  # the module ran under its own name
