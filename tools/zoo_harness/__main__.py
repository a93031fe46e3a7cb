"""Runs a seeded random draw of the Ascend model zoo unchanged and says which entries train and why others do not.

    python3 tools/zoo_harness --zoo PATH [--seed 1] [--tf1 40] [--tf2 20] [--out zoo-run] [--timeout 300]
                              [--steps 3] [--memory 8] [--site DIR] [--only DIR ...] [--py-compat] [--list]
                              [--reclassify]

PATH is a checkout of Ascend/ModelZoo-TensorFlow (this tool downloads nothing). Each drawn model directory is copied
under ``--out``, given synthetic data in its loader's format (``data_kits.py``) at the paths its training script
names under ``${data_path}`` (``data_paths.py``), and its one-device training script
(``test/train_performance_1p.sh``, else ``train_full_1p.sh``) is run unchanged from its ``test`` folder as its
README says, through ``npu-run --tf1 -n 1`` (TensorFlow/ entries) or ``npu-run --tf2 -n 1`` (TensorFlow2/ entries),
with ``--data_path`` pointing at the data. ``python3.7`` and the like run this interpreter, ``taskset`` runs its
command unpinned (the wrappers' CPU ranges assume 8 or more CPUs). A hook in every Python
process (``hook/sitecustomize.py``) ends it once it has trained ``--steps`` steps and records how it ended;
``classify.py`` turns that into an outcome per entry; an entry whose error advises the simulated Ascend backend (an
fp16 NaN of a script written for Ascend's saturation mode) is run there once more, as the error tells its user to.

``--out`` gets ``report.json`` and ``report.md``, rewritten after every entry (a run that is stopped keeps what it
measured and resumes where it stopped), and one folder per entry with the copy, its data and ``output.log``.
``--site DIR`` puts packages the scripts need (OpenCV, scikit-learn, ...) on their ``PYTHONPATH``. ``--py-compat``
runs the entries with the modes' Python-level compatibility (``python -m npu_bridge.tf1 --py-compat``, ``python -m
npu_bridge.tf2 --py-compat``: NumPy 1.x aliases, ``scipy.misc``, ...), which the report then says. ``--reclassify``
runs nothing: it classifies the entries ``--out`` holds again, after a rule in ``classify.py`` changed.
Exit codes: 0 done, 2 bad arguments.
"""

import argparse
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import classify
import data_kits
import data_paths
import draw

HERE = os.path.dirname(os.path.abspath(__file__))
_PYTHON_NAMES = ("python", "python3", "python3.7", "python3.7.5", "python3.8", "python3.9", "python3.10")


def _arguments(argv):
    parser = argparse.ArgumentParser(prog="zoo_harness", description=__doc__.split("\n\n")[0])
    parser.add_argument("--zoo", required=True, help="a checkout of Ascend/ModelZoo-TensorFlow")
    parser.add_argument("--seed", type=int, default=1, help="the draw's seed (default 1)")
    parser.add_argument("--tf1", type=int, default=40, help="TF1 model directories to draw (default 40)")
    parser.add_argument("--tf2", type=int, default=20, help="TF2 model directories to draw (default 20)")
    parser.add_argument("--out", default="zoo-run", help="where copies, logs and the report go (default zoo-run)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per entry (default 300)")
    parser.add_argument("--steps", type=int, default=3, help="training steps that count as training (default 3)")
    parser.add_argument(
        "--memory", type=float, default=8, help="GiB an entry's processes may hold together before it is ended (8)"
    )
    parser.add_argument("--site", action="append", default=[], help="a folder of packages the scripts may import")
    parser.add_argument("--only", action="append", default=[], help="run this model directory (repeatable)")
    parser.add_argument(
        "--py-compat", action="store_true", help="entries get the modes' Python-level compatibility (--py-compat)"
    )
    parser.add_argument("--list", action="store_true", help="print the draw and exit")
    parser.add_argument(
        "--reclassify",
        action="store_true",
        help="classify the entries --out already holds again (after a rule changed), running nothing",
    )
    args = parser.parse_args(argv)
    for name in ("tf1", "tf2", "steps"):
        if getattr(args, name) < 0 or (name == "steps" and args.steps < 1):
            parser.error(
                f"--{name} {getattr(args, name)} is out of range: it is a count of at least {int(name == 'steps')}"
            )
    if args.timeout <= 0:
        parser.error(f"--timeout {args.timeout} is not a positive number of seconds")
    if args.memory <= 0:
        parser.error(f"--memory {args.memory} is not a positive number of GiB")
    if not os.path.isdir(args.zoo):
        parser.error(f"--zoo {args.zoo!r} is not a folder: pass a checkout of Ascend/ModelZoo-TensorFlow")
    for site in args.site:
        if not os.path.isdir(site):
            parser.error(f"--site {site!r} is not a folder")
    return args


