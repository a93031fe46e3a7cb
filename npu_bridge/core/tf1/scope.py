"""Which files are user code, the code that gets TensorFlow 1.x in the TF1 mode.

A file is user code when it lies under a user root and not under an installed-package directory. The user roots
are the script's directory (``sys.path[0]`` once the script runs), the working directory, the other ``sys.path``
entries (``PYTHONPATH``'s among them) and the ``NPU_BRIDGE_TF1_PATH`` entries; installed packages are every
``site-packages`` / ``dist-packages`` directory, the standard library and npu_bridge itself. The ``__main__``
module is always user code. So a training script and the local modules it imports (``models/resnet.py``) get
TensorFlow 1.x, while tf_keras, tf_slim, tensorflow_hub and npu_bridge keep TensorFlow 2.
"""

import os
import sys
import sysconfig

from npu_bridge.core.tf1 import environment

_PACKAGE_DIRECTORIES = ("site-packages", "dist-packages")
_NPU_BRIDGE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class UserCode:
    """Decides whether a file is user code; remembers the answer per file.

    Args:
      script_directory: the directory of the script run (None: ``sys.path[0]``, read at the first question).
      environ: the environment to read ``NPU_BRIDGE_TF1_PATH`` from.
    """

    def __init__(self, script_directory=None, environ=None):
        self._script_directory = script_directory
        self._environ = os.environ if environ is None else environ
        self._roots = None
        self._excluded = None
        self._answers = {}

    def roots(self):
        """The user roots (real paths), in order."""
        if self._roots is None:
            script = self._script_directory if self._script_directory is not None else (sys.path[0] or os.getcwd())
            given = [script, os.getcwd(), *(p for p in sys.path if p)]
            given += [p for p in self._environ.get(environment.PATH_VARIABLE, "").split(os.pathsep) if p]
            paths = sysconfig.get_paths()
            self._excluded = tuple(
                os.path.realpath(p) for p in {paths["stdlib"], paths["platstdlib"], _NPU_BRIDGE} if p
            )
            roots = [os.path.realpath(p) for p in given if not _is_package_directory(p)]
            roots = [r for r in roots if not any(_below(r, e) for e in self._excluded)]
            self._roots = tuple(r for r in dict.fromkeys(roots) if r != environment.SITE_DIRECTORY)
        return self._roots

    def contains(self, filename):
        """True when the module in ``filename`` is user code."""
        answer = self._answers.get(filename)
        if answer is None:
            answer = self._answers[filename] = self._decide(filename)
        return answer

    def _decide(self, filename):
        if not filename or _is_package_directory(filename):
            return False
        path = os.path.realpath(filename)
        roots = self.roots()
        if any(_below(path, excluded) for excluded in self._excluded):
            return False
        return any(_below(path, root) for root in roots)


def _is_package_directory(path):
    parts = os.path.normpath(path).split(os.sep)
    return any(part in _PACKAGE_DIRECTORIES for part in parts)


def _below(path, directory):
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)
