"""The files that keep ops in their original dtype: ``customize_dtypes`` lines and a ``modify_mixlist`` black list.

A kept op is named by node name (``Name::InputDtype:float32,...,OutputDtype:float32``) or by op type
(``OpType::Type:InputDtype:...``), every input and output slot float32: the precision pass leaves float32 slots
alone (slots that are not float keep their dtype here). Op types are written with Ascend's names
(``MatMulV2``), which the emulator maps back to TensorFlow's, so the same files apply on the NPU.
"""

import dataclasses
import json

from npu_bridge.core.precision.op_types import ascend_op_type

NAME = "name"
TYPE = "type"


@dataclasses.dataclass(frozen=True, order=True)
class Kept:
    """One thing a bisection may keep in float32: an op by node name, or every op of a type.

    Attributes:
      selector: ``NAME`` or ``TYPE``.
      target: the node name, or the TensorFlow op type.
      inputs, outputs: how many input and output slots its line lists.
    """

    selector: str
    target: str
    inputs: int = 1
    outputs: int = 1

    def describe(self):
        """ "op NAME" or "op type TYPE"."""
        return f"op {self.target}" if self.selector == NAME else f"op type {self.target}"


def by_name(ops):
    """``Kept`` entries for ``candidates.Op``s, in their order."""
    return [Kept(NAME, op.name, op.inputs, op.outputs) for op in ops]


def by_type(ops):
    """``Kept`` entries, one per op type of ``ops`` (in order of first appearance), listing the most slots of any op of
    the type."""
    slots = {}
    for op in ops:
        inputs, outputs = slots.get(op.type, (0, 0))
        slots[op.type] = (max(inputs, op.inputs), max(outputs, op.outputs))
    return [Kept(TYPE, op_type, inputs, outputs) for op_type, (inputs, outputs) in slots.items()]


def customize_dtypes(kept):
    """Returns the customize_dtypes text keeping ``kept`` in float32 (one line each, sorted; "" for none)."""
    lines = []
    for entry in sorted(set(kept)):
        parts = []
        if entry.inputs:
            parts.append("InputDtype:" + ",".join(["float32"] * entry.inputs))
        parts.append("OutputDtype:" + ",".join(["float32"] * max(1, entry.outputs)))
        head = f"{entry.target}::" if entry.selector == NAME else f"OpType::{ascend_op_type(entry.target)}:"
        lines.append(head + ",".join(parts))
    return "".join(line + "\n" for line in lines)


def modify_mixlist(op_types):
    """Returns the modify_mixlist JSON text that puts ``op_types`` (TensorFlow names) in the black list."""
    names = sorted({ascend_op_type(t) for t in op_types})
    return json.dumps({"black-list": {"to-add": names}}, indent=2) + "\n"
