"""Methods TensorFlow 2.21 keeps only as stubs that raise, given back by the TF1 mode's ``aliases`` with 1.15's
behaviour: values in a session."""

import tensorflow as tf

v1 = tf.compat.v1


def test_a_resource_variable_initialized_from_another_ones_initialized_value_as_in_1_15():
    from npu_bridge.core.tf1 import aliases

    aliases.add()
    with tf.Graph().as_default():
        w = v1.get_variable("w", initializer=tf.constant([1.0, 2.0]), use_resource=True)
        ema = v1.get_variable("ema", initializer=w.initialized_value(), use_resource=True)
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())  # ema's initializer runs whether w's ran first or not
            assert sess.run(ema).tolist() == [1.0, 2.0]
            sess.run(w.assign([5.0, 6.0]))
            assert sess.run(w.initialized_value()).tolist() == [5.0, 6.0]  # once initialized: the value now