def _check_interpreter():
    """Ends the harness when this interpreter cannot run entries: every entry runs under it (``python -m
    npu_bridge.core.launch``), so without TensorFlow and npu_bridge each would fail at its first import."""
    missing = [name for name in ("tensorflow", "npu_bridge") if importlib.util.find_spec(name) is None]
    if missing:
        raise SystemExit(
            f"zoo_harness: {sys.executable} cannot import {' or '.join(missing)}, and every entry runs under it: "
            "run the harness with the Python of the environment npu_bridge is installed in"
        )


def _entries(args):
    try:
        return _drawn_or_named(args)
    except FileNotFoundError as e:  # not a ModelZoo-TensorFlow checkout: told like the other bad arguments
        print(f"zoo_harness: {e}", file=sys.stderr)
        raise SystemExit(2) from None


def _drawn_or_named(args):
    if not args.only:
        return draw.draw(args.zoo, args.seed, {"tf1": args.tf1, "tf2": args.tf2})
    known = {e.relative_dir: e for kind in draw.KIND_ROOTS for e in draw.model_dirs(args.zoo, kind)}
    unknown = [d for d in args.only if d.rstrip("/") not in known]
    if unknown:
        raise SystemExit(f"zoo_harness: --only {unknown[0]!r} is not a model directory of {args.zoo}")
    return [known[d.rstrip("/")] for d in args.only]


# The zoo's wrappers pin their process to CPUs a..b with b = cpucount / 8 - 1 (an Ascend server has 192): on fewer
# than 8 CPUs that range is empty and taskset refuses to start the training. Here the command runs unpinned.
_TASKSET = """#!/bin/sh
while [ $# -gt 0 ]; do
  case "$1" in
    -c|--cpu-list|-a|--all-tasks) shift ;;
    --) shift; break ;;
    -*) shift ;;
    *) break ;;
  esac
done
shift
exec "$@"
"""


def _python_shims(folder):
    """Writes the commands the wrappers call that run differently here (``python3.7`` and the like: this
    interpreter; ``taskset``: unpinned) into ``folder``; returns it."""
    os.makedirs(folder, exist_ok=True)
    scripts = {name: f'#!/bin/sh\nexec "{sys.executable}" "$@"\n' for name in _PYTHON_NAMES}
    scripts["taskset"] = _TASKSET
    for name, text in scripts.items():
        path = os.path.join(folder, name)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o755)
    return folder


def _environment(args, shims, results, data, backend=None):
    env = dict(os.environ)
    if backend is not None:
        env["NPU_BRIDGE_DEVICE_TARGET"] = backend
    env["TFDS_DATA_DIR"] = data  # tensorflow_datasets' default folder: where the tfds kit wrote
    env["PATH"] = shims + os.pathsep + env.get("PATH", "")
    paths = [os.path.join(HERE, "hook"), *map(os.path.abspath, args.site)]
    # CANN's set_env.sh leaves an empty entry at the end of PYTHONPATH, the working directory: zoo scripts rely on it
    env["PYTHONPATH"] = os.pathsep.join(paths + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []) + [""])
    env.update(ZOO_HARNESS_RESULTS=results, ZOO_HARNESS_STEPS=str(args.steps), TF_CPP_MIN_LOG_LEVEL="2")
    env["ZOO_HARNESS_CACHE"] = os.path.join(os.path.abspath(args.out), "kits", "keras_datasets")
    env.update(ASCEND_DEVICE_ID="0", DEVICE_ID="0", RANK_ID="0", RANK_SIZE="1", NPU_BRIDGE_TF1_QUIET="1")
    if args.py_compat:
        # what `python -m npu_bridge.tf1 --py-compat` / `python -m npu_bridge.tf2 --py-compat` set for every child
        env.update(NPU_BRIDGE_TF1_PY_COMPAT="1", NPU_BRIDGE_TF2_PY_COMPAT="1")
    return env


def _run_entry(args, entry, folder, shims):
    """Runs one entry; when its error advises the simulated Ascend backend, runs it there once more, keeping the
    first run's folder next to the entry's as ``<folder>.default-backend``."""
    result = _run_once(args, entry, folder, shims)
    backend = classify.advised_backend(_records(folder)) if result["outcome"] == "ours" else None
    if backend is None:
        return result
    first = folder + ".default-backend"
    shutil.rmtree(first, ignore_errors=True)
    os.rename(folder, first)
    first_run = {key: result[key] for key in ("outcome", "cause", "seconds")}
    return _as_advised(_run_once(args, entry, folder, shims, backend), first_run, backend)


