"""A training loop of allreduces in which rank VICTIM dies (mode "kill") or hangs (mode "hang") at step 3.

Usage: fault_worker.py MODE VICTIM. The victim prints "FAULT <monotonic time>" first. A rank whose collective
fails reports the error and the error of the next collective, then exits with code 1.
"""

import os
import signal
import sys
import time

from helpers.collectives import report

from npu_bridge.core.runtime.errors import CollectiveError
from npu_bridge.npu_init import *  # noqa: F401,F403

mode, victim = sys.argv[1], int(sys.argv[2])
init_sess = tf.Session(config=npu_config_proto())
init_sess.run(npu_ops.initialize_system())
rank = get_rank_id()
total = hccl_ops.allreduce(tf.ones([1000]) * (rank + 1), "sum")
print(
    "COLLECTIVES",
    sorted(
        {
            op.type
            for op in tf.get_default_graph().get_operations()
            if "Collective" in op.type or op.type.startswith("Hcom")
        }
    ),
    flush=True,
)
sess = tf.Session(config=npu_config_proto())
for step in range(1000):
    if rank == victim and step == 3:
        print(f"FAULT {time.monotonic()}", flush=True)
        if mode == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(3600)
    try:
        sess.run(total)
    except CollectiveError as error:
        report("error", str(error))
        started = time.monotonic()
        try:
            sess.run(total)
        except CollectiveError as second:
            report("second_error", str(second))
            report("second_error_seconds", time.monotonic() - started)
        sys.exit(1)
    time.sleep(0.05)
