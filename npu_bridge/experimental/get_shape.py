"""Upstream import path for experimental shape op (facade)."""

from npu_bridge.pending import pending

getshape = pending("npu_bridge.experimental.get_shape.getshape", "compute")
