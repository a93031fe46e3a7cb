"""One rank of a one-host job: the target its bridged sessions get, and what a TensorFlow collective says in a
session that runs without the rank's server, and whether TensorFlow's threads spin (checked by
test_collectives_shm)."""

import os

from helpers.collectives import report

from npu_bridge.core.runtime.errors import CollectiveError
from npu_bridge.npu_init import *  # noqa: F401,F403

tf.Session(config=npu_config_proto()).run(npu_ops.initialize_system())
x = tf.constant([float(get_rank_id() + 1)])
on_segment = hccl_ops.allreduce(x, "sum")
config = npu_config_proto()
sess = tf.Session(config=config)
report("target", sess.sess_str.decode())
report("spinning_off", sess._config.experimental.disable_thread_spinning)  # the config TensorFlow got
report("user_config_spinning_off", config.experimental.disable_thread_spinning)
report("sum", sess.run(on_segment))
os.environ["NPU_BRIDGE_COLLECTIVES"] = "tf"  # later collectives and sessions: TensorFlow's path
os.environ["NPU_BRIDGE_THREAD_SPINNING"] = "1"  # and TensorFlow's thread spinning
through_tensorflow = hccl_ops.allreduce(x, "sum")
try:
    sess.run(through_tensorflow)
    report("error", None)
except CollectiveError as error:
    report("error", str(error))
tf_sess = tf.Session(config=npu_config_proto())
report("tf_target", tf_sess.sess_str.decode())
report("tf_spinning_off", tf_sess._config.experimental.disable_thread_spinning)
report("tf_sum", tf_sess.run(through_tensorflow))
report("sum_again", sess.run(on_segment))
