"""Every hccl_ops operation on every rank of the job; prints what each returned (checked by test_collectives_ops)."""

import time

import numpy as np
from helpers.collectives import report, vector, weights

from npu_bridge.npu_init import *  # noqa: F401,F403

DTYPES = ("float32", "float16", "int32")
BIG = 300_001  # int32 elements: 1.2 MB
BIG_GATHER = 655_363  # int32 elements per rank: 2.6 MB

init_sess = tf.Session(config=npu_config_proto())
init_sess.run(npu_ops.initialize_system())
rank, size = get_rank_id(), get_rank_size()
fetches = {}

for dtype in DTYPES:
    x = tf.constant(vector(rank, dtype))
    for reduction in ("sum", "prod", "max", "min"):
        fetches[f"allreduce_{reduction}_{dtype}"] = hccl_ops.allreduce(x, reduction)
    fetches[f"allgather_{dtype}"] = hccl_ops.allgather(tf.reshape(x, [1, 6]), size)
    rows = tf.concat([x + tf.cast(10 * j, x.dtype) for j in range(size)], 0)  # slice j of every rank: x + 10 j
    fetches[f"reduce_scatter_{dtype}"] = hccl_ops.reduce_scatter(rows, "sum", size)
# Large enough for several chunks of the shared-memory engine and its split reductions (two ranks halve each
# piece; 3+ split it in parts); an odd length, so the halves differ
big = tf.range(BIG, dtype=tf.int32) % 1000 * (rank + 1)
for reduction in ("sum", "max"):
    fetches[f"big_{reduction}"] = tf.reduce_sum(tf.cast(hccl_ops.allreduce(big, reduction), tf.int64))
fetches["big_float16"] = hccl_ops.allreduce(tf.cast(big % 7, tf.float16), "sum")[-1001:]
# Three chunks per rank, the last one partial: each row weighted by position, so a piece copied to the wrong
# place changes the sums
spread = (tf.range(BIG_GATHER, dtype=tf.int32) * 7 + 13 * rank) % 100003
positions = tf.cast(tf.range(BIG_GATHER) % 5 + 1, tf.int64)
gathered_rows = hccl_ops.allgather(tf.reshape(spread, [1, BIG_GATHER]), size)
fetches["big_allgather"] = tf.reduce_sum(tf.cast(gathered_rows, tf.int64) * positions, axis=1)
big_rows = tf.concat([big + j for j in range(size)], 0)  # slice j of every rank: big + j
fetches["big_reduce_scatter"] = tf.reduce_sum(tf.cast(hccl_ops.reduce_scatter(big_rows, "sum", size), tf.int64))
fetches["reduce_scatter_max"] = hccl_ops.reduce_scatter(tf.constant(np.tile(vector(rank), size)), "max", size)
fetches["allreduce_int8"] = hccl_ops.allreduce(tf.constant([100, 3], tf.int8), "sum")
fetches["allgather_uint8"] = hccl_ops.allgather(tf.constant([[rank, 255]], tf.uint8), size)
fetches["broadcast"] = hccl_ops.broadcast(
    [tf.constant(vector(rank)), tf.constant([[rank] * 3], tf.int32), tf.constant(vector(rank, "float16"))],
    root_rank=size - 1,
)
fetches["reduce"] = hccl_ops.reduce(tf.constant(vector(rank)), "sum", root_rank=0)
# The root's tensor comes from an earlier collective, and the group's first rank only receives (runs of its own,
# ten: in each, a receiver's side is ready before the sum)
broadcast_of_a_sum = hccl_ops.broadcast(
    [hccl_ops.allreduce(tf.constant(vector(rank)), "sum") * (rank + 1)], root_rank=size - 1
)[0]

# send / receive around the ring, in a run of their own: each rank's transfers differ from its neighbours'
ring = {
    "send": hccl_ops.send(tf.constant(vector(rank)), sr_tag=3, dest_rank=(rank + 1) % size),
    "receive": hccl_ops.receive([6], tf.float32, sr_tag=3, src_rank=(rank - 1) % size),
}

