"""A world allreduce run in a session that is not bridged (no NpuOptimizer, no npu_init): reports the timeout
the op was built with and how the run ended."""

import time

import tensorflow as tf
from helpers.collectives import report

import npu_bridge  # noqa: F401  (switches npu_bridge on; this session stays unbridged all the same)
from npu_bridge.hccl import hccl_ops

tf.compat.v1.disable_eager_execution()
reduced = hccl_ops.allreduce(tf.constant([1.0]), "sum")
report(
    "timeouts",
    [
        op.get_attr("timeout_seconds")
        for op in reduced.graph.get_operations()
        if op.type in ("CollectiveReduce", "HcomShmAllReduce")
    ],
)
started = time.monotonic()
try:
    tf.compat.v1.Session().run(reduced)
    report("ended", "finished")
except tf.errors.DeadlineExceededError:
    report("ended", "DeadlineExceededError")
report("seconds", time.monotonic() - started)
