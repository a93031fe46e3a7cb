# A training script with TF1 queue input, written the way older zoo scripts (ResNet/Facenet ports) are:
# npu_init first, string_input_producer + TFRecordReader + shuffle_batch, tf.contrib.layers with an l2 regularizer,
# a tf.contrib.opt optimizer, an NpuOptimizer session config, Coordinator + start_queue_runners, a Saver.
# Run unchanged: python -m npu_bridge.tf1 queue_input_train.py --data_dir DIR
from npu_bridge.npu_init import *  # noqa: I001 - first, as the zoo writes it

import json
import os

import numpy as np
import tensorflow as tf

tf.app.flags.DEFINE_string("data_dir", None, "where the TFRecord shards and the checkpoint go")
tf.app.flags.DEFINE_integer("batch_size", 16, "batch size")
tf.app.flags.DEFINE_integer("max_steps", 30, "training steps")
FLAGS = tf.app.flags.FLAGS


def write_shards(data_dir):
    rng = np.random.RandomState(0)
    weights = np.array([1.5, -2.0, 0.5, 1.0], np.float32)
    paths = []
    for shard in range(2):
        path = os.path.join(data_dir, "train-%05d-of-00002" % shard)
        with tf.python_io.TFRecordWriter(path) as writer:
            for _ in range(64):
                x = rng.rand(4).astype(np.float32)
                example = tf.train.Example(
                    features=tf.train.Features(
                        feature={
                            "x": tf.train.Feature(float_list=tf.train.FloatList(value=x)),
                            "y": tf.train.Feature(float_list=tf.train.FloatList(value=[float(x @ weights)])),
                        }
                    )
                )
                writer.write(example.SerializeToString())
        paths.append(path)
    return paths


def inputs(paths, batch_size):
    filename_queue = tf.train.string_input_producer(paths, shuffle=True, seed=1)
    reader = tf.TFRecordReader()
    _, serialized = reader.read(filename_queue)
    parsed = tf.parse_single_example(
        serialized, features={"x": tf.FixedLenFeature([4], tf.float32), "y": tf.FixedLenFeature([1], tf.float32)}
    )
    return tf.train.shuffle_batch(
        [parsed["x"], parsed["y"]], batch_size=batch_size, capacity=200, min_after_dequeue=50, num_threads=2, seed=1
    )


def inference(x):
    regularizer = tf.contrib.layers.l2_regularizer(1e-4)
    net = tf.contrib.layers.fully_connected(x, 8, weights_regularizer=regularizer, scope="fc1")
    return tf.contrib.layers.fully_connected(net, 1, activation_fn=None, scope="out")


def main(_):
    tf.set_random_seed(1)
    paths = write_shards(FLAGS.data_dir)
    x, y = inputs(paths, FLAGS.batch_size)
    prediction = inference(x)
    loss = tf.losses.mean_squared_error(y, prediction) + tf.add_n(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES))
    global_step = tf.train.get_or_create_global_step()
    optimizer = tf.contrib.opt.AdamWOptimizer(weight_decay=1e-4, learning_rate=0.02)
    train_op = optimizer.minimize(loss, global_step=global_step)

    config = tf.ConfigProto()
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    custom_op.parameter_map["use_off_line"].b = True
    config.graph_options.rewrite_options.remapping = RewriterConfig.OFF

    saver = tf.train.Saver()
    losses = []
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        try:
            for _ in range(FLAGS.max_steps):
                _, loss_value = sess.run([train_op, loss])
                losses.append(float(loss_value))
        finally:
            coord.request_stop()
            coord.join(threads)
        checkpoint = saver.save(sess, os.path.join(FLAGS.data_dir, "model.ckpt"), global_step=global_step)
    print(
        "RESULT "
        + json.dumps({"name": "queue_train", "value": {"losses": losses, "checkpoint": os.path.basename(checkpoint)}})
    )


if __name__ == "__main__":
    tf.app.run()
