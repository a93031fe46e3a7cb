"""Cost of the diagnosis tools: source lines, compare --isolate, the stall watcher.

1. Recording where ops were created: building a training graph of --layers dense layers (forward, gradients,
   optimizer) vs looking up the creation site of every op its dump holds files for (dump_mode=all), from the
   dump-file name, as the dump does when the op's files appear. Ratio = lookup / build (target <= 0.05). Also
   shown: writing each op's op_graph.json entry (its NodeDef, for --isolate). Steps cost nothing more: each op
   is looked up once (step time with dump on: benchmarks/dump.py).
2. `npu-dump compare --isolate` on the dumps of examples/find_precision_culprit.py (226 ops, fp16 vs float32),
   the whole command as a user runs it (target: under a minute); and rerunning every compared op, not only the
   named ones, in one process (the worst case).
3. The stall watcher on a 2-rank job (npu-run): seconds per session run of a 4 KiB allreduce with
   NPU_BRIDGE_STALL_SECONDS at its default vs 0 (off), jobs alternating, --pairs pairs. Ratio = on / off
   (target: within noise, <= 1.05). The watcher adds nothing to a run itself (the watchdog records each run with
   or without it); it looks at the runs four times a second from the watchdog's thread, so its cost is also
   shown as the time of one look, and the share of a core four looks a second take.

Run: python benchmarks/diagnosis.py [--layers 60] [--repeats 5] [--pairs 5] [--runs 300]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(REPO, "examples", "find_precision_culprit.py")
_ALLREDUCE_RUNS = """
import statistics, sys, time
from npu_bridge.npu_init import *
tf.Session(config=npu_config_proto()).run(npu_ops.initialize_system())
sess = tf.Session(config=npu_config_proto())
total = hccl_ops.allreduce(tf.ones([1024]), "sum")
for _ in range(20):
    sess.run(total)
times = []
for _ in range({runs}):
    start = time.perf_counter()
    sess.run(total)
    times.append(time.perf_counter() - start)
