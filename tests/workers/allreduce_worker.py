"""One allreduce of (rank + 1); reports it with the world this rank sees."""

import os

from helpers.collectives import report

from npu_bridge.npu_init import *  # noqa: F401,F403

init_sess = tf.Session(config=npu_config_proto())
init_sess.run(npu_ops.initialize_system())
rank = get_rank_id()
report(
    "world", [rank, get_rank_size(), get_local_rank_id(), get_local_rank_size(), int(os.environ.get("DEVICE_ID", "-1"))]
)
total = hccl_ops.allreduce(tf.constant([rank + 1.0]), "sum")
report("ops", sorted({op.type for op in tf.get_default_graph().get_operations() if op.type.startswith("Hcom")}))
report("sum", tf.Session(config=npu_config_proto()).run(total))
