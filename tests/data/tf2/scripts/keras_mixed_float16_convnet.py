"""A Keras conv net under the mixed_float16 policy (its convolutions compute in fp16), trained by ``fit`` for two
steps, with ``npu_device`` (argument ``npu``) or in plain TensorFlow (``plain``). Prints one RESULT line: the final
weights, and the convolution ops of the executed function graphs with the dtype each computed in."""

# isort: skip_file

import json
import sys

import numpy as np

if sys.argv[1] == "npu":
    import npu_device

    npu_device.open().as_default()
import tensorflow as tf
from tensorflow.python.eager import context

tf.keras.mixed_precision.set_global_policy("mixed_float16")
tf.keras.utils.set_random_seed(3)
model = tf.keras.Sequential(
    [
        tf.keras.layers.Conv2D(4, 3, activation="relu", input_shape=(8, 8, 3)),
        tf.keras.layers.DepthwiseConv2D(3),
        tf.keras.layers.Conv2D(4, 3, padding="same"),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(3, dtype="float32"),
    ]
)
model.compile(tf.keras.optimizers.SGD(0.05), tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
rng = np.random.RandomState(0)
images, labels = rng.rand(8, 8, 8, 3).astype(np.float32), rng.randint(0, 3, 8)
context.enable_run_metadata()
model.fit(images, labels, batch_size=4, epochs=1, shuffle=False, verbose=0)
metadata = context.export_run_metadata()
context.disable_run_metadata()
computed = set()
for function in metadata.function_graphs:
    for graph in function.partition_graphs:
        for node in graph.node:
            op = node.op.replace("_MklNative", "").replace("_Mkl", "").lstrip("_")  # oneDNN's and fused names
            if "Conv" in op:
                computed.add((op, tf.dtypes.as_dtype(node.attr["T"].type).name))
print(
    "RESULT "
    + json.dumps(
        {
            "weights": [w.tolist() for w in model.get_weights()],
            "compute_dtype": model.layers[0].compute_dtype,
            "computed": sorted(computed),
        }
    ),
    flush=True,
)
