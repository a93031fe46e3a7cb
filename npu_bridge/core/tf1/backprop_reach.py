"""``gradients_util._IsBackpropagatable`` of TensorFlow 1.15: which tensors graph gradients flow through.

``tf.gradients`` first marks the operations reachable from ``xs`` (``gradients_util._MarkReachedOps``), going on
from a tensor only when ``_IsBackpropagatable(tensor)``: a floating-point, complex, resource or variant tensor
(bfloat16 too), never an integer one. TensorFlow 2.21 asks ``backprop_util.IsTrainable`` there instead and has no
such function, so tools that replace it (SHAP's DeepExplainer sets it to ``lambda tensor: True`` while it builds its
gradients, to reach past integer tensors its own gradient overrides handle) had nothing to replace. ``add`` gives
``gradients_util`` the function and a ``_MarkReachedOps`` that asks the module's current ``_IsBackpropagatable``
at every call, so a replacement takes effect as on 1.15; unreplaced, gradients are exactly TensorFlow 2.21's.
"""

import collections

from tensorflow.python.eager import backprop_util
from tensorflow.python.ops import gradients_util


def _IsBackpropagatable(tensor):  # noqa: N802 (TensorFlow 1.15's name)
    """True when gradients flow through ``tensor``: its dtype is floating-point, complex, resource or variant."""
    return backprop_util.IsTrainable(tensor)


def _mark_reached_ops(from_ops, reached_ops, func_graphs):
    """Adds to ``reached_ops`` every operation reachable from ``from_ops`` through backpropagatable tensors
    (following captures into ``func_graphs``)."""
    pending = collections.deque(from_ops)
    while pending:
        op = pending.popleft()
        if op in reached_ops:
            continue
        reached_ops.add(op)
        for output in op.outputs:
            if gradients_util._IsBackpropagatable(output):  # looked up now: a replacement counts
                pending.extend(gradients_util._Consumers(output, func_graphs))


def add():
    """Gives ``gradients_util`` 1.15's ``_IsBackpropagatable`` and the reach that asks it (idempotent; a
    TensorFlow whose module has a function of that name of its own is left alone)."""
    if getattr(gradients_util, "_IsBackpropagatable", _IsBackpropagatable) is not _IsBackpropagatable:
        return
    gradients_util._IsBackpropagatable = _IsBackpropagatable
    gradients_util._MarkReachedOps = _mark_reached_ops
