"""Speed of the HCCL collectives across rank processes on one host, against baselines in the same run.

1. hccl_ops.allreduce of 4 KiB, 1, 16 and 64 MiB float32 on the shared-memory path (the default under npu-run)
   vs hccl_ops on TensorFlow's gRPC path (NPU_BRIDGE_COLLECTIVES=tf) vs raw TensorFlow CollectiveReduce, in the
   same session, blocks interleaved. Ratios: gRPC time / shm time, and raw time / gRPC hccl_ops time (target
   >= 0.95); allgather and broadcast of 1 and 16 MiB on both paths.
   Within one step: IN_STEP allreduces of 4 KiB and 1 MiB, and IN_STEP broadcasts and allgathers of 1 MiB, one
   after the other in one Session.run on the shared-memory path, less a run of one, per collective: what a
   collective costs inside a training step, where the step's Session.run is paid once (the comparison with MPI's
   calls from Python, which pay no session).
2. Gradient allreduce of a 100-variable model: fused by the default split strategy (what
   NPUDistributedOptimizer does) vs one collective per tensor, on both paths. Ratios = per-tensor time / fused
   time (target >= 3), gRPC fused / shm fused (target >= 3).
3. np.copyto of the same sizes: the memory bandwidth of this machine, the ceiling for any transport.
4. Memory: resident KB a run leaves behind, over MEMORY_RUNS allreduces of 4 floats, hccl_ops vs raw
   CollectiveReduce without and with an op timeout (TensorFlow keeps a timer per execution of a collective with
   a timeout until it expires). Target <= 0.5 KB per run for hccl_ops: a long job's memory stays flat.
5. Start: seconds from starting `npu-run -n 2` to rank 0's first finished allreduce, with the ranks in their
   private network (the default) vs `--share-network` (the baseline), alternating, --starts pairs. Target: the
   private network adds at most 0.5 s.
6. Open MPI (mpi4py, the `bench` extra; needs an MPI library, e.g. apt-get install libopenmpi-dev openmpi-bin):
   Allreduce / Allgather / Bcast of the same sizes on the same number of ranks, started right after the npu-run
   job, against the shared-memory path measured alone (its own interleaved blocks, no gRPC-path runs between
   them, as MPI's job has none: a gRPC run leaves the runtime's threads busy for the runs after it). Ratios MPI
   time / shm time (targets: allreduce >= 0.7 of MPI's throughput at 16 and 64 MiB, <= 2x MPI's time at 1 MiB,
   <= 3x at 4 KiB; allgather and broadcast >= 0.5). Skipped when mpi4py or mpirun is missing.

Run: python benchmarks/collectives.py [--blocks 10] [--ranks 2] [--starts 5] [--one-by-one]
(it starts its ranks with npu-run, or with --one-by-one as a scheduler does, one process each, whose segment their
host's first rank keeps; rank 0 prints the results of 1-4, the launching process those of 5 and 6)
"""

import argparse
import contextlib
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

MIB = 1 << 20
SIZES = (4096, MIB, 16 * MIB, 64 * MIB)  # bytes
REPEATS = {4096: 200, MIB: 30, 16 * MIB: 4, 64 * MIB: 2}
MOVE_SIZES = (MIB, 16 * MIB)  # allgather (per rank) and broadcast
IN_STEP = 33  # collectives chained in one Session.run for the per-collective time within a step
IN_STEP_SIZES = (4096, MIB)
MEMORY_RUNS = 5000
PATH_VARIABLE = "NPU_BRIDGE_COLLECTIVES"
_SHM_TIME = re.compile(r"^\[rank 0\] SHM_TIME (\w+) (\d+) ([0-9.e+-]+)$")
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
    rank_command = [sys.executable, os.path.abspath(__file__), "--blocks", str(args.blocks)]
    if args.one_by_one:
        return _launch_one_by_one(args, rank_command)
    command = [sys.executable, "-m", "npu_bridge.core.launch", "-n", str(args.ranks), "--", *rank_command]
    return _read_rank_zero(subprocess.Popen(command, env=_environment(), stdout=subprocess.PIPE, text=True))


