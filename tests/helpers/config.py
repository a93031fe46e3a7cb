"""ConfigProtos with an NpuOptimizer entry, as scripts write them."""

import tensorflow as tf

from npu_bridge.core.session import config_proto


def npu_config(**options):
    """A ConfigProto with an NpuOptimizer entry holding ``options`` (bool -> .b, int -> .i, str -> .s)."""
    config = tf.compat.v1.ConfigProto()
    config_proto.append_npu_optimizer(config, options)
    return config
