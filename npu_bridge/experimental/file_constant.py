"""Upstream import path for experimental file constant op (facade)."""

from npu_bridge.pending import pending

file_constant = pending("npu_bridge.experimental.file_constant.file_constant", "compute")
