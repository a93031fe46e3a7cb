"""The sub-configs of ``NPURunConfig`` (and the NpuExecutePlacement enum): MemoryConfig, ExperimentalConfig,
GraphMemoryOptimizeConfig,
DynamicInputConfig.

Every config object that ``NPURunConfig`` accepts (these, and DumpConfig / ProfilingConfig) implements one
method, ``parameter_map_values()``, returning the NpuOptimizer options it contributes as
{parameter_map key: value}, as upstream's NPURunConfig writes them (the keys: docs/options.md).
"""

import enum

from npu_bridge.core.runtime.errors import NpuArgumentError

_AUTO_OR_MANUAL = ("auto", "manual")


class NpuExecutePlacement(enum.Enum):
    """Where ``npu_variable_scope`` places ops."""

    ALL = "all"
    CUBE = "cube"
    VECTOR = "vector"
    TAISHAN = "taishan"
    DVPP = "dvpp"
    HOST = "host"


class MemoryConfig:
    """Device memory options (no effect here; validated and written to the parameter_map).

    Args:
      atomic_clean_policy: 0 (clean together) or 1 (per op); always written.
      static_memory_policy: 0 .. 4.
      memory_optimization_policy: a graph-engine memory policy string.
      variable_use_1g_huge_page: 0, 1 or 2.
    """

    def __init__(
        self,
        atomic_clean_policy=0,
        static_memory_policy=0,
        memory_optimization_policy=None,
        variable_use_1g_huge_page=0,
    ):
        self._atomic_clean_policy = atomic_clean_policy
        self._static_memory_policy = static_memory_policy
        self._memory_optimization_policy = memory_optimization_policy
        self._variable_use_1g_huge_page = variable_use_1g_huge_page

    def parameter_map_values(self):
        """Returns {parameter_map key: value} of the set options."""
        values = {
            "atomic_clean_policy": self._atomic_clean_policy,
            "static_memory_policy": self._static_memory_policy,
            "memory_optimization_policy": self._memory_optimization_policy,
            "variable_use_1g_huge_page": self._variable_use_1g_huge_page,
        }
        return {key: value for key, value in values.items() if value is not None}


class GraphMemoryOptimizeConfig:
    """Graph memory optimizations: ``recompute`` and ``graph_slice``, each "auto" or "manual".

    Raises:
      ValueError: a value other than "auto", "manual" or None.
    """

    def __init__(self, recompute=None, graph_slice=None):
        for name, value in (("recompute", recompute), ("graph_slice", graph_slice)):
            if value is not None and value not in _AUTO_OR_MANUAL:
                raise NpuArgumentError(f"{name} should be in {list(_AUTO_OR_MANUAL)}, got {value!r}")
        self._recompute = recompute
        self._graph_slice = graph_slice

    recompute = property(lambda self: self._recompute)
    graph_slice = property(lambda self: self._graph_slice)


class ExperimentalConfig:
    """Experimental deployment, cache and graph options (no effect here; validated and written).

    Raises:
      ValueError: ``graph_memory_optimize_config`` is not a ``GraphMemoryOptimizeConfig``.
    """

    def __init__(
        self,
        logical_device_cluster_deploy_mode="LB",
        logical_device_id=None,
        model_deploy_mode=None,
        model_deploy_devicelist=None,
        graph_memory_optimize_config=None,
        enable_graph_parallel=None,
        graph_parallel_option_path=None,
        graph_compiler_cache_dir=None,
        resource_config_path=None,
        accelerate_train_mode=None,
    ):
        if graph_memory_optimize_config is not None and not isinstance(
            graph_memory_optimize_config, GraphMemoryOptimizeConfig
        ):
            raise NpuArgumentError(
                '"graph_memory_optimize_config" type must be GraphMemoryOptimizeConfig, got '
                f"{type(graph_memory_optimize_config).__name__}"
            )
        self.logical_device_cluster_deploy_mode = logical_device_cluster_deploy_mode
        self.logical_device_id = logical_device_id
        self.model_deploy_mode = model_deploy_mode
        self.model_deploy_devicelist = model_deploy_devicelist
        self.graph_memory_optimize_config = graph_memory_optimize_config
        self.enable_graph_parallel = enable_graph_parallel
        self.graph_parallel_option_path = graph_parallel_option_path
        self.graph_compiler_cache_dir = graph_compiler_cache_dir
        self.resource_config_path = resource_config_path
        self.accelerate_train_mode = accelerate_train_mode

    def parameter_map_values(self):
        """Returns {parameter_map key: value} of the set options."""
        memory = self.graph_memory_optimize_config
        values = {
            "experimental_logical_device_cluster_deploy_mode": self.logical_device_cluster_deploy_mode,
            "experimental_logical_device_id": self.logical_device_id,
            "experimental_model_deploy_mode": self.model_deploy_mode,
            "experimental_model_deploy_devicelist": self.model_deploy_devicelist,
            "resource_config_path": self.resource_config_path,
            "graph_compiler_cache_dir": self.graph_compiler_cache_dir,
            "graph_parallel_option_path": self.graph_parallel_option_path,
            "enable_graph_parallel": self.enable_graph_parallel,
            "experimental_accelerate_train_mode": self.accelerate_train_mode,
            "graph_slice": memory.graph_slice if memory is not None else None,
        }
        return {key: value for key, value in values.items() if value is not None}


class DynamicInputConfig:
    """Dynamic-dims input profiles (no effect here); written only when all four values are set."""

    def __init__(self, input_shape, dynamic_dims, dynamic_node_type, compile_hybrid_mode):
        self._values = {
            "input_shape": input_shape,
            "dynamic_dims": dynamic_dims,
            "dynamic_node_type": dynamic_node_type,
            "compile_hybrid_mode": compile_hybrid_mode,
        }

    input_shape = property(lambda self: self._values["input_shape"])
    dynamic_dims = property(lambda self: self._values["dynamic_dims"])
    dynamic_node_type = property(lambda self: self._values["dynamic_node_type"])
    compile_hybrid_mode = property(lambda self: self._values["compile_hybrid_mode"])

    def parameter_map_values(self):
        """Returns the four options, or {} when any of them is None (as upstream)."""
        if any(value is None for value in self._values.values()):
            return {}
        return dict(self._values)
