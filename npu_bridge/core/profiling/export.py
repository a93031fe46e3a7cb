"""Turns a profile's raw data into Ascend-format summaries and the timeline (one pass over the runs).

Files (``layout``): ``op_summary_*.csv`` (one row per op execution), ``op_statistic_*.csv`` (per op type),
``step_trace_*.csv`` / ``step_trace_*.json`` (per iteration; ``training_trace`` on) and ``msprof_*.json``
(the timeline). ``task_time`` off leaves out the per-op files; ``l0`` leaves out the shape columns.
op_summary ends with the TensorFlow op type of each execution (``columns.OP_SUMMARY_TENSORFLOW``). The CSVs
keep Ascend's absolute times (us since the Unix epoch); the timelines count from the profile's start
(``profile_epoch_ns``), which they hold in ``otherData``.
Instrumentation ops are on the timeline only. When the backend is the simulated Ascend, every AI_CORE op gets
a roofline estimate of its Ascend 910 duration (``roofline``) in columns named "Estimated ..."; AI_CPU and
HCCL tasks are not estimated (N/A).
"""

import collections
import csv
import datetime
import functools
import os
import shutil
import tempfile
import time

from google.protobuf.message import DecodeError

from npu_bridge.core.profiling import columns, layout, op_classes, raw_trace, roofline, step_trace, streams, timeline
from npu_bridge.core.profiling.models import ModelRegistry
from npu_bridge.core.profiling.step_stats import StepStatsReader, split_iterations
from npu_bridge.core.runtime import inert_text, log

NA = step_trace.NA
_PROGRESS_EVERY = 2000
_FORMATS = {4: "NHWC", 5: "NDHWC"}  # TensorFlow's default layouts; others are ND
_TEMPORARY_PREFIX = ".export-"  # + "{pid}-": where an export writes until it is complete
_UNIX_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def export_profile(profile_dir, fp_point=None, bp_point=None, progress=None, warn=None):
    """Writes the exported files of a profile from its raw data; replaces the previous export once complete.

    The files are written into a new private temporary directory and moved into ``mindstudio_profiler_output``
    (created by this process or checked to be its own, ``safe_paths.make_dirs``) under a
    timestamp no file there has; info.json, written last, names them (``layout.exported_files``); only then are
    the previous export's files removed. A failure leaves the previous export as it was. Damaged raw data is
    exported up to the damage, reported through ``warn`` and recorded in info.json (``raw_damage``).

    Args:
      profile_dir: the profile directory.
      fp_point, bp_point: op names overriding the profile's settings (None: keep them).
      progress: optional callable(runs done, runs total) called now and then.
      warn: optional callable(message) told about damaged raw data (default: the npu_bridge log's warning).
    Returns:
      {kind: path} of the files written ("op_summary", "op_statistic", "step_trace", "step_trace_json",
      "timeline").
    Raises:
      ProfileDataError: the directory or its raw data is missing, not a regular file, or not raw profiling data.
      UnsafePathError: the export directory is a symlink or another user's (nothing is written into it).
      OSError: the exported files cannot be written.
    """
    info = layout.read_info(profile_dir)
    settings = info["settings"]
    if fp_point is not None:
        settings["fp_point"] = fp_point
    if bp_point is not None:
        settings["bp_point"] = bp_point
    status = raw_trace.ReadStatus(layout.raw_path(profile_dir, info["device_id"]))
    export_dir = layout.make_dirs(profile_dir, layout.EXPORT_DIR)  # ours: not a symlink, not another user's
    _remove_abandoned_exports(export_dir)
    temporary = tempfile.mkdtemp(prefix=f"{_TEMPORARY_PREFIX}{os.getpid()}-", dir=export_dir)
    try:
        exporter = _Exporter(info, settings, temporary, _free_stamp(export_dir))
        try:
            _add_runs(exporter, status, info.get("runs_recorded"), progress)
            exporter.close()
        except BaseException:
            exporter.abort()
            raise
        paths = {}
        for kind, path in exporter.paths.items():
            paths[kind] = os.path.join(export_dir, os.path.basename(path))
            os.replace(path, paths[kind])
    finally:
        shutil.rmtree(temporary, ignore_errors=True)
    info["models"] = [model.to_json() for model in exporter.registry.models]
    info["exported"] = {kind: os.path.relpath(path, profile_dir) for kind, path in paths.items()}
    info["runs_exported"] = status.runs
    if status.complete:
        info.pop("raw_damage", None)
    else:
        info["raw_damage"] = status.to_json()
    layout.write_info(profile_dir, info)
    _remove_other_exports(export_dir, paths.values())
    if not status.complete:
        (warn or log.logger.warning)(status.message())
    return paths


