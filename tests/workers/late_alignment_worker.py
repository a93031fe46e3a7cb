"""Rank 1 starts its collective server but never creates a session that runs collectives through TensorFlow;
rank 0 creates one and reports how the wait for rank 1's alignment of step sequences ended."""

import time

import tensorflow as tf
from helpers.collectives import report

from npu_bridge.core.collectives import server
from npu_bridge.core.runtime.errors import CollectiveError
from npu_bridge.core.world import world
from npu_bridge.npu_init import npu_config_proto

current = world.environment_world()
if current.rank_id == 1:
    server.ensure_started(current)
    time.sleep(12)  # longer than rank 0's HCCL_CONNECT_TIMEOUT
    report("ended", "slept")
else:
    started = time.monotonic()
    try:
        tf.compat.v1.Session(config=npu_config_proto())
        report("ended", "created")
    except CollectiveError as e:
        report("ended", str(e))
    report("seconds", time.monotonic() - started)
