"""SciPy modules that SciPy 1.8 made private, given back under their old paths for ``--py-compat``.

TF1-era graph models import ``eigsh`` from ``scipy.sparse.linalg.eigen.arpack``; SciPy keeps that code as
``scipy.sparse.linalg._eigen.arpack`` and turned ``scipy.sparse.linalg.eigen`` into a plain module, so the import
fails ("is not a package"). ``install()`` makes each old path (``MOVED``) an alias of the module at its new home
(``module_aliases``), and its parent a package that can hold it. Nothing SciPy still provides under a name is
replaced.
"""

import importlib.abc
import importlib.machinery
import sys

from npu_bridge.core.runtime import module_aliases

# old module path -> (the module SciPy keeps its code in now, the public module to import from instead)
MOVED = {"scipy.sparse.linalg.eigen.arpack": ("scipy.sparse.linalg._eigen.arpack", "scipy.sparse.linalg")}
_PARENTS = {path.rpartition(".")[0] for path in MOVED}


class _ParentFinder(importlib.abc.MetaPathFinder):
    """Lets the parents of ``MOVED`` paths hold submodules."""

    def find_spec(self, fullname, path, target=None):
        if fullname in _PARENTS:
            spec = importlib.machinery.PathFinder.find_spec(fullname, path)
            if spec is not None and spec.submodule_search_locations is None:
                spec.loader = _Parent(spec.loader)
                return spec
        return None


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
    """Adds the aliases and the parents' finder (once). ``tell(old, public)`` hears each old path imported."""
    for name in _PARENTS:
        module = sys.modules.get(name)
        if module is not None and not hasattr(module, "__path__"):
            module.__path__ = []  # imported already: let it hold the moved children
    if not any(isinstance(finder, _ParentFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _ParentFinder())
    for old, (target, public) in MOVED.items():
        module_aliases.alias_package(old, target, lambda name, public=public: tell(name, public))
