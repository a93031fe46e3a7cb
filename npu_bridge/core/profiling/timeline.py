"""The timeline: Chrome trace-event JSON (``{"traceEvents": [...]}``) for Perfetto or chrome://tracing.

Processes ("layers", as in Ascend's msprof timeline), for one device:
  Step Trace                  per model: one "Iteration N" span per iteration, and FP_BP / Refresh spans
  Ascend Hardware             the script's ops, one thread per stream (``streams``)
  Communication               collectives (HCCL)
  npu_bridge instrumentation  ops npu_bridge adds (overflow checks, dumps, system ops); not on Ascend
  Host                        each traced Session.run call
Complete events (``ph: "X"``) with ``ts`` / ``dur`` in microseconds since the start of the profile, and so
are the times in the step trace's args; the start itself, in ns since the Unix epoch, is in the trace's
``otherData`` (``profile_start_epoch_ns``): ``profile_start_epoch_ns + ts * 1000`` is the absolute time in ns
that the CSVs give in us since the Unix epoch.
Metadata events (``ph: "M"``) name and order processes and threads. Process ids are ``device id * 10 + layer``,
so traces of several ranks can be opened together.

Every time is an integer number of ns until it is written: ``ts`` is the start and ``dur`` the end minus the
start, each an exact multiple of 1 ns written in us, so spans that touch in ns (an iteration and the next one,
which starts where it ends) touch in the file, and an op inside its iteration stays inside it.
"""

import datetime
import json

from npu_bridge.core.profiling import layout
from npu_bridge.core.profiling.step_trace import us

STEP_TRACE, HARDWARE, COMMUNICATION, INSTRUMENTATION, HOST = range(5)
_LAYER_NAMES = {
    STEP_TRACE: "Step Trace",
    HARDWARE: "Ascend Hardware",
    COMMUNICATION: "Communication",
    INSTRUMENTATION: "npu_bridge instrumentation",
    HOST: "Host",
}
_UNIX_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_GROUP_LAYERS = {"compute": HARDWARE, "communication": COMMUNICATION, "instrumentation": INSTRUMENTATION}


class TimelineWriter:
    """Streams trace events into a JSON file.

    Args:
      path: the file to write.
      device_id: the device, used in process ids and names.
      epoch_ns: the start of the profile, ns since the Unix epoch: the time origin of ``ts``; None takes the start
        of the first event written.
    """

    def __init__(self, path, device_id, epoch_ns=None):
        self._device = device_id
        self.epoch_ns = epoch_ns
        self._file = layout.new_text_file(path)  # a new file, created without following a symlink
        self._file.write('{"displayTimeUnit": "ms", "traceEvents": [\n')
        self._first = True
        self._pids = set()

    def pid(self, layer):
        """The process id of ``layer`` for this device."""
        return self._device * 10 + layer

    def event(self, event):
        """Writes one event (a dict)."""
        self._file.write(("" if self._first else ",\n") + json.dumps(event, separators=(",", ":")))
        self._first = False
        self._pids.add(event["pid"])

    def span(self, name, pid, tid, start_ns, end_ns, args=None):
        """Writes a complete event from ``start_ns`` to ``end_ns`` (ns since the Unix epoch)."""
        if self.epoch_ns is None:
            self.epoch_ns = start_ns
        self.event(complete_event(name, pid, tid, start_ns, end_ns, self.epoch_ns, args))

    def op(self, op, group, stream, args):
        """Writes an op execution on its stream (``group`` as in ``streams.StreamAssigner``)."""
        self.span(op.name, self.pid(_GROUP_LAYERS[group]), stream, op.start_ns, op.end_ns, args)

    def host_run(self, start_ns, end_ns, args):
        """Writes one Session.run call on the Host layer."""
        self.span("Session.run", self.pid(HOST), 0, start_ns, end_ns, args)

    def close(self, streams, step_events):
        """Writes step trace and metadata events and closes the file.

        Args:
          streams: {stream id: (group, device, row)} from ``StreamAssigner.streams``.
          step_events: events from ``step_trace_events`` with this writer's ``epoch_ns`` (written as given).
        """
        for event in step_events:
            self.event(event)
        for layer, name in _LAYER_NAMES.items():
            if self.pid(layer) not in self._pids:
                continue
            self.event(_meta("process_name", self.pid(layer), 0, {"name": f"{name} (device {self._device})"}))
            self.event(_meta("process_sort_index", self.pid(layer), 0, {"sort_index": layer}))
        self.event(_meta("thread_name", self.pid(HOST), 0, {"name": "Session.run"}))
        for stream, (group, device, row) in sorted(streams.items()):
            label = {
                "compute": f"Stream {stream}",
                "communication": f"Communication {row}",
                "instrumentation": f"Instrumentation {row}",
            }[group]
            where = f" ({device.rsplit('/', 1)[-1].replace('device:', '')})" if device else ""
            pid = self.pid(_GROUP_LAYERS[group])
            self.event(_meta("thread_name", pid, stream, {"name": label + where}))
            self.event(_meta("thread_sort_index", pid, stream, {"sort_index": stream}))
        other = json.dumps(trace_metadata(self.epoch_ns), separators=(",", ":"))
        self._file.write(f'\n], "otherData": {other}}}\n')
        self._file.close()

    def abort(self):
        """Closes the file unfinished, if still open (the export failed; its files are thrown away)."""
        self._file.close()


