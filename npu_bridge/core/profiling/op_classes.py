"""What each executed TensorFlow node is, as far as an Ascend-style profile is concerned.

Every node TensorFlow's step stats report falls in one category:
  * "plumbing": nodes that are not device tasks on Ascend (constants, variable handles and reads, no-ops,
    function arguments and return values, TF1 control-flow primitives, npu_bridge's loop machinery). They are
    left out of the profile.
  * "instrumentation": ops npu_bridge inserts or runs for itself (overflow checks, dumps, fp16 saturation,
    exception capture, the iterations loop guard, the system init ops). Shown on their own timeline row, never
    counted as the script's ops.
  * "hccl": collective communication ops (the TensorFlow collectives HCCL calls lower to); Ascend's task type
    HCCL, shown on the communication row.
  * "task": everything else, the script's ops. Task type AI_CPU for the op kinds Ascend runs on its AI CPU
    (input pipeline, strings, summaries, file I/O) and AI_CORE otherwise -- an approximation by op type.
"""

import functools
import re

from npu_bridge.core.runtime import native_library

PLUMBING, INSTRUMENTATION, HCCL, TASK = "plumbing", "instrumentation", "hccl", "task"

# Names made by the iterations_per_loop pass (optimizers/passes/iterations_loop_pass.cc: kPrefix, "/body/" and the
# counter's NextIteration, which runs when a step's fetched ops have finished).
LOOP_PREFIX = "npu_iterations_loop/"
LOOP_BODY_PREFIX = "npu_iterations_loop/body/"
LOOP_STEP_END = "npu_iterations_loop/counter/next"
# What the instrumenting passes append to an op they replace by name (optimizers/graph/instrumentation.h).
_FORWARDED_SOURCE = re.compile(r"(/npu_(dump|overflow|exception)_source(_\d+)?)+$")

_PLUMBING_TYPES = frozenset(
    (
        "NoOp",
        "Const",
        "HostConst",
        "_Arg",
        "_Retval",
        "_DeviceArg",
        "_DeviceRetval",
        "Placeholder",
        "PlaceholderWithDefault",
        "Enter",
        "RefEnter",
        "Exit",
        "RefExit",
        "Merge",
        "RefMerge",
        "Switch",
        "RefSwitch",
        "NextIteration",
        "RefNextIteration",
        "LoopCond",
        "ControlTrigger",
        "VarHandleOp",
        "VariableV2",
        "Variable",
        "ReadVariableOp",
        "VarIsInitializedOp",
        "IteratorV2",
        "Iterator",
        "AnonymousIteratorV2",
        "AnonymousIteratorV3",
        "MultiDeviceIterator",
        "_Send",
        "_Recv",
        "_HostSend",
        "_HostRecv",
    )
)
_PLUMBING_NAMES = frozenset(("_SOURCE", "_SINK"))
_SYSTEM_TYPES = frozenset(("NPUInit", "NPUShutdown"))
_COLLECTIVE_PREFIXES = ("Collective", "Nccl", "Hcom")
_AI_CPU_TYPES = frozenset(
    (
        "Print",
        "PrintV2",
        "Assert",
        "SaveV2",
        "RestoreV2",
        "MergeV2Checkpoints",
        "ShardedFilename",
        "StringJoin",
        "Unique",
        "Where",
        "Bincount",
        "PyFunc",
        "EagerPyFunc",
        "DecodeRaw",
        "TopKV2",
    )
)
_AI_CPU_WORDS = ("Iterator", "Dataset", "Queue", "Summary", "String", "Decode", "Parse", "Reader", "File")
_BACKWARD_NAME = re.compile(r"(^|/)gradients(_\d+)?/")
_BACKWARD_TYPE = re.compile(r"(Grad(V\d)?|GradGrad|Backprop\w*|GradInput|GradFilter)$")
_UPDATE_TYPE = re.compile(r"^(Resource)?(Sparse)?(Apply|Scatter|Assign)")
_DATA_INPUT_WORDS = ("IteratorGetNext", "Dequeue", "Reader")


def display_name(node_name):
    """The node's name in the user's graph: a node moved into the iterations loop keeps its name, and an op the dump,
    overflow-check or exception-capture pass renamed (``X/npu_dump_source``, a node named X forwards its outputs)
    is X."""
    if node_name.startswith(LOOP_BODY_PREFIX):
        node_name = node_name[len(LOOP_BODY_PREFIX) :]
    return _FORWARDED_SOURCE.sub("", node_name)


def category(node_name, op_type):
    """Returns PLUMBING, INSTRUMENTATION, HCCL or TASK for a node."""
    if node_name in _PLUMBING_NAMES or op_type in _PLUMBING_TYPES:
        return PLUMBING
    if node_name.startswith(LOOP_PREFIX) and not node_name.startswith(LOOP_BODY_PREFIX):
        return PLUMBING
    if op_type in _SYSTEM_TYPES or op_type in _instrumentation_types():
        return INSTRUMENTATION
    if op_type.startswith(_COLLECTIVE_PREFIXES):
        return HCCL
    return TASK


@functools.lru_cache(maxsize=None)
def _op_classes():
    return native_library.read_json("npu_bridge_op_classes_json")


def _instrumentation_types():
    """The op types the NpuOptimizer passes insert (the C++ library's list)."""
    return frozenset(_op_classes()["instrumentation"])


def artifact_type(op_type):
    """The op type artifacts show for an executed op type: the precision pass's NpuRound is Ascend's Cast."""
    return _op_classes()["artifact_types"].get(op_type, op_type)


def task_type(kind, op_type):
    """Ascend's Task Type of a node of category ``kind``: HCCL, AI_CPU or AI_CORE."""
    if kind == HCCL:
        return "HCCL"
    if kind == INSTRUMENTATION or op_type in _AI_CPU_TYPES or any(w in op_type for w in _AI_CPU_WORDS):
        return "AI_CPU"
    return "AI_CORE"


def is_backward(name, op_type):
    """True for ops of the backward pass: under a ``gradients`` name scope or of a gradient op type."""
    return bool(_BACKWARD_NAME.search(name) or _BACKWARD_TYPE.search(op_type))


def is_forward(name, op_type):
    """True for ops that can start the forward pass: not backward, not a variable update, not data input."""
    return not (
        is_backward(name, op_type) or _UPDATE_TYPE.match(op_type) or any(w in op_type for w in _DATA_INPUT_WORDS)
    )
