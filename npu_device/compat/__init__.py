"""Upstream module path ``npu_device.compat`` (facade): ``enable_v1()`` and ``v1``, which is npu_bridge's TF1
API (``from npu_device.compat.v1.npu_init import *``)."""

import importlib

from npu_bridge.core.tf2.compat import enable_v1, install_alias_tree

install_alias_tree()
v1 = importlib.import_module("npu_device.compat.v1")

__all__ = ["enable_v1", "v1"]