# all_to_all_v: rank r sends r + j + 1 elements to rank j
counts = tf.placeholder(tf.int64, [size])
recv_counts = tf.placeholder(tf.int64, [size])
data = tf.range(100, dtype=tf.float32) + 1000 * rank
fetches_a2a = hccl_ops.all_to_all_v(
    data, counts, tf.cumsum(counts, exclusive=True), recv_counts, tf.cumsum(recv_counts, exclusive=True)
)
matrix = np.array([[(i + j) % 3 + 1 for j in range(size)] for i in range(size)], dtype=np.int64)
fetches["all_to_all_v_c"] = hccl_ops.all_to_all_v_c(tf.range(20, dtype=tf.int32) + 100 * rank, matrix, rank)

# gradients (loss of each rank: sum(w_r * op(x_r)))
xg = tf.constant(vector(rank))
w = tf.constant(weights(rank))
for name, op in (
    ("allreduce_sum", lambda t: hccl_ops.allreduce(t, "sum")),
    ("allreduce_max", lambda t: hccl_ops.allreduce(t, "max")),
    ("allreduce_prod", lambda t: hccl_ops.allreduce(t, "prod")),
    ("broadcast", lambda t: hccl_ops.broadcast([t], 0)[0]),
):
    fetches[f"grad_{name}"] = tf.gradients(tf.reduce_sum(w * op(xg)), xg)[0]
gathered = hccl_ops.allgather(tf.reshape(xg, [1, 6]), size)
fetches["grad_allgather"] = tf.gradients(
    tf.reduce_sum(
        tf.reshape(tf.tile(w, [size]), [size, 6]) * tf.cast(tf.range(1, size + 1), tf.float32)[:, None] * gathered
    ),
    xg,
)[0]
scattered = hccl_ops.reduce_scatter(tf.tile(xg, [size]), "sum", size)
fetches["grad_reduce_scatter"] = tf.gradients(tf.reduce_sum(w * scattered), xg)[0]

# groups: halves of the world (or single ranks with 2 ranks)
half = size // 2
first = list(range(half))
mine, other = (first, list(range(half, size))) if rank < half else (list(range(half, size)), first)
create_group("mine", len(mine), mine)
fetches["group_allreduce"] = hccl_ops.allreduce(tf.constant(vector(rank)), "sum", group="mine")
fetches["group_allgather"] = hccl_ops.allgather(tf.constant([[float(rank)]]), len(mine), group="mine")
fetches["group_rank"] = tf.constant(get_rank_id("mine"))

graph_ops = tf.get_default_graph().get_operations()
report("collective_types", sorted({op.type for op in graph_ops if op.type.startswith(("Hcom", "Collective"))}))
sess = tf.Session(config=npu_config_proto())
values = sess.run(fetches)
if rank == 2:
    # Rank 2 comes late to its first run of a send / receive: with 4 ranks, rank 0 meets only ranks 1 and 3 and can
    # finish before rank 2 starts (every rank must still agree on the run's step id on TensorFlow's path)
    time.sleep(1.5)
values["receive"] = sess.run(ring)["receive"]
for _ in range(10):
    values["broadcast_of_a_sum"] = sess.run(broadcast_of_a_sum)
# A run with a world collective next to groups that interleave (ranks 0 and 2 in one, 1 and 3 in the other): each
# rank's subgroup has other members, so the run's instance keys differ between ranks.
parity = [r for r in range(size) if r % 2 == rank % 2]
create_group("parity", len(parity), parity)
values["parity_and_world"] = sess.run(
    [
        hccl_ops.allreduce(tf.constant(vector(rank)), "sum", group="parity"),
        hccl_ops.allreduce(tf.constant([1.0]), "sum"),
    ]
)
for name, value in values.items():
    report(name, value)
for n in (1, 5):  # two sizes: two power-of-two buckets of the same op
    sent = [rank + j + n for j in range(size)]
    received = [j + rank + n for j in range(size)]
    got = sess.run(fetches_a2a, {counts: sent, recv_counts: received})
    report(f"all_to_all_v_{n}", got)
init_sess.run(npu_ops.shutdown_system())
