"""Graph ops that initialize and shut down the NPU system (``npu_ops.initialize_system`` & co)."""

import tensorflow as tf

from npu_bridge.core.runtime import native_library
from npu_bridge.core.runtime.errors import NpuUsageError
from npu_bridge.core.world import world


def _require_graph_mode(op_name):
    if tf.executing_eagerly():
        raise NpuUsageError(f"tf.{op_name}() is not compatible with eager execution.")


def initialize_system(name=None):
    """Returns an ``NPUInit`` op; running it initializes the NPU system for this process.

    The first initialization in a process fixes the init-stage options (those of the session that runs it,
    if that session is configured with NpuOptimizer); later ones do nothing.

    Args:
      name: optional op name.
    Returns:
      The ``NPUInit`` operation.
    Raises:
      RuntimeError: called while executing eagerly (as upstream).
      RankTableError, DeviceIdError: the rank table or device id environment is malformed.
    """
    _require_graph_mode("NPUInit")
    world.environment_world()
    return native_library.ops().npu_init(name=name)


def shutdown_system(name=None):
    """Returns an ``NPUShutdown`` op; running it shuts the NPU system down.

    It does nothing when the system was initialized globally by ``npu_plugin.npu_resource_init``.

    Args:
      name: optional op name.
    Returns:
      The ``NPUShutdown`` operation.
    Raises:
      RuntimeError: called while executing eagerly (as upstream).
    """
    _require_graph_mode("NPUShutdown")
    return native_library.ops().npu_shutdown(name=name)
