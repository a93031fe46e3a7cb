"""``python -m npu_bridge.tf1 train.py [args]``: runs an Ascend TF1 script unchanged (the TF1 mode).

Also ``python -m npu_bridge.tf1 -m package.module [args]``, ``npu-run --tf1 -- <command>`` and
``NPU_BRIDGE_TF1=1``. The implementation is ``npu_bridge.core.tf1``; see docs/tf1_mode.md.
"""

from npu_bridge.core.tf1.mode import install

__all__ = ["install"]