print("SECONDS_PER_RUN", statistics.median(times), flush=True)
"""


def _environment(**extra):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (REPO, os.environ.get("PYTHONPATH")) if p))
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    env.update(extra)
    return env


def recording_cost(layers, repeats, directory):
    """(ops in the graph, ops dumped, median seconds to build the graph, to look up the creation site of every op
    its dump holds, to record their op_graph.json entries) for a training graph of ``layers`` dense layers. Each
    graph is new, so nothing is cached for it; one step of the first is dumped (dump_mode=all) to learn which ops
    a dump holds files for."""
    import tensorflow as tf
    from bench_util import npu_config

    import npu_bridge  # noqa: F401
    from npu_bridge.core import dump
    from npu_bridge.core.dump import dump_names, op_graph, op_sources

    v1 = tf.compat.v1
    builds, sites, entries, dumped = [], [], [], None
    for _ in range(repeats):
        start = time.perf_counter()
        graph = tf.Graph()
        with graph.as_default():
            x = hidden = v1.placeholder(tf.float32, [32, 64], name="x")
            for index in range(layers):
                hidden = v1.layers.dense(hidden, 64, activation=tf.nn.relu, name=f"dense_{index}")
            loss = tf.reduce_mean(tf.square(hidden))
            train = v1.train.AdamOptimizer(1e-3).minimize(loss)
            init = v1.global_variables_initializer()
        builds.append(time.perf_counter() - start)
        if dumped is None:
            config = npu_config(enable_dump=True, dump_path=directory, dump_mode="all", dump_step="0")
            with v1.Session(graph=graph, config=config) as session:
                session.run(init)
                session.run(train, {x: np.ones((32, 64), np.float32)})
            dump.flush()
            names = (dump_names.parse(name) for _, _, files in os.walk(directory) for name in files)
            dumped = sorted({name.op_name for name in names if name is not None and name.kind == "dump"})
        start = time.perf_counter()
        op_sources.note_graph(graph)
        found = [op_sources.site_of_file_name(name) for name in dumped]
        sites.append(time.perf_counter() - start)
        start = time.perf_counter()
        for name, _ in filter(None, found):
            op_graph.record(op_sources.operation(name))
        entries.append(time.perf_counter() - start)
    ops = len(graph.get_operations())
    return ops, len(dumped), statistics.median(builds), statistics.median(sites), statistics.median(entries)


def _dump_example(directory, name, extra_options):
    path = os.path.join(directory, name)
    os.mkdir(path)
    options = {"enable_dump": True, "dump_path": path, "dump_step": "0", "dump_mode": "all", **extra_options}
    env = _environment(NPU_BRIDGE_DEVICE_TARGET="ascend", NPU_BRIDGE_OPTIONS=json.dumps(options))
    subprocess.run([sys.executable, EXAMPLE], env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return path


def isolate_cost(directory):
    """(seconds of the compare --isolate command, ops it reran, seconds to rerun every compared op, ops)."""
    mine = _dump_example(directory, "fp16", {})
    truth = _dump_example(directory, "fp32", {"precision_mode": "must_keep_origin_dtype"})
    command = [sys.executable, "-m", "npu_bridge.core.dump.cli", "compare", mine, truth, "--isolate"]
    command += ["-o", os.path.join(directory, "r.csv")]
    start = time.perf_counter()
    ran = subprocess.run(command, env=_environment(), capture_output=True, text=True, check=False)
    command_seconds = time.perf_counter() - start
    if ran.returncode not in (0, 1):
        raise SystemExit(f"npu-dump compare failed: {ran.stderr[-2000:]}")
    section = ran.stdout.split("isolated reruns", 1)[-1]
    named = sum(1 for line in section.splitlines() if line.startswith("  #"))

    from npu_bridge.core import dump
    from npu_bridge.core.dump import isolate

    start = time.perf_counter()
    comparison = dump.compare(mine, truth)
    keys = sorted({row.key[0] for row in comparison.compared})
    results = isolate.rerun(comparison, keys=keys)
    every_seconds = time.perf_counter() - start
    rerun = sum(1 for found in results if not found.reason)
    return command_seconds, named, every_seconds, rerun, len(keys)


def stall_tick_cost(repeats=20000):
    """Seconds of one ``StallWatch.tick`` with a run in flight that changes every time (the costliest case that
    writes nothing: no status directory)."""
    from npu_bridge.core.collectives import stall_watch

    class Run:
        started, timeout, step, collectives, stalled = 0.0, 1836, 0, None, False

        @staticmethod
        def describe():
            return "allreduce"

    watch = stall_watch.StallWatch(0, 60)
    runs = [[Run()] for _ in range(repeats)]
    start = time.perf_counter()
    for index in range(repeats):
        watch.tick(1.0 + index * 1e-6, runs[index], None)
    return (time.perf_counter() - start) / repeats


def stall_watch_cost(pairs, runs):
    """{"on": [seconds per run], "off": [...]} of 2-rank allreduce jobs, alternating."""
    found = {"on": [], "off": []}
    script = _ALLREDUCE_RUNS.format(runs=runs)
    for _ in range(pairs):
        for label, value in (("on", "60"), ("off", "0")):
            command = [sys.executable, "-m", "npu_bridge.core.launch", "-n", "2", "--", sys.executable, "-c", script]
            env = _environment(NPU_BRIDGE_STALL_SECONDS=value)
            ran = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, check=False)
            lines = [line for line in ran.stdout.splitlines() if "SECONDS_PER_RUN" in line]
            if ran.returncode != 0 or len(lines) != 2:
                raise SystemExit(f"the allreduce job failed: {ran.stdout[-1500:]}{ran.stderr[-1500:]}")
            found[label].append(statistics.mean(float(line.split()[-1]) for line in lines))
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=60)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--runs", type=int, default=300)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as directory:
        ops, dumped, build, sites, entries = recording_cost(args.layers, args.repeats, directory)
    print(
        f"1. creation sites: a graph of {ops} ops built in {build * 1e3:.0f} ms; the sites of the {dumped} ops its "
        f"dump holds looked up in {sites * 1e3:.0f} ms: ratio {sites / build:.3f} (target <= 0.05); their "
        f"op_graph.json entries: {entries * 1e3:.0f} ms ({entries / build:.3f} of the build)"
    )
    with tempfile.TemporaryDirectory() as directory:
        command, named, every, rerun, compared = isolate_cost(directory)
    print(
        f"2. npu-dump compare --isolate on a {compared}-op dump: {command:.1f} s for the command ({named} ops "
        f"rerun; target < 60 s); every op rerun in one process: {every:.1f} s ({rerun} of {compared} ops rerun)"
    )
    tick = stall_tick_cost()
    print(f"3. stall watcher: one look at the runs {tick * 1e6:.2f} us; four a second take {4 * tick:.2e} of a core")
    stall = stall_watch_cost(args.pairs, args.runs)
    on, off = statistics.median(stall["on"]), statistics.median(stall["off"])
    print(
        f"   4 KiB allreduce per session run, 2 ranks: stall watcher on {on * 1e3:.3f} ms, off {off * 1e3:.3f} ms: "
        f"ratio {on / off:.3f} (target <= 1.05; pairs: on {[round(v * 1e3, 3) for v in stall['on']]}, "
        f"off {[round(v * 1e3, 3) for v in stall['off']]} ms)"
    )


if __name__ == "__main__":
    main()
