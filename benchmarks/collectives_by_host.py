"""Speed of an allreduce, an allgather and a broadcast over a group that spans hosts: by host (the segment within
each host, TensorFlow across hosts on the host's share; the others TensorFlow across hosts first, then the segment)
against one TensorFlow collective over every rank (NPU_BRIDGE_COLLECTIVES=tf), in the same session, blocks
interleaved. An allgather's size is its result's (each rank gives size / ranks).

The two "hosts" are two npu-run launchers of a rank table whose two servers are both this machine (127.0.0.1), each
starting --per-host ranks: every byte between them goes through TensorFlow's gRPC runtime over loopback, as it would
between machines over their network (minus the network). Ratio: one-piece time / by-host time.

Run: python benchmarks/collectives_by_host.py [--blocks 5] [--per-host 2]
(it starts both launchers; rank 0 prints the table)
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

MIB = 1 << 20
SIZES = (4096, MIB, 16 * MIB, 64 * MIB)  # bytes
REPEATS = {4096: 50, MIB: 10, 16 * MIB: 2, 64 * MIB: 1}
OPERATIONS = ("allreduce", "allgather", "broadcast")


def _table(path, per_host):
    servers = [
        {
            "server_id": f"host-{s}",
            "host_ip": "127.0.0.1",
            "device": [{"device_id": str(d), "rank_id": str(per_host * s + d)} for d in range(per_host)],
        }
        for s in range(2)
    ]
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"status": "completed", "server_count": "2", "server_list": servers}, f)


def _launch(args):
    from npu_bridge.core.launch import plan

    here = os.path.dirname(os.path.abspath(__file__))
    paths = (os.path.dirname(here), os.environ.get("PYTHONPATH"))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in paths if p))
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    with tempfile.TemporaryDirectory() as tmp:
        table = os.path.join(tmp, "hccl.json")
        _table(table, args.per_host)
        base = str(plan.find_free_ports(2 * args.per_host))
        launchers = [
            subprocess.Popen(
                [sys.executable, "-m", "npu_bridge.core.launch", "--rank-table", table, "--server-id", f"host-{s}"]
                + ["--job-id", "by-host-benchmark", "--port-base", base, "--"]
                + [sys.executable, os.path.abspath(__file__), "--blocks", str(args.blocks)],
                env=env,
            )
            for s in range(2)
        ]
        return max(launcher.wait() for launcher in launchers)


def run_rank(blocks):
    from bench_util import interleaved_times  # imports TensorFlow
    from collectives import collective_path

    from npu_bridge.npu_init import (
        get_local_rank_size,
        get_rank_id,
        get_rank_size,
        hccl_ops,
        npu_config_proto,
        npu_ops,
        tf,
    )

    init = tf.Session(config=npu_config_proto())
    init.run(npu_ops.initialize_system())
    rank, size = get_rank_id(), get_rank_size()
    ops = {}
    for nbytes in SIZES:
        x = tf.Variable(tf.fill([nbytes // 4], float(rank + 1)))
        piece = tf.Variable(tf.fill([1, nbytes // 4 // size], float(rank + 1)))
        for path in ("auto", "tf"):
            with collective_path(path):
                ops["allreduce", path, nbytes] = hccl_ops.allreduce(x, "sum")
                ops["allgather", path, nbytes] = hccl_ops.allgather(piece, size)
                ops["broadcast", path, nbytes] = hccl_ops.broadcast([tf.identity(x)], root_rank=size - 1)[0]
    sess = tf.Session(config=npu_config_proto())
    sess.run(tf.global_variables_initializer())
    for path in ("auto", "tf"):  # also the warm-up: group and instance resolution
        for nbytes in SIZES:
            assert sess.run(ops["allreduce", path, nbytes])[0] == size * (size + 1) / 2
            assert sess.run(ops["allgather", path, nbytes])[:, 0].tolist() == [r + 1.0 for r in range(size)]
            assert sess.run(ops["broadcast", path, nbytes])[0] == size
    lines = [f"{size} ranks on 2 hosts ({get_local_rank_size()} per host); median of {blocks} interleaved blocks"]
    for operation in OPERATIONS:
        lines.append(f"{operation} float32   by host   one TF collective   one piece / by host")
        for nbytes in SIZES:
            runs = {path: (lambda op=ops[operation, path, nbytes].op: sess.run(op)) for path in ("auto", "tf")}
            samples = interleaved_times(runs, blocks, REPEATS[nbytes])
            by_host, flat = (statistics.median(samples[p]) for p in ("auto", "tf"))
            name = f"{nbytes // MIB} MiB" if nbytes >= MIB else f"{nbytes // 1024} KiB"
            lines.append(f"{name:>7}   {by_host * 1e3:10.2f} ms   {flat * 1e3:9.2f} ms   {flat / by_host:8.2f}x")
    if rank == 0:
        print("\n".join(lines), flush=True)
    init.run(npu_ops.shutdown_system())


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="allreduce, allgather and broadcast by host vs in one piece (starts its own two hosts)"
    )
    parser.add_argument("--blocks", type=int, default=5)
    parser.add_argument("--per-host", type=int, default=2, help="ranks per host (2 or more)")
    args = parser.parse_args(argv)
    if "RANK_ID" not in os.environ:
        return _launch(args)
    run_rank(args.blocks)
    return 0


if __name__ == "__main__":
    sys.exit(main())
