"""Reads TensorFlow's step stats of one run into op executions and splits them into training iterations.

Per node, TensorFlow records the device, the start (``all_start_nanos``) and end of its execution, its output
tensors (dtype, shape) and a timeline label ``name = Type(input, input:1, ^ctrl)``, which gives the op type and
the inputs; an input's dtype and shape are those of the producing output.
The op type is the user's graph's (``executed_op_types``), whatever kernel TensorFlow ran.
A node inside a TF while loop is recorded once per loop iteration.

TensorFlow also records the body nodes of function calls. The bodies of composed ops (``composite``: a
DynamicRNN's time loop) are folded into their call, which becomes one op of the composed type.
"""

import bisect
import collections
import dataclasses
import re
from typing import Tuple

from tensorflow.core.framework import step_stats_pb2, types_pb2

from npu_bridge.core.compute import composite
from npu_bridge.core.profiling import op_classes
from npu_bridge.core.runtime import executed_op_types

_DTYPE_NAMES = {"HALF": "FLOAT16", "BFLOAT16": "BF16"}
_LABEL = re.compile(r"(?:^|\] )(\S+) = ([\w>]+)\((.*)\)$")


@dataclasses.dataclass(frozen=True)
class OpRun:
    """One execution of one node.

    Attributes:
      node: the node name in the graph TensorFlow ran.
      name: the node's name in the user's graph (``op_classes.display_name``).
      op_type: the op type in the user's graph (``executed_op_types.user_op_type``), as artifacts name it
        (``op_classes.artifact_type``; a composed op's call has the composed type).
      tf_op_type: the TensorFlow op type of the node (``executed_op_types.user_op_type``: oneDNN's kernel names
        mapped back), before the artifact naming: ``NpuRound`` where ``op_type`` says ``Cast``, the function
        call where ``op_type`` names a composed op.
      kind: ``op_classes.category`` of the node.
      device: the TensorFlow device.
      start_ns, end_ns: wall-clock start and end, ns since the epoch.
      inputs, outputs: tuples of (dtype name, shape tuple or None when unknown); empty when shapes were not read.
    """

    node: str
    name: str
    op_type: str
    kind: str
    device: str
    start_ns: int
    end_ns: int
    inputs: Tuple = ()
    outputs: Tuple = ()
    tf_op_type: str = ""


@dataclasses.dataclass(frozen=True)
class RunOps:
    """The executions of one run.

    Attributes:
      ops: the ``OpRun``s that are not plumbing, by start time.
      graph_key: identifies the graph that ran (the set of its executed node names).
      fetched: names of the tensors the run returned.
      step_ends: end times of the iterations of an iterations_per_loop run (empty for a plain run).
    """

    ops: Tuple[OpRun, ...]
    graph_key: frozenset
    fetched: Tuple[str, ...]
    step_ends: Tuple[int, ...]


