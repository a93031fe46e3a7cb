"""Puts the NpuOptimizer passes on the graphs of TF2 functions.

TensorFlow optimizes the graph of every ``tf.function`` it runs (a script's own steps, Keras' ``train_function``)
with the ConfigProto of the thread's function-call options, which it builds from the eager context's config.
A custom optimizer listed there runs on every function graph, once per traced signature. ``install`` plans the
validated options with the session layer's own planning (``npu_bridge.core.session.bridge.plan_validated``, the
same a TF1 session with these options gets) and writes the planned config, one ``NpuOptimizer`` entry included,
into both: the context's config, from which threads started later build their options, and the options of the
calling thread. ``tf.data`` functions are optimized with their own options and stay as they are, as on Ascend,
where the input pipeline runs on the host.
"""

import tensorflow as tf
from tensorflow.python.eager import context

from npu_bridge.core.plan import pass_contract
from npu_bridge.core.runtime.errors import NpuUsageError
from npu_bridge.core.session import bridge, config_proto


def install(options, current_world):
    """Plans ``options`` for function graphs and makes the plan's config the one every function call uses.

    Args:
      options: the validated ``NpuOptions`` (their ``session_device_id`` is the device id the device opens with).
      current_world: the collective ``World`` resolved for that device id.
    Returns:
      The ``SessionPlan``: its options (the process's init options imposed if the system was already
      initialized), world and backend.
    Raises:
      The errors of ``bridge.plan_validated``; NpuUsageError: this TensorFlow's eager context lacks what
      ``_use_for_function_calls`` sets.
    """
    ctx = context.context()
    plan = bridge.plan_validated(options, ctx.config, world=current_world, function_graphs=True)
    for entry in plan.config.graph_options.rewrite_options.custom_optimizers:
        if entry.name == config_proto.NPU_OPTIMIZER:
            pass_contract.compact(entry)  # TensorFlow hands the configuration on with every function call
    _use_for_function_calls(ctx, plan.config)
    return plan


def _use_for_function_calls(ctx, config):
    """Makes ``config`` the ConfigProto of the function calls of the calling thread and of threads started later.

    The one use of TensorFlow's private eager-context state in the adapter. No public API of TensorFlow 2.21 can
    carry a custom Grappler optimizer's parameter_map into the config function graphs are optimized with:
    ``tf.config.optimizer.set_experimental_options`` sets only the built-in rewriters' toggles and
    ``min_graph_nodes`` (``Context.config`` copies those keys, never ``custom_optimizers``), and
    ``tf.compat.v1.enable_eager_execution(config=...)`` refuses a config once the eager context exists, which it
    does from ``import tensorflow`` on. So ``Context._config``, from which ``Context.config`` and every thread's
    ``function_call_options`` are built, is replaced here.

    Raises:
      NpuUsageError: this TensorFlow's eager context has no ``_config`` or ``function_call_options``.
    """
    if not hasattr(ctx, "_config") or not hasattr(ctx, "function_call_options"):
        raise NpuUsageError(
            f"npu_device.open(): TensorFlow {tf.__version__}'s eager context has no _config or "
            "function_call_options, where npu_bridge puts the NpuOptimizer configuration of tf.function graphs "
            "(no public API carries a custom Grappler optimizer's parameters); use the TensorFlow release "
            "npu_bridge was built for"
        )
    ctx._config = config
    call_options = ctx.function_call_options
    call_options.config_proto_serialized = config
    ctx.function_call_options = call_options
