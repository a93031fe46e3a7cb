"""STEPS steps of an allreduce of 4 floats, one of 2 MiB, an allgather and a broadcast on every rank (more ranks
than cores: the waits must sleep, not spin); reports what the last step returned."""

import sys

import numpy as np
from helpers.collectives import report

from npu_bridge.npu_init import *  # noqa: F401,F403

steps = int(sys.argv[1])
init_sess = tf.Session(config=npu_config_proto())
init_sess.run(npu_ops.initialize_system())
rank, size = get_rank_id(), get_rank_size()
fetches = {
    "small": hccl_ops.allreduce(tf.fill([4], float(rank + 1)), "sum"),
    "large": tf.reduce_sum(hccl_ops.allreduce(tf.fill([512 * 1024], float(rank + 1)), "max")),
    "gathered": hccl_ops.allgather(tf.fill([1, 2], rank), size)[:, 0],
    "broadcast": hccl_ops.broadcast([tf.fill([3], rank)], root_rank=size - 1)[0],
    "types": tf.constant(sorted({op.type for op in tf.get_default_graph().get_operations() if "Shm" in op.type})),
}
sess = tf.Session(config=npu_config_proto())
for _ in range(steps):
    values = sess.run(fetches)
for name, value in values.items():
    report(name, [v.decode() for v in value] if name == "types" else np.asarray(value))