class StepStatsReader:
    """Parses serialized ``StepStats``; caches what it learnt about each timeline label.

    Args:
      read_shapes: also read input and output dtypes and shapes (slower).
    """

    def __init__(self, read_shapes=True):
        self._read_shapes = read_shapes
        self._labels = {}

    def read(self, serialized):
        """Returns the ``RunOps`` of one serialized ``StepStats``."""
        stats = step_stats_pb2.StepStats.FromString(serialized)
        nodes = []
        for device_stats in stats.dev_stats:
            device = device_stats.device
            for node in device_stats.node_stats:
                start = node.all_start_nanos or node.all_start_micros * 1000
                end = start + _duration_ns(node)
                nodes.append((start, end, device, node))
        nodes.sort(key=lambda item: item[0])
        produced = {}
        ops, names, fetched, step_ends = [], set(), [], []
        internals = []  # (start, composed op type) of the body nodes of composed ops
        for start, end, device, node in nodes:
            name = node.node_name
            names.add(name)
            internal = composite.internal_op_type(name)
            if internal is not None:
                internals.append((start, internal))
                continue
            op_type, tf_op_type, inputs, kind = self._label(name, node.timeline_label)
            outputs = self._outputs(node) if self._read_shapes else ()
            if outputs:
                for slot, tensor in outputs:
                    produced[(name, slot)] = tensor
            if name == op_classes.LOOP_STEP_END:
                step_ends.append(end)
            if op_type == "_Retval" and inputs:
                fetched.append(inputs[0][0])
            if kind == op_classes.PLUMBING:
                continue
            input_tensors = tuple(produced.get(ref, ("", None)) for ref in inputs) if self._read_shapes else ()
            ops.append(
                OpRun(
                    name,
                    op_classes.display_name(name),
                    op_type,
                    kind,
                    device,
                    start,
                    end,
                    input_tensors,
                    tuple(tensor for _, tensor in outputs),
                    tf_op_type,
                )
            )
        if internals:
            ops = _fold_composed(ops, internals)
        return RunOps(tuple(ops), frozenset(names), tuple(fetched), tuple(sorted(step_ends)))

    def _label(self, name, label):
        """(op type, TensorFlow op type, ((producer, port), ...), category) of a node, from its timeline label."""
        cached = self._labels.get(label)
        if cached is None:
            match = _LABEL.search(label)
            if match is None or match.group(1) != name:
                tf_op_type, refs = "unknown", ()
            else:
                tf_op_type = executed_op_types.user_op_type(match.group(2))
                refs = tuple(
                    _input_ref(text) for text in match.group(3).split(", ") if text and not text.startswith("^")
                )
            op_type = op_classes.artifact_type(tf_op_type)
            cached = (op_type, tf_op_type, refs, op_classes.category(name, op_type))
            self._labels[label] = cached
        return cached

    @staticmethod
    def _outputs(node):
        result = []
        for output in node.output:
            description = output.tensor_description
            dtype = types_pb2.DataType.Name(description.dtype)[3:] if description.dtype else ""
            shape = None if description.shape.unknown_rank else tuple(d.size for d in description.shape.dim)
            result.append((output.slot, (_DTYPE_NAMES.get(dtype, dtype), shape)))
        return result


def _fold_composed(ops, internals):
    """``ops`` with each function call that ran a composed op's body given that op's type.

    Args:
      ops: the run's ``OpRun``s by start time.
      internals: (start, op type) of the body nodes left out of ``ops``, by start time.
    """
    starts = [start for start, _ in internals]
    result = []
    for op in ops:
        if composite.is_call(op.op_type):
            inside = internals[bisect.bisect_left(starts, op.start_ns) : bisect.bisect_right(starts, op.end_ns)]
            if inside:
                op_type = collections.Counter(kind for _, kind in inside).most_common(1)[0][0]
                if "_grad/" in op.name:  # the backward call TensorFlow builds: gradients/<call>_grad/...
                    op_type = composite.gradient_type(op_type)
                op = dataclasses.replace(op, op_type=op_type, kind=op_classes.category(op.name, op_type))
        result.append(op)
    return result


def _input_ref(text):
    node, _, port = text.rpartition(":")
    if node and port.isdigit():
        return node, int(port)
    return text, 0


def _duration_ns(node):
    """How long a node ran: until its kernel finished, else (no kernel ran, or a converted trace) until it was done.

    The executor stamps a node's overall end only after it has handed its outputs on, so a successor on another
    thread may start before it; the kernel's end comes before that hand-over, which keeps every op of an
    iterations_per_loop step before the next step's first op.
    """
    kernel = node.op_end_rel_nanos or node.op_end_rel_micros * 1000
    return kernel or node.all_end_rel_nanos or node.all_end_rel_micros * 1000


def split_iterations(run_ops) -> list:
    """Splits a run's ops into training iterations.

    A plain run is one iteration. An iterations_per_loop run of N steps is N iterations: an op belongs to the
    first step whose end (the loop counter's NextIteration, which waits for the step's fetched ops) is not
    before its start; ops after the last step (the loop's exit) belong to the last one.

    Returns:
      A list of lists of ``OpRun``, one per iteration, in order.
    """
    ends = run_ops.step_ends
    if not ends:
        return [list(run_ops.ops)]
    iterations = [[] for _ in ends]
    for op in run_ops.ops:
        iterations[min(bisect.bisect_left(ends, op.start_ns), len(ends) - 1)].append(op)
    return iterations
