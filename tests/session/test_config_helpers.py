"""npu_config_proto and the other config helpers of npu_init."""

import tensorflow as tf

from npu_bridge.core.session import config_proto
from npu_bridge.core.session.config_proto import RewriterConfig

v1 = tf.compat.v1


def npu_entries(config):
    return [c for c in config.graph_options.rewrite_options.custom_optimizers if c.name == "NpuOptimizer"]


def test_npu_config_proto_from_nothing():
    config = config_proto.npu_config_proto()
    assert len(npu_entries(config)) == 1
    assert config.allow_soft_placement and not config.log_device_placement
    rewrite = config.graph_options.rewrite_options
    assert rewrite.remapping == RewriterConfig.OFF and rewrite.memory_optimization == RewriterConfig.OFF
    assert config.graph_options.optimizer_options.global_jit_level == v1.OptimizerOptions.OFF


def test_npu_config_proto_keeps_an_existing_entry_and_its_options():
    config = v1.ConfigProto(log_device_placement=True)
    entry = config.graph_options.rewrite_options.custom_optimizers.add()
    entry.name = "NpuOptimizer"
    entry.parameter_map["precision_mode"].s = b"force_fp32"
    result = config_proto.npu_config_proto(config)
    assert result is config
    assert len(npu_entries(config)) == 1
    assert npu_entries(config)[0].parameter_map["precision_mode"].s == b"force_fp32"
    assert not config.log_device_placement
    # memory_optimization is only switched off together with adding the entry, as upstream.
    assert config.graph_options.rewrite_options.memory_optimization == RewriterConfig.DEFAULT_MEM_OPT


def test_npu_session_config_init():
    config = config_proto.npu_session_config_init(None)
    assert len(npu_entries(config)) == 1
    assert config.graph_options.rewrite_options.remapping == RewriterConfig.OFF
    assert not config.allow_soft_placement


def test_graph_and_optimizer_options():
    assert config_proto.npu_graph_options().optimizer_options.global_jit_level == v1.OptimizerOptions.OFF
    existing = v1.OptimizerOptions(do_function_inlining=True)
    result = config_proto.npu_optimizer_options(existing)
    assert result is existing and result.global_jit_level == v1.OptimizerOptions.OFF
