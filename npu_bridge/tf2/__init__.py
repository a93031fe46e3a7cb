"""``python -m npu_bridge.tf2 train.py [args]``: runs an Ascend TF2 script whose Keras 2.6 imports come before
``import npu_device`` (``import npu_device`` alone switches them on for everything imported after it).

Also ``python -m npu_bridge.tf2 -m package.module [args]``. The implementation is ``npu_bridge.core.tf2``; see
docs/tf2_adapter.md, "Keras 2.x and TensorFlow-internal imports".
"""

from npu_bridge.core.tf2.legacy_imports import install

__all__ = ["install"]
