"""Speed of TF2 scripts under ``npu_device``, against baselines measured in the same run.

1. A Keras ``fit`` step and a ``tf.function`` training step of a 784-512-512-10 MLP (batch 64) with
   ``npu_device.open().as_default()`` and no option set, against the same steps without the adapter's passes.
   Both run in one process, blocks interleaved: TensorFlow instantiates a function once per function-call
   configuration, so switching the thread's call configuration between the context's own (as before ``open()``)
   and the adapter's runs the same Python steps on the two optimized graphs. Ratio = median over blocks of
   baseline time / adapter time (target >= 0.97).
2. Mixed precision on the function graphs: ``precision_mode=allow_mix_precision`` against the same steps without
   the passes (float32), the same way. Ratio = mixed time / float32 time (target <= 1.3 on cpu, as the TF1
   precision benchmark).
3. ``npu_device.distribute.all_reduce`` in a ``tf.function`` on 2 ranks (npu-run) at 1, 16 and 64 MiB against
   TensorFlow's own ``CollectiveReduceV2`` in a ``tf.function`` on the same data, blocks interleaved in the
   rank processes. Ratio = raw time / adapter time (target >= 0.95).

Run: python benchmarks/tf2_adapter.py [--blocks 15] [--steps 20] [--collective-blocks 8]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

MIB = 1 << 20
SIZES_MIB = (1, 16, 64)
REPEATS = {1: 20, 16: 4, 64: 2}


def _environment():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (root, here, os.environ.get("PYTHONPATH")) if p))
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    return env


def _child(steps, blocks, precision_mode):
    """Runs parts 1 or 2 in a new process; returns {"fit": [ratio per block], "function": [...]}."""
    command = [sys.executable, os.path.abspath(__file__), "--child", "steps", "--steps", str(steps)]
    command += ["--blocks", str(blocks), "--precision-mode", precision_mode]
    result = subprocess.run(command, env=_environment(), capture_output=True, text=True, timeout=1800, check=False)
    if result.returncode != 0:
        raise SystemExit(f"the run failed:\n{result.stderr[-3000:]}")
    line = next(line for line in result.stdout.splitlines() if line.startswith("RATIOS "))
    return json.loads(line[len("RATIOS ") :])


def _steps(steps, blocks, precision_mode):
    """The child of parts 1 and 2: adapter time / baseline time per block, for a fit step and a function step."""
    import numpy as np
    import tensorflow as tf
    from tensorflow.core.protobuf import config_pb2
    from tensorflow.python.eager import context

    import npu_device

    ctx = context.context()
    plain = config_pb2.ConfigProto.FromString(ctx.function_call_options.config_proto_serialized)
    if precision_mode:
        npu_device.global_options().precision_mode = precision_mode
    npu_device.open().as_default()
    adapter = config_pb2.ConfigProto.FromString(ctx.function_call_options.config_proto_serialized)
    rng = np.random.RandomState(0)
    images = rng.rand(64 * steps, 784).astype(np.float32)
    labels = rng.randint(0, 10, 64 * steps)
    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential(
        [
            tf.keras.layers.Dense(512, activation="relu"),
            tf.keras.layers.Dense(512, activation="relu"),
            tf.keras.layers.Dense(10),
        ]
    )
    loss = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    model.compile(optimizer=tf.keras.optimizers.SGD(0.01), loss=loss)
    optimizer = tf.keras.optimizers.SGD(0.01)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            value = loss(y, model(x, training=True))
        optimizer.apply_gradients(zip(tape.gradient(value, model.trainable_variables), model.trainable_variables))
        return value

    batches = [(tf.constant(images[i : i + 64]), tf.constant(labels[i : i + 64])) for i in range(0, 64 * steps, 64)]

    def use(config):
        options = ctx.function_call_options
        options.config_proto_serialized = config
        ctx.function_call_options = options

    def fit_time():
        start = time.perf_counter()
        model.fit(images, labels, batch_size=64, epochs=1, verbose=0, shuffle=False)
        return (time.perf_counter() - start) / steps

    def function_time():
        start = time.perf_counter()
        for x, y in batches:
            train_step(x, y)
        train_step(*batches[0]).numpy()
        return (time.perf_counter() - start) / (steps + 1)

    for config in (plain, adapter):  # trace, optimize and warm up both
        use(config)
        fit_time(), function_time()
    ratios = {"fit": [], "function": []}
    for block in range(blocks):
        times = {}
        for name, config in [("plain", plain), ("adapter", adapter)][:: 1 if block % 2 == 0 else -1]:
            use(config)
            times[name] = (fit_time(), function_time())
        ratios["fit"].append(times["adapter"][0] / times["plain"][0])
        ratios["function"].append(times["adapter"][1] / times["plain"][1])
    print("RATIOS " + json.dumps(ratios))


def _collectives(blocks):
    """The rank side of part 3 (under npu-run): prints one line per size on rank 0."""
    import numpy as np
    import tensorflow as tf

    import npu_device

    npu_device.open().as_default()
    world = npu_device.global_npu_ctx()
    results = {}
    for size in SIZES_MIB:
        data = tf.constant(np.full(size * MIB // 4, world.worker_id + 1.0, np.float32))
        instance = 1000 + size

        @tf.function
        def adapter(x):
            return npu_device.distribute.all_reduce(x, "sum")

        @tf.function
        def raw(x, instance=instance):
            return tf.raw_ops.CollectiveReduceV2(
                input=x,
                group_size=world.workers_num,
                group_key=99,
                instance_key=instance,
                ordering_token=[],
                merge_op="Add",
                final_op="Id",
            )

        for run in (adapter, raw):
            run(data).numpy()
        times = {"adapter": [], "raw": []}
        for block in range(blocks):
            for name in ("adapter", "raw") if block % 2 == 0 else ("raw", "adapter"):
                run = adapter if name == "adapter" else raw
                start = time.perf_counter()
                for _ in range(REPEATS[size]):
                    run(data).numpy()
                times[name].append((time.perf_counter() - start) / REPEATS[size])
        results[size] = statistics.median(r / a for r, a in zip(times["raw"], times["adapter"]))
    if world.worker_id == 0:
        for size, ratio in results.items():
            print(f"all_reduce {size:>2} MiB: raw / adapter = {ratio:.3f}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blocks", type=int, default=15, help="interleaved blocks (parts 1 and 2)")
    parser.add_argument("--steps", type=int, default=20, help="training steps per block and configuration")
    parser.add_argument("--collective-blocks", type=int, default=8, help="interleaved blocks per size (part 3)")
    parser.add_argument("--child", choices=("steps", "collectives"), help=argparse.SUPPRESS)
    parser.add_argument("--precision-mode", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child == "collectives":
        return _collectives(args.collective_blocks)
    if args.child:
        return _steps(args.steps, args.blocks, args.precision_mode)
    print("1. npu_device.open().as_default(), no option set, against the same steps without the passes")
    for what, values in _child(args.steps, args.blocks, "").items():
        print(f"{what} step: baseline / adapter = {1 / statistics.median(values):.3f} (target >= 0.97)")
    print("2. allow_mix_precision against the same steps in float32 without the passes")
    for what, values in _child(args.steps, args.blocks, "allow_mix_precision").items():
        print(f"{what} step: mixed / float32 = {statistics.median(values):.3f} (target <= 1.3 on cpu)")
    print("3. distribute.all_reduce in a tf.function on 2 ranks against raw CollectiveReduceV2 (target >= 0.95)")
    command = [sys.executable, "-m", "npu_bridge.core.launch", "-n", "2", "--", sys.executable, __file__]
    command += ["--child", "collectives", "--collective-blocks", str(args.collective_blocks)]
    result = subprocess.run(command, env=_environment(), capture_output=True, text=True, timeout=1800, check=False)
    lines = [line.split("] ", 1)[-1] for line in result.stdout.splitlines() if "all_reduce" in line]
    print("\n".join(lines) if lines else f"the collective job failed:\n{result.stderr[-3000:]}")
    return 0 if result.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
