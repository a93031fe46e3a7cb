"""Upstream import path ``npu_bridge.estimator.npu.npu_config`` (facade)."""

from npu_bridge.dump.dump_config import DumpConfig
from npu_bridge.estimator_runtime.config_objects import (DynamicInputConfig, ExperimentalConfig,
                                                         GraphMemoryOptimizeConfig, MemoryConfig,
                                                         NpuExecutePlacement)
from npu_bridge.estimator_runtime.run_config import NPURunConfig
from npu_bridge.profiling.profiling_config import ProfilingConfig
from npu_bridge.session_bridge import decorator_tf_session, set_npu_default_config


