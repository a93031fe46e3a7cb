"""Upstream import path ``npu_bridge.estimator.npu.npu_convert_dropout``.

Upstream, importing this module makes Keras ``Dropout`` layers use the NPU dropout op. NPU dropout is not
available yet in this version, so the import leaves Keras unchanged and says so.
"""

from npu_bridge import log
from npu_bridge.pending import pending

pending("npu_bridge.estimator.npu.npu_convert_dropout", "compute")
log.warn_once("npu_convert_dropout", "npu_convert_dropout: NPU dropout is not available yet in this version of "
              "npu_bridge; Keras Dropout layers keep TensorFlow's dropout")
