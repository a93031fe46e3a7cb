"""Cost of data dump and overflow detection.

1. Step time of an MLP training loop with enable_dump on but dump_step never selecting the step, vs the same
   loop without dump (both bridged sessions in the Ascend style, remapping off). Target ratio <= 1.05.
2. Dump write throughput: tensor bytes per second the dump adds to a run that dumps every step (time of the
   dumping run including the final flush, minus the same run without dump), vs np.save of the same tensors
   to the same disk. Target ratio >= 0.7. By default the dump writes each tensor twice (the Ascend dump file
   and the golden .npy), so it is also measured with NPU_BRIDGE_DUMP_GOLDEN=0.
3. Step time of the MLP training loop with enable_dump_debug (overflow detection) vs without. Target <= 1.3.
4. What an unselected step costs per dumped op, on a chain of 200 scalar additions whose compute hides
   nothing (a precise version of 1 when the machine is too noisy for a 5% ratio).
Sessions are measured in interleaved blocks in one process; medians are reported. Dirty pages are synced to
disk before each throughput measurement, so one measurement does not pay for the previous one's writeback.

Run: python benchmarks/dump.py [--blocks 15] [--steps 30] [--dump-steps 5] [--repeats 8] [--dir DIR]
"""

import argparse
import functools
import os
import shutil
import statistics
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import bench_util  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from bench_util import build_mlp, interleaved_times, median_ratio  # noqa: E402
from tensorflow.core.protobuf import rewriter_config_pb2  # noqa: E402

import npu_bridge  # noqa: E402,F401
from npu_bridge.core import dump  # noqa: E402

v1 = tf.compat.v1
v1.disable_eager_execution()


def npu_config(**options):
    config = bench_util.npu_config(**options)
    config.graph_options.rewrite_options.remapping = rewriter_config_pb2.RewriterConfig.OFF  # as Ascend scripts do
    return config


def interleaved_step_times(configs, blocks, steps):
    """Median seconds per training step of each config, measured in alternating blocks."""
    graph, train, init, feed = build_mlp(batch=128, inputs=784, hidden=512)
    sessions = {name: v1.Session(graph=graph, config=config) for name, config in configs.items()}
    for sess in sessions.values():
        sess.run(init)
        for _ in range(steps):  # warm-up: graph optimization, allocator
            sess.run(train, feed)
    times = interleaved_times(
        {name: functools.partial(sess.run, train, feed) for name, sess in sessions.items()}, blocks, steps
    )
    for sess in sessions.values():
        sess.close()
    return {name: statistics.median(samples) for name, samples in times.items()}


def per_op_cost(blocks, ops=200):
    """(plain, dump not selected) seconds per run of a chain of ``ops`` scalar additions, where the
    instrumentation's cost is not hidden by compute; constant folding is off in both."""
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [])
        y = x
        for _ in range(ops):
            y = tf.add(y, 1.0)
    work = tempfile.mkdtemp(prefix="npu_dump_bench_")
    configs = {"plain": npu_config(), "dump": npu_config(enable_dump=True, dump_path=work, dump_step="1000000000")}
    for config in configs.values():
        rewrite = config.graph_options.rewrite_options
        rewrite.constant_folding = rewrite.arithmetic_optimization = rewriter_config_pb2.RewriterConfig.OFF
    sessions = {name: v1.Session(graph=graph, config=config) for name, config in configs.items()}
    try:
        for sess in sessions.values():
            for _ in range(50):
                sess.run(y, {x: 1.0})
        times = interleaved_times(
            {name: functools.partial(sess.run, y, {x: 1.0}) for name, sess in sessions.items()}, blocks, 50
        )
    finally:
        for sess in sessions.values():
            sess.close()
        shutil.rmtree(work, ignore_errors=True)
    return statistics.median(times["plain"]), statistics.median(times["dump"])


def build_chain(size=1024, ops=8):
    """ops elementwise ops on a size x size float32 input; returns graph, input, outputs."""
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [size, size], name="x")
        outputs, current = [], x
        for i in range(ops):
            current = tf.add(current, float(i), name=f"op{i}")
            outputs.append(current)
    return graph, x, outputs


