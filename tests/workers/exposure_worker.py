"""Forms a 2-rank world, then waits while a test plays a client outside the job.

Rank 0 writes its server's port into READY_FILE once every rank has arrived (one allreduce done), then every rank
waits (at most 120 s) for RELEASE_FILE to exist and finishes with a second allreduce, reporting both sums.

Usage: exposure_worker.py READY_FILE RELEASE_FILE
"""

import os
import sys
import time

from helpers.collectives import report

from npu_bridge.npu_init import *  # noqa: F401,F403

ready_file, release_file = sys.argv[1:3]
init_sess = tf.Session(config=npu_config_proto())
init_sess.run(npu_ops.initialize_system())
rank = get_rank_id()
sess = tf.Session(config=npu_config_proto())
total = hccl_ops.allreduce(tf.constant([rank + 1.0]), "sum")
report("first", sess.run(total))
if rank == 0:
    port = int(os.environ["HCCL_IF_BASE_PORT"])
    with open(ready_file + ".tmp", "w", encoding="ascii") as f:
        f.write(str(port))
    os.replace(ready_file + ".tmp", ready_file)
deadline = time.monotonic() + 120
while not os.path.exists(release_file) and time.monotonic() < deadline:
    time.sleep(0.1)
report("second", sess.run(total))