def _launch_one_by_one(args, rank_command):
    """Starts the ranks as a scheduler does, one process each without npu-run: their host's first rank keeps the
    segment (collectives/shm_keeper.py). Rank 0's output is read; the others' goes to stderr."""
    from npu_bridge.core.launch import plan

    env = dict(_environment(), RANK_SIZE=str(args.ranks), HCCL_IF_BASE_PORT=str(plan.find_free_ports(args.ranks)))
    env.pop("NPU_BRIDGE_SHM_FD", None)
    others = [
        subprocess.Popen(rank_command, env=dict(env, RANK_ID=str(r), DEVICE_ID=str(r)), stdout=sys.stderr)
        for r in range(1, args.ranks)
    ]
    first = subprocess.Popen(rank_command, env=dict(env, RANK_ID="0", DEVICE_ID="0"), stdout=subprocess.PIPE, text=True)
    try:
        code, shm_times = _read_rank_zero(first)
        for process in others:
            code = code or process.wait(timeout=600)
    finally:
        for process in (first, *others):
            if process.poll() is None:
                process.kill()
                process.wait()
    return code, shm_times


def _read_rank_zero(job):
    """Passes the job's output through, keeping the shm times rank 0 prints; returns (exit code, shm times)."""
    shm_times = {}
    for line in job.stdout:
        match = _SHM_TIME.match(line.rstrip("\n"))
        if match:
            shm_times[(match.group(1), int(match.group(2)))] = float(match.group(3))
        else:
            sys.stdout.write(line)
    sys.stdout.flush()
    return job.wait(), shm_times


def _size_name(nbytes):
    return f"{nbytes // MIB} MiB" if nbytes >= MIB else f"{nbytes // 1024} KiB"


MPI_RANK = """
import sys, time
import numpy as np
from mpi4py import MPI
comm = MPI.COMM_WORLD
sizes, moves, repeats = eval(sys.argv[1]), eval(sys.argv[2]), eval(sys.argv[3])
def timed(fn, n):
    fn()
    samples = []
    for _ in range(5):
        comm.Barrier()
        start = time.perf_counter()
        for _ in range(n):
            fn()
        samples.append((time.perf_counter() - start) / n)
    return sorted(samples)[2]
for nbytes in sizes:
    x = np.full(nbytes // 4, comm.rank + 1.0, np.float32)
    y = np.empty_like(x)
    t = timed(lambda: comm.Allreduce(x, y), repeats[nbytes])
    if comm.rank == 0:
        print("MPI allreduce", nbytes, t, flush=True)
for nbytes in moves:
    x = np.full(nbytes // 4, comm.rank + 1.0, np.float32)
    y = np.empty(x.size * comm.size, np.float32)
    t = timed(lambda: comm.Allgather(x, y), repeats[nbytes])
    b = timed(lambda: comm.Bcast(x, root=0), repeats[nbytes])
    if comm.rank == 0:
        print("MPI allgather", nbytes, t, flush=True)
        print("MPI broadcast", nbytes, b, flush=True)
"""