def throughput(dump_steps, repeats, directory=None):
    """Median tensor bytes/s of the dump with golden files, without them and of np.save, and the medians of
    the per-repeat ratios to np.save. Each repeat runs the four measurements in a rotated order, so no
    configuration always comes first after the previous one's files were deleted."""
    graph, x, outputs = build_chain()
    value = np.random.RandomState(0).rand(1024, 1024).astype(np.float32)
    tensor_bytes = 4 * 1024 * 1024 * len(outputs) * dump_steps
    with v1.Session(graph=graph, config=npu_config()) as sess:
        fetched = [sess.run(outputs, {x: value}) for _ in range(dump_steps)]
    work = tempfile.mkdtemp(prefix="npu_dump_bench_", dir=directory)

    def dumped(golden):
        target = tempfile.mkdtemp(dir=work)
        os.environ["NPU_BRIDGE_DUMP_GOLDEN"] = golden
        seconds = _timed_run(graph, x, outputs, value, npu_config(enable_dump=True, dump_path=target), dump_steps)
        shutil.rmtree(target)
        return seconds

    def saved():
        target = tempfile.mkdtemp(dir=work)
        os.sync()
        start = time.perf_counter()
        for step, arrays in enumerate(fetched):
            for index, array in enumerate(arrays):
                np.save(os.path.join(target, f"op{index}.{step}.npy"), array)
        seconds = time.perf_counter() - start
        shutil.rmtree(target)
        return seconds

    measurements = {
        "plain": lambda: _timed_run(graph, x, outputs, value, npu_config(), dump_steps),
        "golden": lambda: dumped("1"),
        "no golden": lambda: dumped("0"),
        "np.save": saved,
    }
    names = list(measurements)
    rates = {"golden": [], "no golden": [], "np.save": []}
    try:
        for repeat in range(repeats):
            order = names[repeat % len(names) :] + names[: repeat % len(names)]
            seconds = {name: measurements[name]() for name in order}
            for name in ("golden", "no golden"):
                rates[name].append(tensor_bytes / max(seconds[name] - seconds["plain"], 1e-9))
            rates["np.save"].append(tensor_bytes / seconds["np.save"])
    finally:
        os.environ.pop("NPU_BRIDGE_DUMP_GOLDEN", None)
        shutil.rmtree(work, ignore_errors=True)
    medians = {name: statistics.median(samples) for name, samples in rates.items()}
    ratios = {name: median_ratio(rates[name], rates["np.save"]) for name in ("golden", "no golden")}
    return medians, ratios


def _timed_run(graph, x, outputs, value, config, steps):
    with v1.Session(graph=graph, config=config) as sess:
        sess.run(outputs, {x: value})  # graph optimization outside the measurement; step 0 is dumped then
        dump.flush()
        os.sync()  # every measurement starts without dirty pages of the previous one
        start = time.perf_counter()
        for _ in range(steps):
            sess.run(outputs, {x: value})
        dump.flush()
        return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blocks", type=int, default=15, help="interleaved measurement blocks per session")
    parser.add_argument("--steps", type=int, default=30, help="training steps per block")
    parser.add_argument("--dump-steps", type=int, default=5, help="steps of one throughput measurement (32 MiB each)")
    parser.add_argument("--repeats", type=int, default=8, help="throughput measurements")
    parser.add_argument("--dir", help="directory on the disk to measure (default: the system's temporary directory)")
    args = parser.parse_args()

    work = tempfile.mkdtemp(prefix="npu_dump_bench_")
    try:
        same_rewrites = npu_config()
        same_rewrites.graph_options.rewrite_options.arithmetic_optimization = rewriter_config_pb2.RewriterConfig.OFF
        times = interleaved_step_times(
            {
                "plain": npu_config(),
                "plain, arithmetic optimizer off": same_rewrites,
                "dump, step not selected": npu_config(enable_dump=True, dump_path=work, dump_step="1000000000"),
                "overflow detection": npu_config(enable_dump_debug=True, dump_path=work),
            },
            args.blocks,
            args.steps,
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    plain, same = times["plain"], times["plain, arithmetic optimizer off"]
    unselected, detecting = times["dump, step not selected"], times["overflow detection"]
    print(
        f"step time: plain {plain * 1e3:.3f} ms; with dump enabled, step not selected {unselected * 1e3:.3f} ms, "
        f"ratio {unselected / plain:.3f} (target <= 1.05)"
    )
    print(
        f"  (dumping sessions turn TensorFlow's arithmetic optimizer off; plain with it off {same * 1e3:.3f} ms, "
        f"ratio {unselected / same:.3f})"
    )
    print(f"step time: overflow detection on {detecting * 1e3:.3f} ms, ratio {detecting / plain:.3f} (target <= 1.3)")
    chain_plain, chain_dump = per_op_cost(args.blocks)
    print(
        f"unselected step, cost per dumped op: {(chain_dump - chain_plain) / 200 * 1e6:.2f} us (200 scalar ops: "
        f"plain {chain_plain * 1e6:.0f} us, dump enabled {chain_dump * 1e6:.0f} us per run)"
    )
    rates, ratios = throughput(args.dump_steps, args.repeats, args.dir)
    print(
        f"write throughput (tensor bytes): np.save {rates['np.save'] / 1e9:.2f} GB/s; dump with golden .npy "
        f"files {rates['golden'] / 1e9:.2f} GB/s, ratio {ratios['golden']:.2f}; dump without them "
        f"(NPU_BRIDGE_DUMP_GOLDEN=0) {rates['no golden'] / 1e9:.2f} GB/s, ratio {ratios['no golden']:.2f} "
        "(target >= 0.7)"
    )
    print(
        f"  with golden files every tensor reaches the disk twice: bytes written {2 * rates['golden'] / 1e9:.2f} "
        f"GB/s, ratio {2 * ratios['golden']:.2f} to np.save"
    )


if __name__ == "__main__":
    main()
