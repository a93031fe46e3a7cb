"""Upstream import path ``npu_bridge.estimator.npu.npu_config`` (facade)."""

import enum

from npu_bridge.dump.dump_config import DumpConfig  # noqa: F401
from npu_bridge.pending import pending
from npu_bridge.session_bridge import decorator_tf_session

_MODULE = "npu_bridge.estimator.npu.npu_config"
NPURunConfig = pending(f"{_MODULE}.NPURunConfig", "estimator")
ProfilingConfig = pending(f"{_MODULE}.ProfilingConfig", "profiling")
MemoryConfig = pending(f"{_MODULE}.MemoryConfig", "estimator")
ExperimentalConfig = pending(f"{_MODULE}.ExperimentalConfig", "estimator")
GraphMemoryOptimizeConfig = pending(f"{_MODULE}.GraphMemoryOptimizeConfig", "estimator")
DynamicInputConfig = pending(f"{_MODULE}.DynamicInputConfig", "estimator")
set_npu_default_config = pending(f"{_MODULE}.set_npu_default_config", "estimator")


class NpuExecutePlacement(enum.Enum):
    """Where ``npu_variable_scope`` places ops."""

    ALL = "all"
    CUBE = "cube"
    VECTOR = "vector"
    TAISHAN = "taishan"
    DVPP = "dvpp"
    HOST = "host"
