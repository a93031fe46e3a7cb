"""A long job on TensorFlow's gRPC collective path: 2 ranks (npu-run, ``NPU_BRIDGE_COLLECTIVES=tf``) run --steps
``Session.run``s of a 4-float allreduce through each rank's gRPC master, and each rank says how many finished.

TensorFlow 2.21 alone fails such a job after tens of thousands of steps with ``AbortedError: The same RunGraph
(Worker) request was received twice`` (its request ids come from generators seeded with 32 bits; see
``npu_bridge/core/collectives/request_ids.py``). About 1 ms per step on 2 cores.

Run: PYTHONPATH=. python benchmarks/long_grpc_job.py [--steps 300000]
"""

import argparse
import os
import subprocess
import sys

RANK_SCRIPT = r"""
import sys, time
from npu_bridge.npu_init import get_rank_id, hccl_ops, npu_config_proto, npu_ops, tf

tf.Session(config=npu_config_proto()).run(npu_ops.initialize_system())
op = hccl_ops.allreduce(tf.constant([1.0, 2.0, 3.0, 4.0]), "sum").op
sess = tf.Session(config=npu_config_proto())
steps = int(sys.argv[1])
start = time.perf_counter()
for step in range(steps):
    try:
        sess.run(op)
    except tf.errors.OpError as error:
        last = error.message.splitlines()[-1][:200]
        print(f"STEPS {step} of {steps} failed: {type(error).__name__}: {last}", flush=True)
        sys.exit(1)
print(f"STEPS {steps} of {steps} finished, {(time.perf_counter() - start) / steps * 1e3:.3f} ms each", flush=True)
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300000)
    args = parser.parse_args()
    if args.steps < 1:
        parser.error(f"--steps must be >= 1, got {args.steps}")
    env = dict(os.environ, NPU_BRIDGE_COLLECTIVES="tf", TF_CPP_MIN_LOG_LEVEL="2")
    command = [sys.executable, "-m", "npu_bridge.core.launch", "-n", "2", "--"]
    command += [sys.executable, "-c", RANK_SCRIPT, str(args.steps)]
    job = subprocess.run(command, env=env, capture_output=True, text=True, timeout=args.steps * 0.02 + 300)
    lines = [line for line in job.stdout.splitlines() if "] STEPS " in line]
    print("\n".join(lines) if lines else job.stderr[-3000:])
    return job.returncode


if __name__ == "__main__":
    sys.exit(main())
