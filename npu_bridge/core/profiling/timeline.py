"""The timeline: Chrome trace-event JSON (``{"traceEvents": [...]}``) for Perfetto or chrome://tracing.

Processes ("layers", as in Ascend's msprof timeline), for one device:
  Step Trace                  per model: one "Iteration N" span per iteration, and FP_BP / Refresh spans
  Ascend Hardware             the script's ops, one thread per stream (``streams``)
  Communication               collectives (HCCL)
  npu_bridge instrumentation  ops npu_bridge adds (overflow checks, dumps, system ops); not on Ascend
  Host                        each traced Session.run call
Complete events (``ph: "X"``) with ``ts`` / ``dur`` in microseconds since the epoch; metadata events
(``ph: "M"``) name and order processes and threads. Process ids are ``device id * 10 + layer``, so traces
of several ranks can be opened together.
"""

import json

from npu_bridge.core.profiling.step_trace import us

STEP_TRACE, HARDWARE, COMMUNICATION, INSTRUMENTATION, HOST = range(5)
_LAYER_NAMES = {
    STEP_TRACE: "Step Trace",
    HARDWARE: "Ascend Hardware",
    COMMUNICATION: "Communication",
    INSTRUMENTATION: "npu_bridge instrumentation",
    HOST: "Host",
}
_GROUP_LAYERS = {"compute": HARDWARE, "communication": COMMUNICATION, "instrumentation": INSTRUMENTATION}


class TimelineWriter:
    """Streams trace events into a JSON file.

    Args:
      path: the file to write.
      device_id: the device, used in process ids and names.
    """

    def __init__(self, path, device_id):
        self._device = device_id
        self._file = open(path, "w", encoding="utf-8")  # pylint: disable=consider-using-with
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

    def op(self, op, group, stream, args):
        """Writes an op execution on its stream (``group`` as in ``streams.StreamAssigner``)."""
        self.event(
            {
                "name": op.name,
                "ph": "X",
                "pid": self.pid(_GROUP_LAYERS[group]),
                "tid": stream,
                "ts": _ts(op.start_ns),
                "dur": _ts(op.end_ns - op.start_ns),
                "args": args,
            }
        )

    def host_run(self, start_ns, end_ns, args):
        """Writes one Session.run call on the Host layer."""
        self.event(
            {
                "name": "Session.run",
                "ph": "X",
                "pid": self.pid(HOST),
                "tid": 0,
                "ts": _ts(start_ns),
                "dur": _ts(end_ns - start_ns),
                "args": args,
            }
        )

    def close(self, streams, step_events):
        """Writes step trace and metadata events and closes the file.

        Args:
          streams: {stream id: (group, device, row)} from ``StreamAssigner.streams``.
          step_events: events from ``step_trace_events`` (written as given).
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
        self._file.write("\n]}\n")
        self._file.close()

    def abort(self):
        """Closes the file unfinished, if still open (the export failed; its files are thrown away)."""
        self._file.close()


def step_trace_events(rows, pid):
    """Trace events of the step trace: per iteration a span and its FP_BP and Refresh parts.

    Args:
      rows: ``step_trace.Iteration``s with ``prev_end_ns`` filled in.
      pid: the process id to use.
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
            "FP Start": us(row.fp_start_ns),
            "BP End": us(row.bp_end_ns),
            "Iteration End": us(row.end_ns),
            "Iteration Time(ns)": row.time_ns if row.time_ns is not None else "N/A",
            "FP_BP Time": us(row.fp_bp_ns),
            "Iteration Refresh": us(row.refresh_ns),
            "Data_aug Bound": us(row.data_aug_ns),
        }
        if row.estimate_us is not None:
            args["Estimated Ascend Iteration Time(us)"] = round(row.estimate_us, 3)
        events.append(
            {
                "name": f"Iteration {row.iteration_id}",
                "ph": "X",
                "pid": pid,
                "tid": row.model_id,
                "ts": _ts(start),
                "dur": _ts(row.end_ns - start),
                "args": args,
            }
        )
        if row.fp_bp_ns is not None and row.fp_bp_ns >= 0:
            events.append(
                {
                    "name": "FP_BP",
                    "ph": "X",
                    "pid": pid,
                    "tid": 1000 + row.model_id,
                    "ts": _ts(row.fp_start_ns),
                    "dur": _ts(row.fp_bp_ns),
                }
            )
        if row.refresh_ns is not None and row.refresh_ns >= 0:
            events.append(
                {
                    "name": "Refresh",
                    "ph": "X",
                    "pid": pid,
                    "tid": 1000 + row.model_id,
                    "ts": _ts(row.bp_end_ns),
                    "dur": _ts(row.refresh_ns),
                }
            )
    return events


def write_step_trace_json(path, rows, device_id):
    """Writes ``step_trace_*.json``: the step trace events alone, as a trace-event JSON object."""
    pid = device_id * 10 + STEP_TRACE
    events = step_trace_events(rows, pid)
    events.append(_meta("process_name", pid, 0, {"name": f"Step Trace (device {device_id})"}))
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"displayTimeUnit": "ms", "traceEvents": events}, f, separators=(",", ":"))


def _ts(ns):
    return round(ns / 1000, 3)


def _meta(kind, pid, tid, args):
    return {"name": kind, "ph": "M", "pid": pid, "tid": tid, "args": args}