def _add_runs(exporter, status, recorded, progress):
    """Adds the runs of the raw data to ``exporter``, up to the first damaged record (``status`` says)."""
    runs = raw_trace.read_runs(status.path, status)
    try:
        for run in runs:
            try:
                exporter.add_run(run)
            except DecodeError as e:  # the header fit, but what it delimits is not a StepStats
                status.reject(run, f"its step stats cannot be parsed: {e}")
                break
            if progress is not None and status.runs % _PROGRESS_EVERY == 0:
                progress(status.runs, recorded or 0)
    finally:
        runs.close()
    if status.complete and recorded is not None and status.runs < recorded:
        status.mark_damaged(status.size, f"the file ends after {status.runs} of the {recorded} runs recorded")


def _remove_abandoned_exports(export_dir):
    """Removes the temporary directories of exports whose process is gone (killed in the middle of an export)."""
    for name in os.listdir(export_dir):
        pid = name[len(_TEMPORARY_PREFIX) :].split("-", 1)[0]
        if not name.startswith(_TEMPORARY_PREFIX) or not pid.isdigit() or _process_exists(int(pid)):
            continue
        shutil.rmtree(os.path.join(export_dir, name), ignore_errors=True)


def _process_exists(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process
        return True
    return True


def _free_stamp(export_dir):
    """A timestamp (YYYYmmddHHMMSS, as Ascend's) that no file in ``export_dir`` has: now's, or a later second's."""
    taken = os.listdir(export_dir)
    now = time.time()
    stamp, later = None, 0
    while stamp is None or any(f"_{stamp}." in name for name in taken):
        stamp = time.strftime("%Y%m%d%H%M%S", time.localtime(now + later))
        later += 1
    return stamp


def _remove_other_exports(export_dir, keep):
    """Removes the exported files in ``export_dir`` that are not in ``keep`` (earlier or failed exports)."""
    kept = {os.path.basename(path) for path in keep}
    for name in os.listdir(export_dir):
        if name.startswith(layout.EXPORT_PREFIXES) and name not in kept:
            path = os.path.join(export_dir, name)
            if os.path.isfile(path):
                try:
                    os.remove(path)
                except FileNotFoundError:
                    pass


class _Exporter:
    """State of one export pass."""

    def __init__(self, info, settings, directory, stamp):
        self._directory, self._stamp = directory, stamp
        self.paths = {"timeline": self._path("msprof", "json")}
        self._device = info["device_id"]
        self._tasks = settings["task_level"] != "off"
        self._shapes = settings["task_level"] == "l1"
        self._hccl = settings["hccl"]
        self._training_trace = settings["training_trace"]
        self._policy = (
            roofline.PrecisionPolicy(info.get("precision_mode"), info.get("precision_mode_v2"))
            if info["backend"] == "ascend"
            else None
        )
        self.registry = ModelRegistry(settings["fp_point"], settings["bp_point"])
        self._reader = StepStatsReader(read_shapes=self._shapes or self._policy is not None)
        self._streams = streams.StreamAssigner()
        self._steps = step_trace.StepTrace()
        self._statistic = collections.defaultdict(lambda: [0, 0, None, 0, 0.0])  # count, total, min, max, est
        self._timeline = timeline.TimelineWriter(self.paths["timeline"], self._device, profile_epoch_ns(info))
        self._summary_file = self._summary = None
        if self._tasks:
            self.paths["op_summary"] = self._path("op_summary", "csv")
            self._summary_file = layout.new_text_file(self.paths["op_summary"])
            self._summary = csv.writer(self._summary_file)
            self._summary.writerow(
                columns.OP_SUMMARY
                + (columns.OP_SUMMARY_SHAPES if self._shapes else ())
                + (columns.OP_SUMMARY_ESTIMATES if self._policy else ())
                + (columns.OP_SUMMARY_TENSORFLOW,)
            )

    def _path(self, prefix, extension):
        return os.path.join(self._directory, layout.export_name(prefix, self._stamp, extension))

    def add_run(self, run):
        """Adds one ``raw_trace.RawRun``."""
        run_ops = self._reader.read(run.step_stats)
        if not run_ops.ops:
            return
        iterations = split_iterations(run_ops)
        # Runs of one graph signature in one session are one model; older raw data has no signature.
        key = (run.session, run.graph) if run.graph else run_ops.graph_key
        model = self.registry.model_for(key, run_ops, iterations)
        model.runs += 1
        placed = {id(op): place for op, place in zip(run_ops.ops, self._streams.assign(run_ops.ops))}
        self._timeline.host_run(
            run.start_ns,
            run.end_ns,
            {"session": run.session, "run": run.run, "Model ID": model.model_id, "iterations": len(iterations)},
        )
        for ops in iterations:
            model.iterations += 1
            shown = [op for op in ops if self._hccl or op.kind != op_classes.HCCL]
            if not shown:
                continue
            estimate_total = 0.0 if self._policy else None
            for op in shown:
                stream, wait = placed[id(op)]
                estimate = self._estimate(op)
                if estimate is not None:
                    estimate_total += estimate.microseconds
                self._add_op(model, op, stream, wait, estimate)
            self._steps.add(step_trace.iteration_of(model, model.iterations, shown, estimate_total))

    def _estimate(self, op):
        if self._policy is None or op.kind != op_classes.TASK or op_classes.task_type(op.kind, op.op_type) != "AI_CORE":
            return None
        return roofline.estimate(op.op_type, op.inputs, op.outputs, self._policy)

    def _add_op(self, model, op, stream, wait_ns, estimate):
        task_type = op_classes.task_type(op.kind, op.op_type)
        tf_op_type = op.tf_op_type or op.op_type
        args = {
            "Op Type": op.op_type,
            columns.OP_SUMMARY_TENSORFLOW: tf_op_type,
            "Task Type": task_type,
            "Model ID": model.model_id,
            "Iteration ID": model.iterations,
        }
        shapes = _shape_columns(op.inputs, op.outputs) if self._shapes else ()
        if shapes:
            args.update(zip(columns.OP_SUMMARY_SHAPES, shapes))
        if estimate is not None:
            args[columns.OP_SUMMARY_ESTIMATES[0]] = round(estimate.microseconds, 3)
        self._timeline.op(op, streams.GROUPS[op.kind], stream, args)
        if op.kind == op_classes.INSTRUMENTATION or not self._tasks:
            return
        duration_ns = op.end_ns - op.start_ns
        is_hccl = op.kind == op_classes.HCCL
        row = [
            self._device,
            model.name,
            model.model_id,
            NA if is_hccl else model.task_id(op.name),
            NA if is_hccl else stream,
            model.iterations,
            op.name,
            op.op_type,
            NA,
            task_type,
            step_trace.us(op.start_ns),
            step_trace.us(duration_ns),
            step_trace.us(wait_ns),
            NA,
            NA,
            NA,
        ]
        row.extend(shapes)
        if self._policy:
            row.extend(
                (NA,) * 4
                if estimate is None
                else (f"{estimate.microseconds:.3f}", f"{estimate.flops:.0f}", f"{estimate.bytes:.0f}", estimate.bound)
            )
        row.append(tf_op_type)
        self._summary.writerow(inert_text.csv_row(row))
        stat = self._statistic[(op.op_type, task_type)]
        stat[0] += 1
        stat[1] += duration_ns
        stat[2] = duration_ns if stat[2] is None else min(stat[2], duration_ns)
        stat[3] = max(stat[3], duration_ns)
        stat[4] += estimate.microseconds if estimate is not None else 0.0

    def close(self):
        """Writes the remaining files and closes them."""
        rows = self._steps.rows(self.registry.models) if self._training_trace else []
        epoch = self._timeline.epoch_ns  # None only when no time origin is known and nothing was written
        self._timeline.close(
            self._streams.streams, timeline.step_trace_events(rows, self._timeline.pid(timeline.STEP_TRACE), epoch)
        )
        if self._summary_file is not None:
            self._summary_file.close()
            self._write_statistic()
        if self._training_trace:
            self._write_step_trace(rows)

    def abort(self):
        """Closes the open files unfinished (the export failed)."""
        self._timeline.abort()
        if self._summary_file is not None:
            self._summary_file.close()

    def _write_statistic(self):
        path = self.paths["op_statistic"] = self._path("op_statistic", "csv")
        grand_total = sum(stat[1] for stat in self._statistic.values()) or 1
        with layout.new_text_file(path) as f:
            writer = csv.writer(f)
            writer.writerow(columns.OP_STATISTIC + ((columns.OP_STATISTIC_ESTIMATE,) if self._policy else ()))
            for (op_type, core), (count, total, low, high, est) in sorted(
                self._statistic.items(), key=lambda item: (-item[1][1], item[0])
            ):
                row = [
                    self._device,
                    op_type,
                    core,
                    count,
                    step_trace.us(total),
                    step_trace.us(low),
                    step_trace.us(total / count),
                    step_trace.us(high),
                    f"{100.0 * total / grand_total:.2f}",
                ]
                writer.writerow(inert_text.csv_row(row + ([f"{est:.3f}"] if self._policy else [])))

    def _write_step_trace(self, rows):
        self.paths["step_trace"] = self._path("step_trace", "csv")
        self.paths["step_trace_json"] = self._path("step_trace", "json")
        with_estimate = self._policy is not None
        pairs = max((len(row.reduces) for row in rows), default=0)
        with layout.new_text_file(self.paths["step_trace"]) as f:
            writer = csv.writer(f)
            writer.writerow(step_trace.header(rows, with_estimate))
            for row in rows:
                writer.writerow(inert_text.csv_row(step_trace.csv_row(row, self._device, pairs, with_estimate)))
        timeline.write_step_trace_json(self.paths["step_trace_json"], rows, self._device, self._timeline.epoch_ns)


def profile_epoch_ns(info):
    """The time origin of a profile's timelines, ns since the Unix epoch: when its recording started.

    info.json's ``start_epoch_ns``; for profiles recorded before it was kept, ``start_time`` (ms, before the first
    run too); None when neither is readable (the timeline then starts at its first event).
    """
    epoch = info.get("start_epoch_ns")
    if isinstance(epoch, int) and not isinstance(epoch, bool) and epoch >= 0:
        return epoch
    try:
        start = datetime.datetime.fromisoformat(info["start_time"])
    except (KeyError, TypeError, ValueError):
        return None
    if start.tzinfo is None:
        start = start.astimezone()
    return (start - _UNIX_EPOCH) // datetime.timedelta(microseconds=1) * 1000


@functools.lru_cache(maxsize=4096)
def _shape_columns(inputs, outputs):
    """Input/output shapes, dtypes and formats in Ascend's notation: tensors joined by ';', dims by ','."""

    def shapes(tensors):
        return ";".join("" if shape is None else ",".join(str(d) for d in shape) for _, shape in tensors)

    def dtypes(tensors):
        return ";".join(dtype for dtype, _ in tensors)

    def formats(tensors):
        return ";".join(_FORMATS.get(len(shape), "ND") if shape is not None else "ND" for _, shape in tensors)

    return (shapes(inputs), dtypes(inputs), formats(inputs), shapes(outputs), dtypes(outputs), formats(outputs))
