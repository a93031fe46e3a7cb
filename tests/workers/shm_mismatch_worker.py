"""Rank r allreduces a tensor of 4 + r elements: the ranks disagree on the shape. Reports the error each rank sees,
then whether a later collective fails at once."""

import time

from helpers.collectives import report

from npu_bridge.core.runtime.errors import CollectiveError
from npu_bridge.npu_init import *  # noqa: F401,F403

init_sess = tf.Session(config=npu_config_proto())
init_sess.run(npu_ops.initialize_system())
rank = get_rank_id()
mismatched = hccl_ops.allreduce(tf.ones([4 + rank], tf.int32), "sum")  # int: no gradient wrapper
fine = hccl_ops.allreduce(tf.ones([4], tf.int32), "sum")
report("type", mismatched.op.type)
sess = tf.Session(config=npu_config_proto())
try:
    sess.run(mismatched)
    report("error", None)
except CollectiveError as error:
    report("error", str(error))
started = time.monotonic()
try:
    sess.run(fine)
    report("second_error", None)
except CollectiveError as error:
    report("second_error", str(error))
report("second_error_seconds", time.monotonic() - started)
