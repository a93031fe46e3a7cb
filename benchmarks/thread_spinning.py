"""What turning TensorFlow's thread spinning off gives ranks that share a host: the same 2-rank jobs with
``NPU_BRIDGE_THREAD_SPINNING=1`` (TensorFlow's spinning, the baseline) and ``auto`` (off: several ranks on this
host), jobs alternating, medians of --pairs pairs. Each job measures, on rank 0:

- a 4 KiB and a 1 MiB allreduce within a step (33 chained in one ``Session.run``, less a run of one, over 32);
- one ``Session.run`` of a 4 KiB and of a 1 MiB allreduce;
- a compute-bound data-parallel step: a 4-layer MLP (batch 256, width 1024) whose gradients are allreduced;
- in a TF2 job (``npu_device``): a 4 KiB ``all_reduce`` within a ``tf.function`` (33 chained, less a call of one,
  over 32) and one call of a ``tf.function`` with one.

Ratio = baseline time / time with spinning off (above 1: faster without spinning).

Run: PYTHONPATH=. python benchmarks/thread_spinning.py [--pairs 3]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

RANK_SCRIPT = r"""
import json, time
import numpy as np
from npu_bridge.npu_init import get_rank_id, hccl_ops, npu_allreduce, npu_config_proto, npu_ops, tf

tf.Session(config=npu_config_proto()).run(npu_ops.initialize_system())
rank = get_rank_id()


def per_run(sess, op, runs):
    for _ in range(max(3, runs // 10)):
        sess.run(op)
    start = time.perf_counter()
    for _ in range(runs):
        sess.run(op)
    return (time.perf_counter() - start) / runs


ops = {}
for name, nbytes in (("4 KiB", 4096), ("1 MiB", 1 << 20)):
    x = tf.Variable(tf.fill([nbytes // 4], float(rank + 1)))
    chain = {}
    for length in (1, 33):
        y = x
        for _ in range(length):
            y = hccl_ops.allreduce(y, "max")
        chain[length] = y.op
    ops[name] = chain
rng = np.random.RandomState(rank)
h = tf.constant(rng.rand(256, 1024).astype(np.float32))
for _ in range(4):
    h = tf.compat.v1.layers.dense(h, 1024, activation=tf.nn.relu)
loss = tf.reduce_mean(tf.square(tf.compat.v1.layers.dense(h, 10)))
sgd = tf.compat.v1.train.GradientDescentOptimizer(0.01)
pairs = sgd.compute_gradients(loss)
train = sgd.apply_gradients(zip(npu_allreduce([g for g, _ in pairs]), [v for _, v in pairs]))
sess = tf.Session(config=npu_config_proto())
sess.run(tf.compat.v1.global_variables_initializer())
result = {}
for name, chain in ops.items():
    one, many = per_run(sess, chain[1], 300), per_run(sess, chain[33], 100)
    result[f"allreduce {name} within a step"] = (many - one) / 32
    result[f"allreduce {name}, one Session.run"] = one
result["MLP data-parallel step"] = per_run(sess, train, 30)
if rank == 0:
    print("RESULT " + json.dumps(result), flush=True)
"""


TF2_RANK_SCRIPT = r"""
import json, time
import tensorflow as tf
import npu_device

npu_device.open().as_default()
rank = npu_device.global_npu_ctx().worker_id
x = tf.fill([1024], float(rank + 1))


def chained(length):
    @tf.function
    def run(y):
        for _ in range(length):
            y = npu_device.distribute.all_reduce(y, "max")
        return y

    return run


def per_call(function, calls):
    for _ in range(max(3, calls // 10)):
        function(x).numpy()
    start = time.perf_counter()
    for _ in range(calls):
        function(x).numpy()
    return (time.perf_counter() - start) / calls


one, many = chained(1), chained(33)
one_call = per_call(one, 300)
result = {
    "TF2: all_reduce 4 KiB within a tf.function": (per_call(many, 100) - one_call) / 32,
    "TF2: all_reduce 4 KiB, one tf.function call": one_call,
}
if rank == 0:
    print("RESULT " + json.dumps(result), flush=True)
"""


def _job(spinning, script):
    env = dict(os.environ, NPU_BRIDGE_THREAD_SPINNING=spinning, TF_CPP_MIN_LOG_LEVEL="2")
    command = [sys.executable, "-m", "npu_bridge.core.launch", "-n", "2", "--", sys.executable, "-c", script]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    for line in done.stdout.splitlines():
        if line.startswith("[rank 0] RESULT "):
            return json.loads(line.split("RESULT ", 1)[1])
    raise SystemExit(f"the job with NPU_BRIDGE_THREAD_SPINNING={spinning} failed:\n{done.stderr[-3000:]}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=3)
    args = parser.parse_args()
    if args.pairs < 1:
        parser.error(f"--pairs must be >= 1, got {args.pairs}")
    samples = {"1": [], "auto": []}
    started = time.monotonic()
    for pair in range(args.pairs):
        for spinning in ("1", "auto") if pair % 2 == 0 else ("auto", "1"):
            samples[spinning].append({**_job(spinning, RANK_SCRIPT), **_job(spinning, TF2_RANK_SCRIPT)})
        print(f"pair {pair + 1} of {args.pairs} done ({time.monotonic() - started:.0f} s)", file=sys.stderr, flush=True)
    print(f"2 ranks on {os.cpu_count()} cores; medians of {args.pairs} alternating job pairs")
    width = max(len(key) for key in samples["1"][0])
    print(f"  {'':{width}s} {'spinning (1)':>13s} {'off (auto)':>12s} {'ratio':>7s}")
    for key in samples["1"][0]:
        on, off = (statistics.median(s[key] for s in samples[v]) for v in ("1", "auto"))
        print(f"  {key:{width}s} {on * 1e3:10.3f} ms {off * 1e3:9.3f} ms {on / off:7.2f}")


if __name__ == "__main__":
    main()
