"""Speed of the HCCL collectives across 2 rank processes (loopback gRPC), against baselines in the same run.

1. hccl_ops.allreduce of 1, 16 and 64 MiB float32 vs raw TensorFlow CollectiveReduce on the same data, in the
   same session, blocks interleaved. Ratio = raw time / hccl_ops time (target >= 0.95).
2. Gradient allreduce of a 100-variable model: fused by the default split strategy (what
   NPUDistributedOptimizer does) vs one collective per tensor. Ratio = per-tensor time / fused time
   (target >= 3).
3. np.copyto of the same sizes: the memory bandwidth of this machine, the ceiling for any transport.
4. Memory: resident KB a run leaves behind, over MEMORY_RUNS allreduces of 4 floats, hccl_ops vs raw
   CollectiveReduce without and with an op timeout (TensorFlow keeps a timer per execution of a collective with
   a timeout until it expires). Target <= 0.5 KB per run for hccl_ops: a long job's memory stays flat.
5. Start: seconds from starting `npu-run -n 2` to rank 0's first finished allreduce, with the ranks in their
   private network (the default) vs `--share-network` (the baseline), alternating, --starts pairs. Target: the
   private network adds at most 0.5 s.

Run: python benchmarks/collectives.py [--blocks 10] [--ranks 2] [--starts 5]
(it starts its ranks with npu-run; rank 0 prints the results of 1-4, the launching process those of 5)
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

MIB = 1 << 20
SIZES_MIB = (1, 16, 64)
REPEATS = {1: 30, 16: 4, 64: 2}
MEMORY_RUNS = 5000
_FIRST_ALLREDUCE = (
    "from npu_bridge.npu_init import *\n"
    "tf.Session(config=npu_config_proto()).run(npu_ops.initialize_system())\n"
    "tf.Session(config=npu_config_proto()).run(hccl_ops.allreduce(tf.constant([1.0]), 'sum'))\n"
    "print('FIRST_ALLREDUCE_DONE', flush=True)\n"
)


def _environment():
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join(p for p in (os.path.dirname(here), os.environ.get("PYTHONPATH")) if p)
    )
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    return env


def _launch(args):
    command = [
        sys.executable,
        "-m",
        "npu_bridge.core.launch",
        "-n",
        str(args.ranks),
        "--",
        sys.executable,
        os.path.abspath(__file__),
        "--blocks",
        str(args.blocks),
    ]
    return subprocess.run(command, env=_environment(), check=False).returncode


def _seconds_to_first_allreduce(ranks, launcher_args):
    command = [sys.executable, "-m", "npu_bridge.core.launch", "-n", str(ranks), *launcher_args, "--"]
    start = time.perf_counter()
    job = subprocess.Popen(
        command + [sys.executable, "-c", _FIRST_ALLREDUCE],
        env=_environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    seconds = None
    for line in job.stdout:
        if seconds is None and line.startswith("[rank 0] FIRST_ALLREDUCE_DONE"):
            seconds = time.perf_counter() - start
    if job.wait() != 0 or seconds is None:
        raise SystemExit(f"the start benchmark's job failed (exit code {job.returncode})")
    return seconds


def _start_times(ranks, pairs):
    times = {"private": [], "shared": []}
    for _ in range(pairs):
        times["private"].append(_seconds_to_first_allreduce(ranks, []))
        times["shared"].append(_seconds_to_first_allreduce(ranks, ["--share-network"]))
    private, shared = (statistics.median(times[k]) for k in ("private", "shared"))
    return "\n".join(
        [
            f"start: npu-run -n {ranks} to rank 0's first finished allreduce, medians of {pairs} alternating pairs",
            f"  --share-network (baseline):       {shared:7.2f} s",
            f"  private network (default):        {private:7.2f} s",
            f"  private - shared:                 {private - shared:+7.2f} s (target <= 0.5 s)",
            f"  ratio private/shared:             {private / shared:7.2f}",
        ]
    )


def _copy_bandwidth(nbytes, np):
    source = np.ones(nbytes // 4, np.float32)
    target = np.empty_like(source)
    np.copyto(target, source)
    repeats = max(3, 256 * MIB // nbytes)
    start = time.perf_counter()
    for _ in range(repeats):
        np.copyto(target, source)
    return nbytes / ((time.perf_counter() - start) / repeats)


def _resident_kb():
    with open("/proc/self/status", encoding="ascii") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


def _retained_kb_per_run(sess, op):
    for _ in range(500):  # caches and allocator pools reach their size first
        sess.run(op)
    before = _resident_kb()
    for _ in range(MEMORY_RUNS):
        sess.run(op)
    return (_resident_kb() - before) / MEMORY_RUNS


def run_rank(blocks):
    import numpy as np
    from bench_util import interleaved_times  # imports TensorFlow

    from npu_bridge.core.collectives import keys
    from npu_bridge.core.world import groups
    from npu_bridge.npu_init import get_rank_id, get_rank_size, hccl_ops, npu_allreduce, npu_config_proto, npu_ops, tf

    init = tf.Session(config=npu_config_proto())
    init.run(npu_ops.initialize_system())
    rank, size = get_rank_id(), get_rank_size()

    def raw_allreduce(x, group_key, timeout_seconds=0):
        return tf.raw_ops.CollectiveReduce(
            input=x,
            group_size=size,
            group_key=group_key,
            instance_key=keys.instance_key(group_key),
            merge_op="Add",
            final_op="Id",
            subdiv_offsets=[0],
            timeout_seconds=timeout_seconds,
        ).op

    world_key = groups.group_key("raw CollectiveReduce baseline", range(size))  # a group of its own
    ours, raw = {}, {}
    for mib in SIZES_MIB:
        x = tf.Variable(tf.fill([mib * MIB // 4], float(rank + 1)))
        ours[mib] = hccl_ops.allreduce(x, "sum").op
        raw[mib] = raw_allreduce(x, world_key)
    small = tf.constant([1.0, 2.0, 3.0, 4.0])
    small_ours = hccl_ops.allreduce(small, "sum").op
    small_key = groups.group_key("raw CollectiveReduce memory", range(size))
    small_raw = raw_allreduce(small, small_key)
    small_raw_timeout = raw_allreduce(small, small_key, timeout_seconds=1836)
    grads = [tf.Variable(tf.ones([100 + 40 * i])) for i in range(100)]  # 100 "gradients", 0.8 MiB in all
    fused = tf.group(*npu_allreduce(grads))
    per_tensor = tf.group(*npu_allreduce(grads, fusion=0))
    sess = tf.Session(config=npu_config_proto())
    sess.run(tf.global_variables_initializer())
    for op in [*ours.values(), *raw.values(), fused, per_tensor, small_ours, small_raw, small_raw_timeout]:
        sess.run(op)  # warm up: group and instance resolution

    def interleaved(runs, repeats):
        return {name: statistics.median(samples) for name, samples in interleaved_times(runs, blocks, repeats).items()}

    lines = [
        f"{size} ranks, loopback gRPC; median of {blocks} interleaved blocks",
        "",
        "allreduce float32   hccl_ops       raw CollectiveReduce   ratio raw/hccl_ops   np.copyto (ceiling)",
    ]
    for mib in SIZES_MIB:
        t = interleaved({"ours": lambda m=mib: sess.run(ours[m]), "raw": lambda m=mib: sess.run(raw[m])}, REPEATS[mib])
        copy = _copy_bandwidth(mib * MIB, np)
        lines.append(
            f"{mib:>4} MiB           {t['ours'] * 1e3:8.1f} ms    {t['raw'] * 1e3:8.1f} ms            "
            f"{t['raw'] / t['ours']:6.3f}               {copy / 1e9:6.1f} GB/s  "
            f"(allreduce: {mib * MIB / t['ours'] / 1e9:.2f} GB/s)"
        )
    t = interleaved({"fused": lambda: sess.run(fused), "per_tensor": lambda: sess.run(per_tensor)}, 5)
    lines += [
        "",
        "gradient allreduce, 100 variables (0.8 MiB)",
        f"  fused (default split 96.54/3.46): {t['fused'] * 1e3:7.1f} ms per step",
        f"  one collective per tensor:        {t['per_tensor'] * 1e3:7.1f} ms per step",
        f"  ratio per-tensor/fused:           {t['per_tensor'] / t['fused']:7.1f}x",
    ]
    memory_ops = {"hccl_ops": small_ours, "raw": small_raw, "raw, timeout_seconds=1836": small_raw_timeout}
    retained = {name: _retained_kb_per_run(sess, op) for name, op in memory_ops.items()}
    lines += ["", f"memory retained per run ({MEMORY_RUNS} allreduces of 4 floats; target <= 0.5 KB for hccl_ops)"]
    lines += [f"  {name:28s} {kb:6.2f} KB" for name, kb in retained.items()]
    if rank == 0:
        print("\n".join(lines), flush=True)
    init.run(npu_ops.shutdown_system())


def main(argv=None):
    parser = argparse.ArgumentParser(description="HCCL collective benchmark (starts its own ranks)")
    parser.add_argument("--blocks", type=int, default=10)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--starts", type=int, default=5, help="pairs of job starts for part 5 (0: skip it)")
    args = parser.parse_args(argv)
    if "RANK_ID" not in os.environ:
        code = _launch(args)
        if code == 0 and args.starts > 0:
            print(_start_times(args.ranks, args.starts), flush=True)
        return code
    run_rank(args.blocks)
    return 0


if __name__ == "__main__":
    sys.exit(main())