def step_trace_events(rows, pid, epoch_ns):
    """Trace events of the step trace: per iteration a span and its FP_BP and Refresh parts.

    An iteration's span runs from the end of the model's previous iteration (its first: from its first op) to
    its end, so a model's iteration spans follow each other without a gap and never overlap.

    Args:
      rows: ``step_trace.Iteration``s with ``prev_end_ns`` filled in.
      pid: the process id to use.
      epoch_ns: the time origin of ``ts`` and of the times in args (ns since the Unix epoch).
    Returns:
      A list of event dicts; each model's iterations are on thread ``model id``.
    """
    events = []
    models = sorted({row.model_id for row in rows})
    for model_id in models:
        events.append(_meta("thread_name", pid, model_id, {"name": f"graph_{model_id} iterations"}))
        events.append(_meta("thread_name", pid, 1000 + model_id, {"name": f"graph_{model_id} FP_BP / Refresh"}))
    for row in rows:
        start = row.prev_end_ns if row.prev_end_ns is not None else row.start_ns
        args = {
            "Iteration ID": row.iteration_id,
            "Model ID": row.model_id,
            "FP Start": _relative_us(row.fp_start_ns, epoch_ns),
            "BP End": _relative_us(row.bp_end_ns, epoch_ns),
            "Iteration End": _relative_us(row.end_ns, epoch_ns),
            "Iteration Time(ns)": row.time_ns if row.time_ns is not None else "N/A",
            "FP_BP Time": us(row.fp_bp_ns),
            "Iteration Refresh": us(row.refresh_ns),
            "Data_aug Bound": us(row.data_aug_ns),
        }
        if row.estimate_us is not None:
            args["Estimated Ascend Iteration Time(us)"] = round(row.estimate_us, 3)
        events.append(
            complete_event(f"Iteration {row.iteration_id}", pid, row.model_id, start, row.end_ns, epoch_ns, args)
        )
        if row.fp_bp_ns is not None and row.fp_bp_ns >= 0:
            events.append(complete_event("FP_BP", pid, 1000 + row.model_id, row.fp_start_ns, row.bp_end_ns, epoch_ns))
        if row.refresh_ns is not None and row.refresh_ns >= 0:
            events.append(complete_event("Refresh", pid, 1000 + row.model_id, row.bp_end_ns, row.end_ns, epoch_ns))
    return events


def write_step_trace_json(path, rows, device_id, epoch_ns):
    """Writes ``step_trace_*.json``: the step trace events alone, as a trace-event JSON object (times as in the
    timeline: us since ``epoch_ns``, which ``otherData`` holds)."""
    pid = device_id * 10 + STEP_TRACE
    events = step_trace_events(rows, pid, epoch_ns)
    events.append(_meta("process_name", pid, 0, {"name": f"Step Trace (device {device_id})"}))
    with layout.new_text_file(path) as f:
        json.dump(
            {"displayTimeUnit": "ms", "traceEvents": events, "otherData": trace_metadata(epoch_ns)},
            f,
            separators=(",", ":"),
        )


def complete_event(name, pid, tid, start_ns, end_ns, epoch_ns, args=None):
    """A complete event (``ph: "X"``) from ``start_ns`` to ``end_ns``, ns since the Unix epoch.

    ``ts`` is the start relative to ``epoch_ns`` and ``dur`` the end minus the start, both computed in integer ns
    and written in us (``micros``): the end a viewer computes, ``ts + dur``, is the end in ns exactly, so spans
    that touch in ns touch in the file and a span inside another in ns is inside it in the file.
    """
    start = start_ns - epoch_ns
    end = max(end_ns - epoch_ns, start)
    event = {"name": name, "ph": "X", "pid": pid, "tid": tid, "ts": micros(start), "dur": micros(end - start)}
    if args is not None:
        event["args"] = args
    return event


def micros(ns):
    """An integer number of ns as us, for ``ts`` and ``dur``: the float nearest ``ns / 1000``, which JSON writes as
    that decimal exactly, with at most 3 decimals (Python writes the shortest text that reads back as the same
    float; exact up to 15 significant digits, 10^15 ns or 11 days from the profile's start -- ns since the Unix
    epoch have 19 digits, which is why ``ts`` is relative).

    A reader gets the ns back exactly by reading the text as a decimal or by rounding ``ts * 1000`` (Perfetto
    does), so ``ts + dur`` is the end to the ns.
    """
    return ns / 1000


def trace_metadata(epoch_ns):
    """The trace's ``otherData``: the time origin of its ``ts`` values (the profile's start)."""
    if epoch_ns is None:
        return {}
    start = _UNIX_EPOCH + datetime.timedelta(microseconds=epoch_ns // 1000)
    return {
        "profile_start_epoch_ns": epoch_ns,
        "profile_start_time": start.isoformat(timespec="microseconds"),
        "time_unit": "ts, dur and the times in args are microseconds since profile_start_epoch_ns",
    }


def _relative_us(ns, epoch_ns):
    """The exact us text (3 decimals) of a time relative to ``epoch_ns``; N/A for None."""
    return us(None if ns is None else ns - epoch_ns)


def _meta(kind, pid, tid, args):
    return {"name": kind, "ph": "M", "pid": pid, "tid": tid, "args": args}
