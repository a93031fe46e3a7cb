"""``npu_device.compat``: TF1 scripts in a TF2 process, and the ``npu_device.compat.v1`` import tree.

``enable_v1()`` switches TensorFlow to its 1.x behaviour (graph mode, V1 variables and control flow), after
which sessions with an ``NpuOptimizer`` config are npu_bridge sessions. ``npu_device.compat.v1.<path>`` is the
module ``npu_bridge.<path>`` itself (the same module object, not a copy), so ``from
npu_device.compat.v1.npu_init import *`` gives npu_bridge's TF1 API. Unlike the adapter, which removes them
from that tree, the TF1 loss-scale optimizer and managers stay available.
"""

import importlib
import importlib.abc
import importlib.util
import os
import sys
import threading

import tensorflow as tf

from npu_bridge.core.tf2 import device

ALIAS_PREFIX = "npu_device.compat.v1"
TARGET = "npu_bridge"

_lock = threading.Lock()


def enable_v1():
    """Turns TensorFlow's 1.x behaviour on for the rest of the process, as the adapter's ``enable_v1``.

    When a device is open, its id becomes ``ASCEND_DEVICE_ID`` (the TF1 API reads the device id from there).
    """
    handle = device.global_npu_ctx() or device.opened()
    if handle is not None:
        os.environ["ASCEND_DEVICE_ID"] = str(handle.device_id)
    tf.compat.v1.disable_v2_behavior()


class _ExistingModuleLoader(importlib.abc.Loader):
    """Loads an alias as the already imported module it names."""

    def __init__(self, module):
        self._module = module

    def create_module(self, spec):
        return self._module

    def exec_module(self, module):
        """Nothing to run: the module is already imported."""


class AliasFinder(importlib.abc.MetaPathFinder):
    """Finds ``npu_device.compat.v1`` as ``npu_bridge`` and ``npu_device.compat.v1.<path>`` as
    ``npu_bridge.<path>``."""

    def find_spec(self, fullname, path=None, target=None):
        """Returns the alias's spec, or None for other names."""
        if fullname != ALIAS_PREFIX and not fullname.startswith(ALIAS_PREFIX + "."):
            return None
        real = TARGET + fullname[len(ALIAS_PREFIX) :]
        try:
            module = importlib.import_module(real)
        except ModuleNotFoundError as error:
            if error.name != real:
                raise
            return None
        return importlib.util.spec_from_loader(fullname, _ExistingModuleLoader(module))


def install_alias_tree():
    """Makes ``npu_device.compat.v1.<path>`` importable (once per process)."""
    with _lock:
        if not any(isinstance(finder, AliasFinder) for finder in sys.meta_path):
            sys.meta_path.insert(0, AliasFinder())
