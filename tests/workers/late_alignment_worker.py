"""Rank 1 starts its collective server but never creates a session that runs collectives through TensorFlow;
rank 0 creates one, with HCCL_CONNECT_TIMEOUT=3, and reports how the wait for rank 1's alignment of step sequences
ended."""

import os
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
    time.sleep(8)  # longer than the 3 s rank 0 then waits
    report("ended", "slept")
else:
    server.ensure_started(current)  # both servers are up: only the alignment is left to wait for
    os.environ["HCCL_CONNECT_TIMEOUT"] = "3"
    started = time.monotonic()
    try:
        tf.compat.v1.Session(config=npu_config_proto())
        report("ended", "created")
    except CollectiveError as e:
        report("ended", str(e))
    report("seconds", time.monotonic() - started)
