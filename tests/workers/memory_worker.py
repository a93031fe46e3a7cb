"""RUNS allreduce runs after WARM warm-up runs; reports the resident memory each run left behind (KB per run).

Usage: memory_worker.py RUNS WARM [loop]. With "loop" the allreduce sits in a tf.while_loop of 3 iterations,
which keeps its own op timeout (the run is not bounded as a whole).
"""

import sys

from helpers.collectives import report

from npu_bridge.npu_init import *  # noqa: F401,F403


def resident_kb():
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS in /proc/self/status")


runs, warm = int(sys.argv[1]), int(sys.argv[2])
tf.Session(config=npu_config_proto()).run(npu_ops.initialize_system())
if len(sys.argv) > 3 and sys.argv[3] == "loop":
    reduced = tf.while_loop(
        lambda i, x: i < 3, lambda i, x: (i + 1, hccl_ops.allreduce(x, "sum")), [tf.constant(0), tf.ones([4])]
    )[1]
else:
    reduced = hccl_ops.allreduce(tf.ones([4]), "sum")
sess = tf.Session(config=npu_config_proto())
for _ in range(warm):
    value = sess.run(reduced)
before = resident_kb()
for _ in range(runs):
    sess.run(reduced)
report("kb_per_run", (resident_kb() - before) / runs)
report("value", value)
