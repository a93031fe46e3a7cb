"""A tf.function step whose second call overflows, with overflow detection switched on the zoo's way
(``--over_dump`` sets dump_config.enable_dump_debug, dump_path and dump_debug_mode)."""

import argparse

import numpy as np
import tensorflow as tf

import npu_device

parser = argparse.ArgumentParser()
parser.add_argument("--over_dump", type=int, default=1)
parser.add_argument("--over_dump_path", default="/home/data")
args = parser.parse_args()
if args.over_dump:
    npu_device.global_options().dump_config.enable_dump_debug = True
    npu_device.global_options().dump_config.dump_path = args.over_dump_path
    npu_device.global_options().dump_config.dump_debug_mode = "all"
npu_device.open().as_default()

weights = tf.Variable(np.ones((8, 2), np.float32))


@tf.function
def step(x, scale):
    return tf.reduce_sum(tf.exp(tf.matmul(x, weights) * scale))


for scale in (1.0, 100.0, 1.0):
    print("loss", float(step(tf.constant(np.ones((4, 8), np.float32)), tf.constant(scale))), flush=True)