def _as_advised(result, first_run, backend):
    """The result of a run on ``backend``, which the first run's error advised, saying so."""
    cause = (
        f"on the {backend} backend (NPU_BRIDGE_DEVICE_TARGET={backend}), as the first run's error advised; "
        f"{result['cause']} (first run: {first_run['outcome']}, {first_run['cause'][:200]})"
    )
    return {**result, "cause": cause, "backend": backend, "first_run": first_run}


def _run_once(args, entry, folder, shims, backend=None):
    model = os.path.join(folder, "model")
    data = os.path.join(folder, "data")
    results = os.path.join(folder, "results")
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(os.path.join(args.zoo, entry.relative_dir), model, symlinks=True)
    os.makedirs(results)
    kits = data_kits.choose_all(model)
    kit = kits[0] if kits else None  # the kit the outcome names; the others add their files
    with open(os.path.join(model, "test", entry.script), encoding="utf-8", errors="replace") as f:
        script = f.read()
    cache = os.path.join(os.path.dirname(os.path.dirname(folder)), "kits")
    try:
        data_kits.make_all(kits, data, cache, seed=args.seed, sizes=data_kits.hints(script), model_dir=model)
    except data_kits.KitError as e:
        measured = {**entry.as_dict(), "kit": kit, "seconds": 0.0, "timed_out": False, "peak_gib": None}
        return {**measured, "outcome": "data", "cause": str(e), "steps": 0, "kit_error": True}
    if kit is not None:
        data_paths.link(script, data)
    launcher = [sys.executable, "-m", "npu_bridge.core.launch", f"--{entry.kind}"]
    command = [*launcher, "-n", "1", "--", "bash", entry.script, f"--data_path={data}"]
    started = time.monotonic()
    with open(os.path.join(folder, "output.log"), "wb") as log:
        process = subprocess.Popen(
            command,
            cwd=os.path.join(model, "test"),
            env=_environment(args, shims, results, data, backend),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            peak = _watch(process, started + args.timeout, args.memory * 2**30)
        finally:
            _end_group(process)
    measured = {
        **entry.as_dict(),
        "kit": kit,
        "kits": kits,
        "seconds": round(time.monotonic() - started, 1),
        "timed_out": peak is None,
        "peak_gib": None if peak is None else round(peak / 2**30, 2),
    }
    return _judge(args, measured, folder)


def _judge(args, measured, folder):
    """The entry's result: what was measured, with the outcome and cause classify.py gives its records."""
    records = _records(folder)
    with open(os.path.join(folder, "output.log"), encoding="utf-8", errors="replace") as f:
        output = f.read()[-20000:]
    model, data = (os.path.abspath(os.path.join(folder, sub)) for sub in ("model", "data"))
    timed_out = measured.get("timed_out", measured.get("outcome") == "timeout")  # reports of the first version
    kit_dir = os.path.join(os.path.dirname(os.path.dirname(folder)), "kits")
    kits = measured.get("kits") or [measured["kit"]]  # reports of earlier versions name the first kit only
    outcome, cause = classify.classify(records, model, data, measured["kit"], timed_out, output, kit_dir, kits)
    peak = measured.get("peak_gib")
    if peak is not None and peak > args.memory and outcome != "pass":
        outcome, cause = "resources", f"its processes held {peak:.1f} GiB, more than --memory {args.memory:g}"
    steps = max((r["steps"] for r in records), default=0)
    return {**measured, "outcome": outcome, "cause": cause, "steps": steps}


def _records(folder):
    """What the entry's Python processes recorded of how they ended (a start mark alone: killed)."""
    results = os.path.join(folder, "results")
    records = []
    names = sorted(os.listdir(results))
    for name in names:
        if name.endswith(".json"):
            with open(os.path.join(results, name)) as f:
                records.append(json.load(f))
        elif name.endswith(".started") and name.replace(".started", ".json") not in names:
            with open(os.path.join(results, name)) as f:  # started, and never recorded how it ended
                records.append({**json.load(f), "steps": 0, "ended": "killed", "exit_code": None, "exception": None})
    return records


def _watch(process, deadline, limit):
    """Waits for the entry to end, its deadline or its processes to hold more than ``limit`` bytes together.

    Returns:
      None at the deadline; else the largest resident size seen (above ``limit`` when that ended it).
    """
    peak = 0
    while time.monotonic() < deadline:
        try:
            process.wait(timeout=2)
            return peak
        except subprocess.TimeoutExpired:
            peak = max(peak, _tree_resident_bytes(process.pid))
            if peak > limit:
                return peak
    return None


def _tree_resident_bytes(root):
    """The resident size of process ``root`` and all its descendants (npu-run starts ranks in sessions of their
    own, so the launcher's process group does not hold them)."""
    parents, sizes = {}, {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{name}/statm") as f:
                sizes[int(name)] = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            parents[int(name)] = int(fields[1])  # the parent's id (the fields after the command name)
        except (OSError, IndexError, ValueError):
            continue  # a process that ended meanwhile
    children = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += sizes.get(pid, 0)
        todo.extend(children.get(pid, ()))
    return total


def _end_group(process):
    """Ends the entry's process group (the launcher, the shell wrapper, the script), by its id."""
    for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _write_report(out, args, results):
    summary = classify.summarize(results)
    report = {
        "zoo": os.path.abspath(args.zoo),
        "seed": args.seed,
        "steps": args.steps,
        "py_compat": args.py_compat,
        "summary": summary,
        "results": results,
    }
    with open(os.path.join(out, "report.json.tmp"), "w") as f:
        json.dump(report, f, indent=1)
    os.replace(os.path.join(out, "report.json.tmp"), os.path.join(out, "report.json"))
    compat = " (with --py-compat)" if args.py_compat else ""
    lines = [f"# Zoo draw, seed {args.seed}{compat}", ""]
    for kind, s in summary.items():
        rate = f"{s['passed']}/{s['runnable']}" if s["runnable"] else "0/0"
        advised = f" ({s['passed_as_advised']} on the backend an error advised)" if s["passed_as_advised"] else ""
        lines.append(
            f"- {kind}: {s['entries']} entries; pass {rate} of the runnable{advised}; outcomes {s['outcomes']}"
        )
    lines += ["", "| dir | kind | kit | outcome | s | cause |", "| --- | --- | --- | --- | --- | --- |"]
    for r in results:
        cause = r["cause"].replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {r['dir']} | {r['kind']} | {r['kit'] or '-'} | {r['outcome']} | {r['seconds']} | {cause} |")
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


def _measure(args, entry, index, count, done, shims, results):
    """Runs (or, with --reclassify, judges again) one entry, adds its result to ``results`` and the report."""
    out = os.path.abspath(args.out)
    result = done.get(entry.relative_dir)
    folder = os.path.join(out, "entries", f"{index:03d}_{entry.name}")
    if result is None and not args.reclassify:
        result = _run_entry(args, entry, folder, shims)
    elif result is None:
        return  # --reclassify: not measured yet
    elif args.reclassify and result.get("backend"):  # judged again on the advised run, the first one kept
        result = _as_advised(_judge(args, result, folder), result["first_run"], result["backend"])
    elif args.reclassify and not result.get("kit_error"):  # an entry whose data was never made never ran
        result = _judge(args, result, folder)
    results.append(result)
    _write_report(out, args, results)
    print(
        f"[{index}/{count}] {entry.kind} {entry.relative_dir}: {result['outcome']} "
        f"({result['seconds']} s) {result['cause'][:160]}",
        file=sys.stderr,
        flush=True,
    )


class _StoppedError(Exception):
    """SIGTERM reached the harness: raised where it runs, so the running entry's processes are ended."""


def _stop(signum, frame):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second one must not cut the ending of the entry short
    raise _StoppedError()


def main(argv=None):
    args = _arguments(argv)
    if not (args.list or args.reclassify):
        _check_interpreter()
    # A kit that writes with a package the scripts use (the tfds kit: tensorflow_datasets) finds it where they do.
    sys.path.extend(os.path.abspath(site) for site in args.site)
    entries = _entries(args)
    if args.list:
        for entry in entries:
            print(entry.kind, entry.relative_dir, entry.script)
        return 0
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    done = {}
    if os.path.exists(os.path.join(out, "report.json")):
        with open(os.path.join(out, "report.json")) as f:
            done = {r["dir"]: r for r in json.load(f)["results"]}
    shims = _python_shims(os.path.join(out, "bin"))
    results = []
    signal.signal(signal.SIGTERM, _stop)
    for index, entry in enumerate(entries, 1):
        try:
            _measure(args, entry, index, len(entries), done, shims, results)
        except (KeyboardInterrupt, _StoppedError) as e:  # the entry's processes were ended on the way out
            how = "SIGTERM" if isinstance(e, _StoppedError) else "Ctrl-C"
            print(
                f"zoo_harness: stopped by {how} during [{index}/{len(entries)}] {entry.relative_dir}, whose "
                f"processes were ended; {os.path.join(out, 'report.json')} keeps the {len(results)} entries "
                "measured, and the same command resumes from there",
                file=sys.stderr,
                flush=True,
            )
            return 143 if isinstance(e, _StoppedError) else 130
    summary = classify.summarize(results)
    for kind, s in summary.items():
        advised = f", {s['passed_as_advised']} of them as an error advised" if s["passed_as_advised"] else ""
        print(
            f"{kind}: passed {s['passed']} of {s['runnable']} runnable{advised} ({s['entries']} drawn) {s['outcomes']}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
