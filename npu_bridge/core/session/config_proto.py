"""Builds and edits session ConfigProtos the way upstream's helpers do (npu_config_proto and friends)."""

from tensorflow.core.protobuf import config_pb2, rewriter_config_pb2

NPU_OPTIMIZER = "NpuOptimizer"
RewriterConfig = rewriter_config_pb2.RewriterConfig


def has_npu_optimizer(config):
    """Returns True when ``config`` (a ConfigProto or None) lists a custom optimizer named NpuOptimizer."""
    if not isinstance(config, config_pb2.ConfigProto):
        return False
    return any(c.name == NPU_OPTIMIZER for c in config.graph_options.rewrite_options.custom_optimizers)


def add_npu_optimizer(config):
    """Adds an empty NpuOptimizer entry to ``config`` unless one exists.

    Returns:
      True when an entry was added.
    """
    if has_npu_optimizer(config):
        return False
    config.graph_options.rewrite_options.custom_optimizers.add().name = NPU_OPTIMIZER
    return True


def append_npu_optimizer(config, values):
    """Appends an NpuOptimizer entry holding ``values`` to ``config``, whatever entries it already has.

    Args:
      config: the ConfigProto to edit.
      values: {parameter_map key: value}; a bool goes to ``.b``, an int to ``.i``, str or bytes to ``.s``.
    Returns:
      The new entry.
    """
    entry = config.graph_options.rewrite_options.custom_optimizers.add()
    entry.name = NPU_OPTIMIZER
    for key, value in values.items():
        if isinstance(value, bool):
            entry.parameter_map[key].b = value
        elif isinstance(value, int):
            entry.parameter_map[key].i = value
        else:
            entry.parameter_map[key].s = value.encode() if isinstance(value, str) else value
    return entry


def npu_config_proto(config_proto=None):
    """Makes ``config_proto`` an NPU session config, as upstream's ``npu_config_proto``.

    Adds an NpuOptimizer entry if missing (then also turns Grappler's memory optimizer off), and always sets
    ``allow_soft_placement``, clears ``log_device_placement``, and turns remapping and XLA JIT off.

    Args:
      config_proto: a ConfigProto to edit in place; anything else is replaced by a new ConfigProto.
    Returns:
      The edited ConfigProto.
    """
    if not isinstance(config_proto, config_pb2.ConfigProto):
        config_proto = config_pb2.ConfigProto()
    if add_npu_optimizer(config_proto):
        config_proto.graph_options.rewrite_options.memory_optimization = RewriterConfig.OFF
    config_proto.allow_soft_placement = True
    config_proto.log_device_placement = False
    config_proto.graph_options.rewrite_options.remapping = RewriterConfig.OFF
    config_proto.graph_options.optimizer_options.global_jit_level = config_pb2.OptimizerOptions.OFF
    return config_proto


def npu_session_config_init(session_config=None):
    """The 2021 helper that Ascend's migration tool writes into scripts: NpuOptimizer + remapping off.

    Args:
      session_config: a ConfigProto to edit in place; anything else is replaced by a new ConfigProto.
    Returns:
      The edited ConfigProto.
    """
    if not isinstance(session_config, config_pb2.ConfigProto):
        session_config = config_pb2.ConfigProto()
    add_npu_optimizer(session_config)
    session_config.graph_options.rewrite_options.remapping = RewriterConfig.OFF
    return session_config


def npu_graph_options(graph_options=None):
    """Returns ``graph_options`` (or a new GraphOptions) with XLA JIT turned off."""
    if not isinstance(graph_options, config_pb2.GraphOptions):
        graph_options = config_pb2.GraphOptions()
    graph_options.optimizer_options.global_jit_level = config_pb2.OptimizerOptions.OFF
    return graph_options


def npu_optimizer_options(optimizer_options=None):
    """Returns ``optimizer_options`` (or a new OptimizerOptions) with XLA JIT turned off."""
    if not isinstance(optimizer_options, config_pb2.OptimizerOptions):
        optimizer_options = config_pb2.OptimizerOptions()
    optimizer_options.global_jit_level = config_pb2.OptimizerOptions.OFF
    return optimizer_options
