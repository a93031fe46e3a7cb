"""Where TensorFlow 2.21 refuses what 1.15 ran, the TF1 mode gives 1.15's behaviour back: methods 2.21 keeps only
as stubs that raise (``aliases``), random ops without a seed under determinism (``random_seeds``)."""

import helpers.tf1
import pytest
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


UNSEEDED_UNDER_DETERMINISM = """
import json, os
os.environ['TF_DETERMINISTIC_OPS'] = '1'  # FasterRcnn of the zoo, before importing TensorFlow
import tensorflow as tf
data = tf.data.Dataset.range(8).shuffle(8).batch(8)
values = tf.compat.v1.data.make_one_shot_iterator(data).get_next()
noise = tf.random.uniform([3])
with tf.Session() as sess:
    shuffled, drawn = sess.run([values, noise])
print("RESULT " + json.dumps({"shuffled": sorted(shuffled.tolist()), "drawn": len(drawn)}))
"""


@pytest.mark.slow
def test_random_ops_without_a_seed_run_under_tf_deterministic_ops_as_in_1_15(tmp_path):
    found = helpers.tf1.run_tf1_script(tmp_path, UNSEEDED_UNDER_DETERMINISM)
    assert found == {"shuffled": list(range(8)), "drawn": 3}
