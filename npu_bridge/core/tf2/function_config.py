"""Puts the NpuOptimizer passes on the graphs of TF2 functions.

TensorFlow optimizes the graph of every ``tf.function`` it runs (a script's own steps, Keras' ``train_function``)
with the ConfigProto of the thread's function-call options, which it builds from the eager context's config.
A custom optimizer listed there runs on every function graph, once per traced signature. ``install`` writes
one ``NpuOptimizer`` entry, carrying the same session plan a TF1 session with these options gets
(``npu_bridge.core.session.bridge``), into both: the context's config, from which threads started later build
their options, and the options of the calling thread. ``tf.data`` functions are optimized with their own options
and stay as they are, as on Ascend, where the input pipeline runs on the host.
"""

from tensorflow.core.protobuf import config_pb2
from tensorflow.python.eager import context

from npu_bridge.core.plan import pass_contract
from npu_bridge.core.session import bridge, config_proto


def install(options, device_id):
    """Writes the NpuOptimizer entry of ``options`` into the eager context's function configuration.

    Args:
      options: the validated ``NpuOptions``.
      device_id: the device id the device opens with.
    Returns:
      The ``SessionPlan``: its options (the process's init options imposed if the system was already
      initialized), world and backend.
    Raises:
      The errors of ``bridge.bridge_config``.
    """
    ctx = context.context()
    config = config_pb2.ConfigProto()
    config.CopyFrom(ctx.config)
    custom = config.graph_options.rewrite_options.custom_optimizers
    kept = [entry for entry in custom if entry.name != config_proto.NPU_OPTIMIZER]
    del custom[:]
    custom.extend(kept)
    entry = custom.add()
    entry.name = config_proto.NPU_OPTIMIZER
    # What the script set, as a TF1 script's parameter_map holds it: the bridge then plans exactly what it plans for
    # a session with these options (an option left unset, such as device_target, yields to its environment
    # variable there; written with its default it would count as set and overrule it).
    options.write_parameter_map(entry, explicit_only=True)
    entry.parameter_map["session_device_id"].i = device_id
    plan = bridge.bridge_config("", config, function_graphs=True)
    for bridged in plan.config.graph_options.rewrite_options.custom_optimizers:
        if bridged.name == config_proto.NPU_OPTIMIZER:
            pass_contract.compact(bridged)  # TensorFlow hands the configuration on with every function call
    ctx._config = plan.config  # TensorFlow has no public setter; threads started later build their options from it
    call_options = ctx.function_call_options
    call_options.config_proto_serialized = plan.config
    ctx.function_call_options = call_options
    return plan
