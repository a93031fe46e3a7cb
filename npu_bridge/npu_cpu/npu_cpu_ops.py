"""Upstream import path ``npu_bridge.npu_cpu.npu_cpu_ops``: Ascend AI CPU ops (embedding hash tables, OCR, ...).

These run on the NPU's AI CPU; any name looked up here is a stand-in that raises ``NotAvailableError``.
"""

from npu_bridge.pending import pending

pending("npu_bridge.npu_cpu.npu_cpu_ops.*", "compute")


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return pending(f"npu_bridge.npu_cpu.npu_cpu_ops.{name}", "compute", register=False)
