"""Starting every child Python in a mode: a folder holding a ``sitecustomize.py`` put first on ``PYTHONPATH``.

The TF1 mode (``NPU_BRIDGE_TF1=1``) and the TF2 adapter's import mapping (``NPU_BRIDGE_TF2=1``) each have such a
folder; its ``sitecustomize`` switches the mode on before the child's script runs (a shell wrapper's
``python3 train.py``, a multiprocessing child started with spawn), then runs the ``sitecustomize`` it hides, if
any. This module imports no TensorFlow (the launcher uses it).
"""

import os
import runpy
import sys


def for_children(environ, variable, site_directory):
    """Returns a copy of ``environ`` in which child Pythons start with ``variable=1`` and ``site_directory`` first
    on ``PYTHONPATH`` (once)."""
    result = dict(environ)
    result[variable] = "1"
    # empty entries stay: Python reads one as the working directory (CANN's set_env.sh leaves one at the end)
    existing = result.get("PYTHONPATH", "")
    paths = [p for p in existing.split(os.pathsep) if p != site_directory] if existing else []
    result["PYTHONPATH"] = os.pathsep.join([site_directory, *paths])
    return result


def run_hidden_sitecustomize():
    """Runs the first ``sitecustomize.py`` on ``sys.path`` outside npu_bridge (the one a mode's folder hides), as
    Python would have."""
    for entry in sys.path:
        if not entry or os.path.abspath(entry).startswith(_PACKAGE_ROOT):
            continue
        candidate = os.path.join(entry, "sitecustomize.py")
        if os.path.isfile(candidate):
            runpy.run_path(candidate, run_name="sitecustomize")
            return


_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep
