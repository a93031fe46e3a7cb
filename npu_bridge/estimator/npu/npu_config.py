"""Upstream import path ``npu_bridge.estimator.npu.npu_config`` (facade)."""

from npu_bridge.core.activation import set_npu_default_config
from npu_bridge.core.dump.dump_config import DumpConfig
from npu_bridge.core.npu_estimator.run_config import NPURunConfig
from npu_bridge.core.options.config_objects import (
    DynamicInputConfig,
    ExperimentalConfig,
    GraphMemoryOptimizeConfig,
    MemoryConfig,
    NpuExecutePlacement,
)
from npu_bridge.core.profiling.profiling_config import ProfilingConfig
from npu_bridge.core.session.bridge import decorator_tf_session

__all__ = [
    "DumpConfig",
    "DynamicInputConfig",
    "ExperimentalConfig",
    "GraphMemoryOptimizeConfig",
    "MemoryConfig",
    "NpuExecutePlacement",
    "NPURunConfig",
    "ProfilingConfig",
    "decorator_tf_session",
    "set_npu_default_config",
]
