"""Upstream's SWIG module ``npu_bridge.tf_adapter``: its ``DT_*`` constants work, its functions do not.

Upstream binds the Ascend runtime through SWIG (GE initialization, device memory, host-embedding services);
none of that exists off the NPU. Scripts also read the module's ``DT_*`` constants (``tf_adapter.DT_FLOAT``),
which are TensorFlow's ``DataType`` enum values; they come from TensorFlow's own ``types_pb2``.
"""

from tensorflow.core.framework import types_pb2

from npu_bridge.core.runtime import unsupported

MODULE = "npu_bridge.tf_adapter"
REASON = (
    "upstream's SWIG binding of the Ascend runtime (GE initialization, device memory, host-embedding services) "
    "has no counterpart off the NPU; its DT_* constants (TensorFlow's DataType values) work"
)
# Every name of TensorFlow's DataType enum (DT_INVALID = 0, DT_FLOAT = 1, ..., and the *_REF variants).
DATA_TYPES = {name: value for name, value in types_pb2.DataType.items()}

module_getattr = unsupported.module_getattr(MODULE, REASON, DATA_TYPES)
