"""``hccl_ops.broadcast`` on variables, run once with its result ignored, as scripts do: every rank starts from
rank-dependent values and reports its variables afterwards. Checked by test_broadcast_variables."""

import numpy as np
from helpers.collectives import report

from npu_bridge.npu_init import *  # noqa: F401,F403

init_sess = tf.Session(config=npu_config_proto())
init_sess.run(npu_ops.initialize_system())
rank = get_rank_id()


def variable(name, shape, start, use_resource, dtype=tf.float32):
    """A trainable variable whose initial value depends on the rank: start * (rank + 1)."""
    return tf.compat.v1.get_variable(
        name, shape, dtype, initializer=tf.constant_initializer(start * (rank + 1)), use_resource=use_resource
    )


# 1. The script pattern: the trainable variables (ref and resource), root 0, result ignored.
ref_w = variable("ref_w", [2, 3], 1.0, use_resource=False)
res_b = variable("res_b", [4], 10.0, use_resource=True)
ref_h = variable("ref_h", [3], 2.0, use_resource=False, dtype=tf.float16)
broadcast_trainables = hccl_ops.broadcast(tf.trainable_variables(), 0)

# 2. Tensors rather than Variable objects: a ref tensor, a resource variable's ReadVariableOp and a constant,
#    root 1; the result is fetched, the constant is broadcast but nothing is written.
with tf.compat.v1.variable_scope("by_tensor"):
    ref_t = variable("ref_t", [2], 100, use_resource=False, dtype=tf.int32)
    res_t = variable("res_t", [2], 1000.0, use_resource=True)
    ref_s = variable("ref_s", [2], 5.0, use_resource=False)
copy = tf.identity(ref_s.value())
by_tensor = hccl_ops.broadcast(
    [ref_t.op.outputs[0], tf.convert_to_tensor(res_t), tf.constant([rank, rank]), copy], root_rank=1
)

sess = tf.Session(config=npu_config_proto())
sess.run(tf.global_variables_initializer())
sess.run(broadcast_trainables)
report("ref_w", sess.run(ref_w))
report("res_b", sess.run(res_b))
report("ref_h", sess.run(ref_h).astype(np.float32))
result = sess.run(by_tensor)
report("by_tensor_result", [np.asarray(r, np.float64) for r in result])
report("ref_t", sess.run(ref_t))
report("res_t", sess.run(res_t))
report("ref_s", sess.run(ref_s))
