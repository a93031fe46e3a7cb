"""A Keras classifier written the way Ascend's TF2 model scripts are: flags, an npu_config() block that sets
global options and opens the device, then compile / fit.

    python3 examples/tf2_keras_fit.py --precision_mode=allow_mix_precision

It prints the losses per epoch, the accuracy, and how far a float32 MatMul of the trained model is from the exact
product (about 1e-4 under a mixed precision mode, which rounds its inputs to fp16; about 1e-7 in float32), as one
RESULT line of JSON.
"""

import argparse
import json

import numpy as np
import tensorflow as tf

import npu_device


def npu_config(args):
    if args.data_dump_flag:
        npu_device.global_options().dump_config.enable_dump = True
        npu_device.global_options().dump_config.dump_path = args.data_dump_path
        npu_device.global_options().dump_config.dump_step = args.data_dump_step
        npu_device.global_options().dump_config.dump_mode = "all"
    if args.auto_tune:
        npu_device.global_options().auto_tune_mode = "RL,GA"
    npu_device.global_options().graph_memory_max_size = str("21*1024*1024*1024")
    npu_device.global_options().precision_mode = args.precision_mode
    npu_device.open().as_default()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--precision_mode", default="allow_mix_precision")
    parser.add_argument("--data_dump_flag", type=int, default=0)
    parser.add_argument("--data_dump_path", default="/home/data")
    parser.add_argument("--data_dump_step", default="10")
    parser.add_argument("--auto_tune", type=int, default=0)
    args = parser.parse_args()
    npu_config(args)

    rng = np.random.RandomState(0)
    features = rng.rand(256, 20).astype(np.float32)
    labels = (features[:, :10].sum(1) > features[:, 10:].sum(1)).astype(np.int64)
    dataset = tf.data.Dataset.from_tensor_slices((features, labels)).batch(32, drop_remainder=True)
    tf.random.set_seed(1)
    with tf.distribute.OneDeviceStrategy("/gpu:0").scope():  # a zoo habit: on an NPU host the device is ignored
        model = tf.keras.Sequential(
            [
                tf.keras.layers.Dense(32, activation="relu", input_shape=(20,)),
                tf.keras.layers.Dropout(0.1),
                tf.keras.layers.Dense(2),
            ]
        )
    model.compile(
        optimizer=tf.keras.optimizers.Adam(0.01),
        loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    history = model.fit(dataset, epochs=4, verbose=0)
    kernel = model.layers[0].kernel.numpy()

    @tf.function
    def first_layer(x):
        return tf.matmul(x, model.layers[0].kernel)

    exact = features[:32].astype(np.float64) @ kernel.astype(np.float64)
    error = float(np.max(np.abs(first_layer(features[:32]).numpy() - exact)) / np.max(np.abs(exact)))
    result = {"losses": history.history["loss"], "accuracy": history.history["accuracy"][-1], "matmul_error": error}
    print("RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