def _mpi_times(ranks):
    """{(kind, bytes): seconds} of Open MPI on ``ranks`` processes, or a reason why there are none."""
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return "mpi4py is not installed (pip install .[bench]; it needs an MPI library)"
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        return "mpirun is not on PATH"
    command = [mpirun, "--oversubscribe", "-n", str(ranks)]
    if os.geteuid() == 0:
        command.append("--allow-run-as-root")
    command += [sys.executable, "-c", MPI_RANK, repr(SIZES), repr(MOVE_SIZES), repr(REPEATS)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    times = {}
    for line in result.stdout.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[0] == "MPI":
            times[(parts[1], int(parts[2]))] = float(parts[3])
    return times or f"mpirun failed (exit code {result.returncode}): {result.stderr.strip()[-300:]}"


def _mpi_comparison(ranks, shm_times):
    times = _mpi_times(ranks)
    if isinstance(times, str):
        return f"Open MPI baseline skipped: {times}"
    lines = [
        f"Open MPI (mpi4py) on {ranks} ranks, right after the npu-run job: MPI time / shm time (higher is better for "
        "shm; 1.0 = parity)",
        "  collective  size       MPI            shm            MPI/shm",
    ]
    for key in sorted(times, key=lambda k: (k[0], k[1])):
        ours = [(key[0], shm_times[key])] if key in shm_times else []
        if (key[0] + "_in_step", key[1]) in shm_times:
            ours.append(("in a step", shm_times[key[0] + "_in_step", key[1]]))
        for kind, seconds in ours:
            lines.append(
                f"  {kind:10s}  {_size_name(key[1]):8s} {times[key] * 1e3:9.3f} ms   {seconds * 1e3:9.3f} ms   "
                f"{times[key] / seconds:7.3f}"
            )
    return "\n".join(lines)


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


@contextlib.contextmanager
def collective_path(value):
    """Builds the collectives of the block on ``value``'s path (NPU_BRIDGE_COLLECTIVES is read at build time)."""
    old = os.environ.get(PATH_VARIABLE)
    os.environ[PATH_VARIABLE] = value
    try:
        yield
    finally:
        if old is None:
            del os.environ[PATH_VARIABLE]
        else:
            os.environ[PATH_VARIABLE] = old


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

    def on_both_paths(build):
        with collective_path("shm"):
            shm = build()
        with collective_path("tf"):
            grpc = build()
        return shm, grpc

    world_key = groups.group_key("raw CollectiveReduce baseline", range(size))  # a group of its own
    shm, grpc, raw = {}, {}, {}
    for nbytes in SIZES:
        x = tf.Variable(tf.fill([nbytes // 4], float(rank + 1)))
        shm[nbytes], grpc[nbytes] = on_both_paths(lambda x=x: hccl_ops.allreduce(x, "sum").op)
        raw[nbytes] = raw_allreduce(x, world_key)
    moves = {}
    for nbytes in MOVE_SIZES:
        x = tf.Variable(tf.fill([1, nbytes // 4], float(rank + 1)))
        moves["allgather", nbytes] = on_both_paths(lambda x=x: hccl_ops.allgather(x, size).op)
        moves["broadcast", nbytes] = on_both_paths(lambda x=x: hccl_ops.broadcast([x], 0)[0].op)
    chains = {}
    for nbytes in IN_STEP_SIZES:
        x = tf.Variable(tf.fill([nbytes // 4], float(rank + 1)))
        for length in (1, IN_STEP):
            y = x
            for _ in range(length):  # each one takes the one before's output: they run one after the other
                y = hccl_ops.allreduce(y, "max")
            chains["allreduce", nbytes, length] = y.op
    for nbytes in MOVE_SIZES[:1]:
        x = tf.Variable(tf.fill([1, nbytes // 4], float(rank + 1)))
        for length in (1, IN_STEP):
            y, gathered = x, None
            for _ in range(length):
                y = hccl_ops.broadcast([y], 0)[0]
                # an allgather's result is larger than its input: each reads x after the one before has run
                with tf.control_dependencies([] if gathered is None else [gathered]):
                    gathered = hccl_ops.allgather(tf.identity(x), size).op
            chains["broadcast", nbytes, length] = y.op
            chains["allgather", nbytes, length] = gathered
    small = tf.constant([1.0, 2.0, 3.0, 4.0])
    small_shm, small_ours = on_both_paths(lambda: hccl_ops.allreduce(small, "sum").op)
    small_key = groups.group_key("raw CollectiveReduce memory", range(size))
    small_raw = raw_allreduce(small, small_key)
    small_raw_timeout = raw_allreduce(small, small_key, timeout_seconds=1836)
    grads = [tf.Variable(tf.ones([100 + 40 * i])) for i in range(100)]  # 100 "gradients", 0.8 MiB in all
    fused, fused_grpc = on_both_paths(lambda: tf.group(*npu_allreduce(grads)))
    per_tensor, per_tensor_grpc = on_both_paths(lambda: tf.group(*npu_allreduce(grads, fusion=0)))
    nothing = tf.no_op()
    # The shared-memory path's session is a local one (every collective of a one-host job runs on the segment);
    # TensorFlow's collectives need a session on the rank's server, which NPU_BRIDGE_COLLECTIVES=tf gives.
    shm_sess = tf.Session(config=npu_config_proto())
    with collective_path("tf"):
        sess = tf.Session(config=npu_config_proto())
    sess.run(tf.global_variables_initializer())
    shm_sess.run(tf.global_variables_initializer())
    for op in [
        *shm.values(),
        *(shm_op for shm_op, _ in moves.values()),
        *chains.values(),
        fused,
        per_tensor,
        small_shm,
    ]:
        shm_sess.run(op)  # warm up
    warm = [*grpc.values(), *raw.values(), *(grpc_op for _, grpc_op in moves.values())]
    warm += [fused_grpc, per_tensor_grpc, small_ours, small_raw, small_raw_timeout]
    for op in warm:
        sess.run(op)  # warm up: group and instance resolution

    def interleaved(runs, repeats):
        return {name: statistics.median(samples) for name, samples in interleaved_times(runs, blocks, repeats).items()}

    def report_shm(kind, nbytes, seconds):
        if rank == 0:
            print(f"SHM_TIME {kind} {nbytes} {seconds!r}", flush=True)

    local = tf.Session()  # not bridged: a direct session in this process, no gRPC master
    floors = interleaved(
        {
            "bridged": lambda: sess.run(nothing),
            "shm": lambda: shm_sess.run(nothing),
            "local": lambda: local.run(nothing),
        },
        200,
    )
    lines = [
        f"{size} ranks on one host; median of {blocks} interleaved blocks",
        f"Session.run of a no_op: the gRPC path's session (through the rank's gRPC master) "
        f"{floors['bridged'] * 1e3:.3f} ms, the shared-memory path's (a bridged local session) "
        f"{floors['shm'] * 1e3:.3f} ms, a plain local session {floors['local'] * 1e3:.3f} ms",
        "",
        "allreduce float32  hccl_ops shm   hccl_ops gRPC   raw CollectiveReduce   gRPC/shm   raw/gRPC   "
        "np.copyto (ceiling)",
    ]
    for nbytes in SIZES:
        t = interleaved(
            {
                "shm": lambda n=nbytes: shm_sess.run(shm[n]),
                "grpc": lambda n=nbytes: sess.run(grpc[n]),
                "raw": lambda n=nbytes: sess.run(raw[n]),
            },
            REPEATS[nbytes],
        )
        copy = _copy_bandwidth(nbytes, np)
        lines.append(
            f"{_size_name(nbytes):>7}          {t['shm'] * 1e3:8.3f} ms  {t['grpc'] * 1e3:9.3f} ms     "
            f"{t['raw'] * 1e3:9.3f} ms          {t['grpc'] / t['shm']:7.2f}x   {t['raw'] / t['grpc']:6.3f}    "
            f"{copy / 1e9:5.1f} GB/s  (shm: {nbytes / t['shm'] / 1e9:.2f} GB/s)"
        )
    lines += ["", f"within one step ({IN_STEP} one after the other in one Session.run, less a run of one; shm path)"]
    for kind, nbytes in sorted({key[:2] for key in chains}):
        t = interleaved(
            {length: lambda o=chains[kind, nbytes, length]: shm_sess.run(o) for length in (1, IN_STEP)},
            max(2, REPEATS[nbytes] // 4),
        )
        each = (t[IN_STEP] - t[1]) / (IN_STEP - 1)
        report_shm(f"{kind}_in_step", nbytes, each)
        lines.append(
            f"  {kind:10s} {_size_name(nbytes):>7}   a run of one {t[1] * 1e3:8.3f} ms, of {IN_STEP} "
            f"{t[IN_STEP] * 1e3:8.3f} ms: {each * 1e3:8.4f} ms per collective"
        )
    lines += ["", "moving data (per rank)  hccl_ops shm   hccl_ops gRPC   gRPC/shm"]
    for (kind, nbytes), (shm_op, grpc_op) in moves.items():
        t = interleaved(
            {"shm": lambda o=shm_op: shm_sess.run(o), "grpc": lambda o=grpc_op: sess.run(o)}, REPEATS[nbytes]
        )
        lines.append(
            f"  {kind:10s} {_size_name(nbytes):>7}   {t['shm'] * 1e3:8.3f} ms  {t['grpc'] * 1e3:9.3f} ms     "
            f"{t['grpc'] / t['shm']:7.2f}x"
        )
    t = interleaved(
        {
            "fused": lambda: shm_sess.run(fused),
            "per_tensor": lambda: shm_sess.run(per_tensor),
            "fused_grpc": lambda: sess.run(fused_grpc),
            "per_tensor_grpc": lambda: sess.run(per_tensor_grpc),
        },
        5,
    )
    lines += [
        "",
        "gradient allreduce, 100 variables (0.8 MiB)   shm          gRPC         gRPC/shm",
        f"  fused (default split 96.54/3.46):          {t['fused'] * 1e3:7.2f} ms   {t['fused_grpc'] * 1e3:7.2f} ms   "
        f"{t['fused_grpc'] / t['fused']:6.2f}x",
        f"  one collective per tensor:                 {t['per_tensor'] * 1e3:7.2f} ms   "
        f"{t['per_tensor_grpc'] * 1e3:7.2f} ms   {t['per_tensor_grpc'] / t['per_tensor']:6.2f}x",
        f"  ratio per-tensor/fused:                    {t['per_tensor'] / t['fused']:7.2f}x     "
        f"{t['per_tensor_grpc'] / t['fused_grpc']:7.2f}x",
    ]
    lines += ["", "shared-memory path alone (no gRPC-path runs between; compared with Open MPI's job)"]
    for nbytes in SIZES:
        runs = {("allreduce", nbytes): lambda o=shm[nbytes]: shm_sess.run(o)}
        runs.update({key: lambda o=ops[0]: shm_sess.run(o) for key, ops in moves.items() if key[1] == nbytes})
        for (kind, _), seconds in interleaved(runs, REPEATS[nbytes]).items():
            report_shm(kind, nbytes, seconds)
            lines.append(f"  {kind:10s} {_size_name(nbytes):>7}   {seconds * 1e3:8.3f} ms")
    memory_ops = {
        "hccl_ops shm": small_shm,
        "hccl_ops gRPC": small_ours,
        "raw": small_raw,
        "raw, timeout_seconds=1836": small_raw_timeout,
    }
    retained = {
        name: _retained_kb_per_run(shm_sess if op is small_shm else sess, op) for name, op in memory_ops.items()
    }
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
    parser.add_argument(
        "--one-by-one",
        action="store_true",
        help="start the ranks as a scheduler does, one process each without npu-run (no part 5)",
    )
    args = parser.parse_args(argv)
    if "RANK_ID" not in os.environ:
        code, shm_times = _launch(args)
        if code == 0:
            print("", flush=True)
            print(_mpi_comparison(args.ranks, shm_times), flush=True)
        if code == 0 and args.starts > 0 and not args.one_by_one:
            print(_start_times(args.ranks, args.starts), flush=True)
        return code
    run_rank(args.blocks)
    return 0


if __name__ == "__main__":
    sys.exit(main())
