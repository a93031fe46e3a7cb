"""SciPy modules that SciPy 1.8 made private, given back under their old paths for ``--py-compat``.

TF1-era graph models import ``eigsh`` from ``scipy.sparse.linalg.eigen.arpack``; SciPy keeps that code as
``scipy.sparse.linalg._eigen.arpack`` and turned ``scipy.sparse.linalg.eigen`` into a plain module, so the import
fails ("is not a package"). ``install()`` makes each old path (``MOVED``) import the module at its new home, and its
parent a package that can hold it. Nothing SciPy still provides under a name is replaced.
"""

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys

# old module path -> (the module SciPy keeps its code in now, the public module to import from instead)
MOVED = {"scipy.sparse.linalg.eigen.arpack": ("scipy.sparse.linalg._eigen.arpack", "scipy.sparse.linalg")}
_PARENTS = {path.rpartition(".")[0] for path in MOVED}


class _Finder(importlib.abc.MetaPathFinder):
    """Serves ``MOVED`` paths from their new homes, and lets their parents hold submodules."""

    def __init__(self, tell):
        self._tell = tell

    def find_spec(self, fullname, path, target=None):
        if fullname in MOVED and importlib.machinery.PathFinder.find_spec(fullname, path) is None:
            return importlib.util.spec_from_loader(fullname, _Moved(*MOVED[fullname], self._tell))
        if fullname in _PARENTS:
            spec = importlib.machinery.PathFinder.find_spec(fullname, path)
            if spec is not None and spec.submodule_search_locations is None:
                spec.loader = _Parent(spec.loader)
                return spec
        return None


class _Moved(importlib.abc.Loader):
    def __init__(self, target, public, tell):
        self._target, self._public, self._tell = target, public, tell

    def create_module(self, spec):
        self._tell(spec.name, self._public)
        return importlib.import_module(self._target)

    def exec_module(self, module):
        pass  # the module at the new home ran already


class _Parent(importlib.abc.Loader):
    """Runs a parent module as it is, then gives it an empty ``__path__`` so that the finder is asked for children."""

    def __init__(self, real):
        self._real = real

    def create_module(self, spec):
        return self._real.create_module(spec)

    def exec_module(self, module):
        self._real.exec_module(module)
        if not hasattr(module, "__path__"):
            module.__path__ = []


def install(tell):
    """Adds the finder (once). ``tell(old, new)`` is called the first time each old path is imported."""
    for name in _PARENTS:
        module = sys.modules.get(name)
        if module is not None and not hasattr(module, "__path__"):
            module.__path__ = []  # imported already: let it hold the moved children
    if not any(isinstance(finder, _Finder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _Finder(tell))
