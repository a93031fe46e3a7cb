"""Which importing modules are user code: the script and the files it brings along, not installed libraries.

A module is user code when it is ``__main__`` or its file lies outside every ``site-packages`` /
``dist-packages`` directory, the standard library and npu_bridge's own packages (``npu_bridge``, ``npu_device``,
``hccl``). So ``train.py``, its ``models/resnet.py`` and a copied ``npu_convert_dropout.py`` are user code; Keras
3, tf_keras, TensorFlow and every other installed package are not. (The TF1 mode's rule, ``tf1/scope.py``, also
asks for the file to lie under a ``sys.path`` entry, which every imported file does.)
"""

import os
import sysconfig

_INSTALLED = ("site-packages", "dist-packages")
_REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
_OWN_PACKAGES = ("npu_bridge", "npu_device", "hccl")

_answers = {}  # file name -> bool
_excluded = []


def contains(module_globals):
    """True when the module whose globals these are is user code.

    Args:
      module_globals: the ``globals()`` of the importing module (what ``__import__`` receives).
    """
    if module_globals.get("__name__") == "__main__":
        return True
    filename = module_globals.get("__file__")
    if not isinstance(filename, str) or not filename:
        return False
    answer = _answers.get(filename)
    if answer is None:
        answer = _answers[filename] = _decide(filename)
    return answer


def _decide(filename):
    if not _excluded:
        paths = sysconfig.get_paths()
        own = [os.path.join(_REPOSITORY, package) for package in _OWN_PACKAGES]
        _excluded.extend(os.path.realpath(p) for p in {paths["stdlib"], paths["platstdlib"], *own} if p)
    path = os.path.realpath(filename)
    if any(part in _INSTALLED for part in path.split(os.sep)):
        return False
    return not any(path == d or path.startswith(d.rstrip(os.sep) + os.sep) for d in _excluded)
