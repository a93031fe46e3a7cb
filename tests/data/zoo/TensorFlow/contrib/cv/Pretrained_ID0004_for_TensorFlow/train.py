"""Fine-tunes from pretrained weights the harness cannot make: it stops at the restore."""
import sys

import tensorflow as tf

weights = sys.argv[1].split("=", 1)[1]
w = tf.get_variable("w", [4])
saver = tf.train.Saver()
with tf.Session() as sess:
    saver.restore(sess, weights)
