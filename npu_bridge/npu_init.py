"""``from npu_bridge.npu_init import *``: the one line Ascend TF1 scripts start with (facade).

Importing it, as upstream does, makes every session created afterwards an NPU session (its config gets an
``NpuOptimizer`` entry if it has none). Because it is the entry point of TF1 graph-mode scripts, it also
turns eager execution off; ``tf`` is ``tensorflow.compat.v1``.
"""

import os  # noqa: F401  (re-exported: upstream's npu_init exports os)

import tensorflow as _tensorflow
import tensorflow.compat.v1 as tf
from tensorflow.core.protobuf import config_pb2, rewriter_config_pb2
from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig
from tensorflow.python.client import session
from tensorflow.python.training import session_run_hook

import npu_bridge  # noqa: F401  (loads the library and installs the session bridge)
from hccl.manage.api import (
    create_group,
    destroy_group,
    get_group_rank_from_world_rank,
    get_local_rank_id,
    get_local_rank_size,
    get_rank_id,
    get_rank_size,
    get_world_rank_from_group_rank,
)
from hccl.split.api import set_split_strategy_by_idx, set_split_strategy_by_size
from npu_bridge.core.session import bridge
from npu_bridge.core.session.config_proto import (
    npu_config_proto,
    npu_graph_options,
    npu_optimizer_options,
    npu_session_config_init,
)
from npu_bridge.core.session.keras_session import npu_clear_session, set_keras_session_npu_config
from npu_bridge.core.session.resource import (
    close_session,
    get_npu_local_rank_id,
    get_npu_local_rank_size,
    get_npu_rank_id,
    get_npu_rank_size,
    init_resource,
    shutdown_resource,
)
from npu_bridge.core.session.script_helpers import (
    NpuEmptyHook,
    npu_callbacks_append,
    npu_hooks_append,
    npu_keras_optimizer,
    npu_run_config_init,
    npu_tf_optimizer,
)
from npu_bridge.estimator import npu_ops
from npu_bridge.estimator.npu import keras_to_npu, npu_plugin, npu_rnn, npu_scope, npu_strategy, util
from npu_bridge.estimator.npu.npu_callbacks import NPUBroadcastGlobalVariablesCallback
from npu_bridge.estimator.npu.npu_config import (
    DumpConfig,
    DynamicInputConfig,
    MemoryConfig,
    NPURunConfig,
    ProfilingConfig,
    decorator_tf_session,
)
from npu_bridge.estimator.npu.npu_estimator import NPUEstimator, NPUEstimatorSpec
from npu_bridge.estimator.npu.npu_hook import (
    NPUBroadcastGlobalVariablesHook,
    NPUCheckpointSaverHook,
    NPUOutputTensorHook,
    SetIterationsVarHook,
    TellMeStepOrLossHook,
)
from npu_bridge.estimator.npu.npu_loss_scale_manager import ExponentialUpdateLossScaleManager, FixedLossScaleManager
from npu_bridge.estimator.npu.npu_loss_scale_optimizer import NPULossScaleOptimizer
from npu_bridge.estimator.npu.npu_optimizer import (
    KerasDistributeOptimizer,
    NPUDistributedOptimizer,
    NPUOptimizer,
    npu_allreduce,
    npu_distributed_optimizer_wrapper,
)
from npu_bridge.estimator.npu_unary_ops import npu_unary_ops
from npu_bridge.hccl import hccl_ops
from npu_bridge.npu_cpu import npu_cpu_ops
from npu_bridge.profiler import profiler
from npu_bridge.scoped_graph_manager import scoped_graph_manager

backend = tf.keras.backend

experimental_options = {
    "disable_model_pruning": False,
    "function_optimization": True,
    "constant_folding": True,
    "shape_optimization": True,
    "arithmetic_optimization": True,
    "loop_optimization": True,
    "dependency_optimization": True,
    "layout_optimizer": True,
}

bridge.inject_npu_config(True)
_tensorflow.compat.v1.disable_eager_execution()

__all__ = [
    # config classes and the session decorator
    "NPURunConfig",
    "ProfilingConfig",
    "MemoryConfig",
    "DumpConfig",
    "DynamicInputConfig",
    "decorator_tf_session",
    # estimator, hooks, optimizers, loss scaling, callbacks
    "NPUEstimator",
    "NPUEstimatorSpec",
    "NPUCheckpointSaverHook",
    "NPUOutputTensorHook",
    "NPUBroadcastGlobalVariablesHook",
    "SetIterationsVarHook",
    "TellMeStepOrLossHook",
    "NPUDistributedOptimizer",
    "KerasDistributeOptimizer",
    "npu_distributed_optimizer_wrapper",
    "NPUOptimizer",
    "npu_allreduce",
    "NPULossScaleOptimizer",
    "FixedLossScaleManager",
    "ExponentialUpdateLossScaleManager",
    "NPUBroadcastGlobalVariablesCallback",
    # modules
    "npu_ops",
    "npu_rnn",
    "npu_scope",
    "keras_to_npu",
    "npu_strategy",
    "util",
    "npu_plugin",
    "npu_unary_ops",
    "hccl_ops",
    "profiler",
    "npu_cpu_ops",
    "scoped_graph_manager",
    # TensorFlow
    "config_pb2",
    "rewriter_config_pb2",
    "RewriterConfig",
    "session",
    "session_run_hook",
    "backend",
    "tf",
    "os",
    # hccl
    "create_group",
    "destroy_group",
    "get_rank_size",
    "get_local_rank_size",
    "get_rank_id",
    "get_local_rank_id",
    "get_world_rank_from_group_rank",
    "get_group_rank_from_world_rank",
    "set_split_strategy_by_idx",
    "set_split_strategy_by_size",
    "experimental_options",
    # helper functions
    "npu_hooks_append",
    "npu_callbacks_append",
    "npu_config_proto",
    "npu_graph_options",
    "npu_optimizer_options",
    "npu_session_config_init",
    "npu_run_config_init",
    "set_keras_session_npu_config",
    "init_resource",
    "shutdown_resource",
    "close_session",
    "get_npu_rank_id",
    "get_npu_local_rank_id",
    "get_npu_rank_size",
    "get_npu_local_rank_size",
    "NpuEmptyHook",
    "npu_keras_optimizer",
    "npu_tf_optimizer",
    "npu_clear_session",
]
