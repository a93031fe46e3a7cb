"""Turns a TensorFlow profiler trace of one function call into the step stats a traced ``Session.run`` gives.

TensorFlow's profiler session (``_pywrap_profiler.ProfilerSession``) returns, from ``stop()``, its XSpace converted
to a ``tensorflow.profiler.Trace`` (``trace_events.proto``): host events with times in ps since the session
started. Every op kernel an executor ran is one event whose ``long_name`` argument is ``<node>:<kernel type>``
(``MatMul:_MklMatMul``); the eager call of a function is an ``EagerExecute`` event whose arguments name the
function (``eager_op``) and mark it as one (``is_func``). The trace has no tensor shapes nor inputs: the caller
hands them over from the graph that ran (``graph_tensors``), where it has it.

The first call also builds the graph, and TensorFlow's shape inference and constant folding then run kernels
on executors of other steps (``GraphRunner``'s step -1): kernels inside an ``ExecutorState::Process`` event of
their thread whose step id (``id``) is not that of a ``FunctionRun`` are left out. (Not every kernel of the
function is inside an executor event of its own step: the trace of a first call can lack some of them.)
tf.data's iterator events (``Iterator::...``) are the input pipeline's, not nodes; eager ops run outside
executors and have no ``long_name``.
"""

import dataclasses
from typing import Tuple

from google.protobuf.message import DecodeError
from tensorflow.core.framework import step_stats_pb2
from tensorflow.tsl.profiler.protobuf import trace_events_pb2

from npu_bridge.core.runtime.errors import ProfileDataError

HOST_DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"
_PS_PER_NS = 1000
_EXECUTOR_EVENT = "ExecutorState::Process"
_FUNCTION_RUN_EVENT = "FunctionRun"
_ITERATOR_PREFIX = "Iterator::"


@dataclasses.dataclass(frozen=True)
class ConvertedTrace:
    """The step stats of a trace and the functions it executed.

    Attributes:
      step_stats: the serialized ``tensorflow.StepStats`` (one node per op kernel execution).
      functions: the names of the functions called eagerly, longest call first.
      ops: how many op executions the step stats hold.
    """

    step_stats: bytes
    functions: Tuple[str, ...]
    ops: int


def to_step_stats(trace, origin_ns, device=HOST_DEVICE, tensors_of=None):
    """Converts a profiler trace into step stats.

    Args:
      trace: the bytes ``ProfilerSession.stop()`` returned (a serialized ``tensorflow.profiler.Trace``).
      origin_ns: wall-clock time of the profiler session's start, ns since the epoch (the trace's time 0).
      device: the device name the op executions are recorded on.
      tensors_of: function(name of the function called) -> {node name: ``graph_tensors.NodeTensors``} of its graph,
        or None; a node found there gets its inputs (in the timeline label, as a traced session run gives them)
        and its output descriptions.
    Returns:
      A ``ConvertedTrace``.
    Raises:
      ProfileDataError: ``trace`` is not a profiler trace.
    """
    try:
        parsed = trace_events_pb2.Trace.FromString(trace)
    except DecodeError as e:
        raise ProfileDataError(f"the TensorFlow profiler returned a trace that cannot be parsed: {e}") from None
    stats = step_stats_pb2.StepStats()
    device_stats = stats.dev_stats.add(device=device)
    calls = []  # (duration ps, function name)
    for event in parsed.trace_events:
        args = event.args
        if event.name == "EagerExecute" and args.get("is_func") == "1" and args.get("eager_op"):
            calls.append((event.duration_ps, args["eager_op"]))
    functions = tuple(name for _, name in sorted(calls, key=lambda call: -call[0]))
    tensors = tensors_of(functions[0]) if tensors_of is not None and functions else None
    for event, node, kernel in _executed_kernels(parsed.trace_events):
        start = origin_ns + event.timestamp_ps // _PS_PER_NS
        known = tensors.get(node) if tensors else None
        inputs = ", ".join(f"{producer}:{port}" for producer, port in known.inputs) if known else ""
        stats_node = device_stats.node_stats.add(
            node_name=node,
            all_start_nanos=start,
            all_start_micros=start // 1000,
            all_end_rel_nanos=event.duration_ps // _PS_PER_NS,
            all_end_rel_micros=event.duration_ps // (_PS_PER_NS * 1000),
            timeline_label=f"{node} = {kernel}({inputs})",
        )
        for slot, (dtype, dims) in enumerate(known.outputs if known else ()):
            output = stats_node.output.add(slot=slot)
            output.tensor_description.dtype = dtype
            if dims is None:
                output.tensor_description.shape.unknown_rank = True
            else:
                for size in dims:
                    output.tensor_description.shape.dim.add(size=size)
    return ConvertedTrace(stats.SerializeToString(), functions, len(device_stats.node_stats))


def _executed_kernels(events):
    """Yields (event, node, kernel type) of the kernel events of the function's steps, by start time."""
    steps = {event.args.get("id") for event in events if event.name == _FUNCTION_RUN_EVENT}
    foreign_until = {}  # (device, thread) -> end ps of the other steps' executor events started so far
    for event in sorted(events, key=lambda item: (item.timestamp_ps, -item.duration_ps)):
        thread = (event.device_id, event.resource_id)
        if event.name == _EXECUTOR_EVENT:
            if steps and event.args.get("id") not in steps:
                foreign_until[thread] = max(foreign_until.get(thread, 0), event.timestamp_ps + event.duration_ps)
            continue
        node, kernel = _node_and_kernel(event.args.get("long_name", ""))
        if node and not node.startswith(_ITERATOR_PREFIX) and event.timestamp_ps >= foreign_until.get(thread, 0):
            yield event, node, kernel


def _node_and_kernel(long_name):
    """("MatMul", "_MklMatMul") from "MatMul:_MklMatMul" (a TraceMe's "#key=value#" tail dropped); ("", "")
    for anything else."""
    text = long_name.split("#", 1)[0]
    node, _, kernel = text.rpartition(":")
    if not node or not kernel or " " in kernel:
        return "", ""
    return node, kernel
