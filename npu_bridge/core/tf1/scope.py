"""Which files are user code in the TF1 mode: the ones that get TensorFlow 1.x.

The rule is ``runtime/user_code``'s, with roots: a file must also lie under a user root. The user roots are the
script's directory (``sys.path[0]`` once the script runs), the working directory, the other ``sys.path`` entries
(``PYTHONPATH``'s among them) and the ``NPU_BRIDGE_TF1_PATH`` entries, less the installed-package directories, the
standard library and this project's packages (npu_bridge holds the mode's own ``site`` directory). So a training
script and the local modules it imports (``models/resnet.py``) get TensorFlow 1.x, while tf_keras, tf_slim,
tensorflow_hub and npu_bridge keep TensorFlow 2.
"""

import os
import sys

from npu_bridge.core.runtime import user_code
from npu_bridge.core.tf1 import environment


def tf1_user_code(script_directory=None, environ=None):
    """The TF1 mode's user code.

    Args:
      script_directory: the directory of the script run (None: ``sys.path[0]``, read at the first question).
      environ: the environment to read ``NPU_BRIDGE_TF1_PATH`` from (None: ``os.environ``).
    Returns:
      A ``user_code.UserCode`` whose roots are the ones above.
    """
    environ = os.environ if environ is None else environ

    def roots():
        script = script_directory if script_directory is not None else (sys.path[0] or os.getcwd())
        given = [script, os.getcwd(), *(p for p in sys.path if p)]
        given += [p for p in environ.get(environment.PATH_VARIABLE, "").split(os.pathsep) if p]
        found = [os.path.realpath(p) for p in given if not user_code.is_installed_path(p)]
        libraries = user_code.library_directories()
        found = [r for r in found if not any(user_code.below(r, library) for library in libraries)]
        return list(dict.fromkeys(found))

    return user_code.UserCode(roots)
