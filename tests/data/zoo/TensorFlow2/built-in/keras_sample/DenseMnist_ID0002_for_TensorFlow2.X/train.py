"""A TF2 Keras classifier in the zoo's style: tf.keras imported before npu_device (as tf_v2_01_SGAN does), MNIST
from Keras' datasets (a download: the harness serves a synthetic copy), fit."""
import argparse

import numpy as np
import tensorflow as tf
from tensorflow.keras import layers
import npu_device

npu_device.open().as_default()
parser = argparse.ArgumentParser()
parser.add_argument("--data_dir", required=True)
parser.add_argument("--epochs", type=int, default=1)
args = parser.parse_args()

(images, labels), _ = tf.keras.datasets.mnist.load_data()
images = images.astype(np.float32) / 255.0
model = tf.keras.Sequential([layers.Flatten(input_shape=(28, 28)), layers.Dense(16, activation="relu"), layers.Dense(10)])
model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
model.fit(images, labels, batch_size=32, epochs=args.epochs)
