"""The variables that turn the TF1 mode on, in this process and in every Python process it starts.

``NPU_BRIDGE_TF1=1`` asks for the mode; a directory holding a ``sitecustomize.py`` (``SITE_DIRECTORY``) put first
on ``PYTHONPATH`` makes every child Python (a shell wrapper's ``python3 train.py``, a multiprocessing child)
install it before its script runs. This module imports no TensorFlow (the launcher uses it).
"""

import os

from npu_bridge.core.runtime import child_python

MODE_VARIABLE = "NPU_BRIDGE_TF1"
QUIET_VARIABLE = "NPU_BRIDGE_TF1_QUIET"
PATH_VARIABLE = "NPU_BRIDGE_TF1_PATH"
PY_COMPAT_VARIABLE = "NPU_BRIDGE_TF1_PY_COMPAT"
SITE_DIRECTORY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "site")


def requested(environ=None):
    """True when ``NPU_BRIDGE_TF1`` is ``1``."""
    return (os.environ if environ is None else environ).get(MODE_VARIABLE, "").strip() == "1"


def quiet(environ=None):
    """True when ``NPU_BRIDGE_TF1_QUIET`` is ``1`` (the mode's start line is not shown)."""
    return (os.environ if environ is None else environ).get(QUIET_VARIABLE, "").strip() == "1"


def py_compat(environ=None):
    """True when ``NPU_BRIDGE_TF1_PY_COMPAT`` is ``1`` (the Python-level compatibility patches are wanted)."""
    return (os.environ if environ is None else environ).get(PY_COMPAT_VARIABLE, "").strip() == "1"


def for_children(environ):
    """Returns a copy of ``environ`` in which Python processes start in the TF1 mode.

    Args:
      environ: an environment (a mapping).
    Returns:
      The new environment: ``NPU_BRIDGE_TF1=1`` and ``SITE_DIRECTORY`` first on ``PYTHONPATH``.
    """
    return child_python.for_children(environ, MODE_VARIABLE, SITE_DIRECTORY)
