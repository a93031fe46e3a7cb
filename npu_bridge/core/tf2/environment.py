"""The variables that map Keras 2.6 and TensorFlow-internal imports in every Python process started below
``npu-run --tf2`` or ``python -m npu_bridge.tf2``.

``NPU_BRIDGE_TF2=1`` asks for the mapping; ``SITE_DIRECTORY`` (holding a ``sitecustomize.py``) put first on
``PYTHONPATH`` makes every child Python install it before its script runs, so a zoo shell wrapper's
``python3 train.py`` runs as ``python -m npu_bridge.tf2 train.py`` would. This module imports no TensorFlow (the
launcher uses it).
"""

import os

from npu_bridge.core.runtime import child_python

MODE_VARIABLE = "NPU_BRIDGE_TF2"
PY_COMPAT_VARIABLE = "NPU_BRIDGE_TF2_PY_COMPAT"
SITE_DIRECTORY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "site")


def py_compat(environ=None):
    """True when ``NPU_BRIDGE_TF2_PY_COMPAT`` is ``1`` (the Python-level compatibility patches are wanted)."""
    return (os.environ if environ is None else environ).get(PY_COMPAT_VARIABLE, "").strip() == "1"


def for_children(environ):
    """Returns a copy of ``environ`` in which Python processes start with the mapping on (``NPU_BRIDGE_TF2=1`` and
    ``SITE_DIRECTORY`` first on ``PYTHONPATH``)."""
    return child_python.for_children(environ, MODE_VARIABLE, SITE_DIRECTORY)
