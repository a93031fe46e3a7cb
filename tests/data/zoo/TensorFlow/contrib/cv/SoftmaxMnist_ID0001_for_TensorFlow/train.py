"""A TF1 softmax classifier on MNIST in the zoo's style: tutorial input_data, flags, an NpuOptimizer session."""
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
    b = tf.get_variable("b", [10], initializer=tf.zeros_initializer())
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=tf.matmul(x, w) + b))
    train_op = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    config = tf.ConfigProto()
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    with tf.Session(config=npu_config_proto(config_proto=config)) as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(FLAGS.steps):
            images, labels = mnist.train.next_batch(FLAGS.batch_size)
            _, value = sess.run([train_op, loss], feed_dict={x: images, y: labels})
            print("step %d loss %.4f" % (step, value))


if __name__ == "__main__":
    tf.app.run()
