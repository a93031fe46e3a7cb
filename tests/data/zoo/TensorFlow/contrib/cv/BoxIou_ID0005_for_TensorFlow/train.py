"""A TF1 MNIST trainer with YOLOv2's kind of summary, in the zoo's style: allow_mix_precision, and a histogram of an
IoU whose empty boxes divide 0 by tf.maximum(area, 1e-10), which is 0 in fp16. On Ascend, saturation mode makes that
0 / 0 a 0; under IEEE rules it is NaN, and the histogram refuses it."""
import tensorflow as tf
from npu_bridge.npu_init import *
from tensorflow.examples.tutorials.mnist import input_data

flags = tf.app.flags
flags.DEFINE_string("data_dir", "", "MNIST folder")
flags.DEFINE_integer("batch_size", 32, "batch size")
flags.DEFINE_integer("steps", 100, "training steps")
FLAGS = flags.FLAGS


def main(_):
    mnist = input_data.read_data_sets(FLAGS.data_dir, one_hot=True)
    x = tf.placeholder(tf.float32, [None, 784])
    y = tf.placeholder(tf.float32, [None, 10])
    w = tf.get_variable("w", [784, 10], initializer=tf.zeros_initializer())
    logits = tf.matmul(x, w)
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=logits))
    size = tf.nn.relu(-tf.abs(logits))  # boxes of no area: 0 wide and 0 high
    area = size * size
    iou = tf.minimum(size, 1.0) * tf.minimum(size, 1.0) / tf.maximum(area, 1e-10)
    summary = tf.summary.histogram("iou", iou)
    train_op = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    config = tf.ConfigProto()
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes("allow_mix_precision")
    with tf.Session(config=npu_config_proto(config_proto=config)) as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(FLAGS.steps):
            images, labels = mnist.train.next_batch(FLAGS.batch_size)
            _, value, _ = sess.run([train_op, loss, summary], feed_dict={x: images, y: labels})
            print("step %d loss %.4f" % (step, value))


if __name__ == "__main__":
    tf.app.run()
