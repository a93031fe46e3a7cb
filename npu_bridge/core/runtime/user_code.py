"""Which modules are user code: the script and the files it brings along, not installed libraries.

One rule for the TF1 mode and the TF2 adapter, which both give user code imports of its own (``user_imports``).
A module is user code when it is ``__main__``, or its file lies outside every ``site-packages`` /
``dist-packages`` directory, the standard library and this project's packages (``npu_bridge``, ``npu_device``,
``hccl``), is no package a packaging tool installed into a ``sys.path`` folder of another name (``pip install
--target libs``: the folder's ``*.dist-info`` / ``*.egg-info`` records list it), and, when the caller names roots,
lies below one of them. So ``train.py``, its ``models/resnet.py`` and a copied ``npu_convert_dropout.py`` are user
code; TensorFlow, tf_keras, tf_slim, Keras 3 and every other installed package are not.
"""

import functools
import os
import sys
import sysconfig
import threading

_INSTALLED = ("site-packages", "dist-packages")
_PROJECT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
_OWN_PACKAGES = ("npu_bridge", "npu_device", "hccl")


class UserCode:
    """Decides whether a module is user code; remembers the answer per file.

    Args:
      roots: None (any place outside the libraries counts), or a function returning the directories (real paths)
        user code must lie below; it is called at the first question, and again once ``sys.path`` changed (a
        script's ``sys.path.insert(0, '../lib')`` makes that folder's modules user code from then on).
    """

    def __init__(self, roots=None):
        self._roots_function = roots
        self._roots = None
        self._path_seen = None  # sys.path when the roots were found
        self._answers = {}
        self._lock = threading.Lock()

    def contains(self, module_globals):
        """True when the module whose globals these are is user code.

        Args:
          module_globals: the ``globals()`` of a module (what ``__import__`` receives).
        """
        if module_globals.get("__name__") == "__main__":
            return True
        return self.contains_file(module_globals.get("__file__"))

    def contains_file(self, filename):
        """True when the module in ``filename`` is user code (False for no file name)."""
        if not isinstance(filename, str) or not filename:
            return False
        if self._roots_function is not None and self._path_seen is not None and sys.path != self._path_seen:
            with self._lock:  # new roots may hold files refused before
                self._roots, self._path_seen = None, None
                self._answers = {name: answer for name, answer in self._answers.items() if answer}
        answer = self._answers.get(filename)
        if answer is None:
            answer = self._answers[filename] = self._decide(filename)
        return answer

    def _decide(self, filename):
        if is_installed_path(filename):
            return False
        path = os.path.realpath(filename)
        if any(below(path, library) for library in library_directories()):
            return False
        if is_distributed_file(path):
            return False
        if self._roots_function is None:
            return True
        with self._lock:
            if self._roots is None:
                self._path_seen = list(sys.path)
                self._roots = tuple(self._roots_function())
            roots = self._roots
        return any(below(path, root) for root in roots)


def is_installed_path(path):
    """True when ``path`` lies in a ``site-packages`` / ``dist-packages`` directory."""
    return any(part in _INSTALLED for part in os.path.normpath(path).split(os.sep))


def is_distributed_file(path):
    """True when ``path`` (a real path) belongs to a top-level module or package that the install records of the
    ``sys.path`` folder it lies in list."""
    for entry in list(sys.path):
        folder = os.path.realpath(entry or os.getcwd())
        if below(path, folder) and path != folder:
            top = os.path.relpath(path, folder).split(os.sep)[0]
            if top.split(".")[0] in distributed_names(folder):
                return True
    return False


@functools.cache
def distributed_names(folder):
    """The top-level module and package names that the ``*.dist-info`` / ``*.egg-info`` records in ``folder``
    list (a frozenset; empty for a folder without any, or one that cannot be read)."""
    names = set()
    try:
        records = [e.path for e in os.scandir(folder) if e.name.endswith((".dist-info", ".egg-info")) and e.is_dir()]
    except OSError:
        return frozenset()
    for record in records:
        for listing in ("RECORD", "top_level.txt"):  # RECORD: "path,hash,size" lines; top_level.txt: names
            try:
                with open(os.path.join(record, listing), encoding="utf-8", errors="replace") as f:
                    lines = f.read().splitlines()
            except OSError:
                continue
            for line in lines:
                first = line.split(",")[0].strip().split("/")[0]
                if first and not first.startswith(".") and not first.endswith((".dist-info", ".egg-info")):
                    names.add(first.split(".")[0])
    names.discard("__pycache__")
    return frozenset(names)


@functools.cache
def library_directories():
    """The real paths of the standard library and of this project's own packages."""
    paths = sysconfig.get_paths()
    own = [os.path.join(_PROJECT, package) for package in _OWN_PACKAGES]
    return tuple(os.path.realpath(p) for p in dict.fromkeys([paths["stdlib"], paths["platstdlib"], *own]) if p)


def below(path, directory):
    """True when ``path`` is ``directory`` or lies below it (both real paths)."""
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)
