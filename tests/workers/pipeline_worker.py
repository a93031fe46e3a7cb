"""A pipeline over the ranks with send / receive, in one session run per step: rank 0 sends forward, each rank
doubles what it receives and passes it on, the last rank sends it back with 1 added, and every rank on the way
back adds 1. A rank's receive from behind is ready before its send forward (it has no input), so the transfers of
one direction must not wait for the other's. Reports what rank 0 got back in the last of STEPS steps."""

import sys

import numpy as np
from helpers.collectives import report

from npu_bridge.npu_init import *  # noqa: F401,F403

ELEMENTS = 800_000  # 3.2 MB: several chunks of the shared-memory engine
steps = int(sys.argv[1])
init_sess = tf.Session(config=npu_config_proto())
init_sess.run(npu_ops.initialize_system())
rank, size = get_rank_id(), get_rank_size()
last = size - 1
fetches = {}
if rank == 0:
    fetches["forward"] = hccl_ops.send(tf.fill([ELEMENTS], 1.0), sr_tag=1, dest_rank=1)
    fetches["back"] = hccl_ops.receive([ELEMENTS], tf.float32, sr_tag=2, src_rank=1)
else:
    got = hccl_ops.receive([ELEMENTS], tf.float32, sr_tag=1, src_rank=rank - 1)
    if rank < last:
        fetches["forward"] = hccl_ops.send(got * 2, sr_tag=1, dest_rank=rank + 1)
        back = hccl_ops.receive([ELEMENTS], tf.float32, sr_tag=2, src_rank=rank + 1)
    else:
        back = got
    fetches["backward"] = hccl_ops.send(back + 1, sr_tag=2, dest_rank=rank - 1)
fetches["types"] = tf.constant(
    sorted({op.type for op in tf.get_default_graph().get_operations() if "Bcast" in op.type or "Broadcast" in op.type})
)
sess = tf.Session(config=npu_config_proto())
for _ in range(steps):
    values = sess.run(fetches)
report("types", [v.decode() for v in values["types"]])
if rank == 0:
    back = np.asarray(values["back"])
    report("back", [float(back.min()), float(back.max())])
init_sess.run(npu_ops.shutdown_system())
