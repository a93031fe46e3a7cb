"""The NpuOptimizer session config the benchmarks measure with."""

import tensorflow as tf


def npu_config(**options):
    """A ConfigProto with one NpuOptimizer entry: use_off_line plus ``options`` (bool -> b, int -> i, else s).

    Args:
      **options: parameter_map keys and values.
    Returns:
      The ConfigProto.
    """
    config = tf.compat.v1.ConfigProto()
    entry = config.graph_options.rewrite_options.custom_optimizers.add()
    entry.name = "NpuOptimizer"
    entry.parameter_map["use_off_line"].b = True
    for key, value in options.items():
        if isinstance(value, bool):
            entry.parameter_map[key].b = value
        elif isinstance(value, int):
            entry.parameter_map[key].i = value
        else:
            entry.parameter_map[key].s = str(value).encode()
    return config
