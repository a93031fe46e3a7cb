"""The upstream module paths users import (their status: docs/fidelity.md).

Every one of them must import. Tests import them all; ``unsupported.render_markdown`` uses the list too.
"""

import importlib

UPSTREAM_MODULES = (
    "npu_bridge",
    "npu_bridge.npu_init",
    "npu_bridge.estimator.npu_ops",
    "npu_bridge.estimator.npu_unary_ops",
    "npu_bridge.estimator.npu_aicore_ops",
    "npu_bridge.hccl.hccl_ops",
    "hccl.manage.api",
    "hccl.split.api",
    "npu_bridge.estimator.npu.npu_config",
    "npu_bridge.estimator.npu.npu_estimator",
    "npu_bridge.estimator.npu.npu_optimizer",
    "npu_bridge.estimator.npu.npu_loss_scale_optimizer",
    "npu_bridge.estimator.npu.npu_loss_scale_manager",
    "npu_bridge.estimator.npu.npu_hook",
    "npu_bridge.estimator.npu.npu_callbacks",
    "npu_bridge.estimator.npu.util",
    "npu_bridge.estimator.npu.npu_scope",
    "npu_bridge.estimator.npu.npu_rnn",
    "npu_bridge.estimator.npu.npu_dynamic_rnn",
    "npu_bridge.estimator.npu.keras_to_npu",
    "npu_bridge.estimator.npu.npu_plugin",
    "npu_bridge.estimator.npu.npu_strategy",
    "npu_bridge.estimator.npu.npu_convert_dropout",
    "npu_bridge.estimator.npu.npu_saver",
    "npu_bridge.estimator.npu.npu_common",
    "npu_bridge.npu_cpu.npu_cpu_ops",
    "npu_bridge.npu_cpu.lru_cache",
    "npu_bridge.tf_adapter",
    "npu_bridge.image.image_ops",
    "npu_bridge.experimental.hccl",
    "npu_bridge.experimental.image",
    "npu_bridge.experimental.get_shape",
    "npu_bridge.experimental.file_constant",
    "npu_bridge.profiler.profiler",
    "npu_bridge.scoped_graph_manager.scoped_graph_manager",
    "npu_bridge.tbe.npu_cube_ops",
    "npu_bridge.tbe.npu_vector_ops",
    "npu_bridge.helper.helper",
)


def import_all():
    """Imports every upstream module path; returns {path: module}."""
    return {name: importlib.import_module(name) for name in UPSTREAM_MODULES}
