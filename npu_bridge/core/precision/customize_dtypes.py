"""``customize_dtypes``: per-op input and output dtypes from a config file.

Each line is ``OpName::InputDtype:d0,d1,...,OutputDtype:d0,...`` (one op by node name) or
``OpType::TypeName:InputDtype:...,OutputDtype:...`` (every op of a type); either part may be left out and
lines starting with ``#`` are comments. The i-th dtype is that of the i-th input (output). Here a float32
slot listed as float16 or bfloat16 is rounded through that type, float32 keeps it float32 (even in a mixed
precision region); dtypes of other slots (integer inputs, ...) are left as the graph has them.
"""

import re

from npu_bridge.core.plan.pass_contract import PrecisionRule
from npu_bridge.core.precision.op_types import tf_op_type
from npu_bridge.core.runtime import bounded_files
from npu_bridge.core.runtime.errors import OptionValueError

# Dtype names Ascend's files use; the float ones change the computation here.
ROUNDING_DTYPES = ("float16", "bfloat16", "float32")
OTHER_DTYPES = (
    "float64",
    "double",
    "int8",
    "uint8",
    "int16",
    "uint16",
    "int32",
    "uint32",
    "int64",
    "uint64",
    "bool",
    "complex64",
    "complex128",
)

_PART = re.compile(r"(InputDtype|OutputDtype):")


def _slots(text, line_number):
    slots = []
    for index, dtype in enumerate(item.strip() for item in text.split(",") if item.strip()):
        if dtype not in ROUNDING_DTYPES + OTHER_DTYPES:
            raise OptionValueError(
                f"line {line_number}: unknown dtype {dtype!r}; known dtypes are "
                + ", ".join(ROUNDING_DTYPES + OTHER_DTYPES)
            )
        if dtype in ROUNDING_DTYPES:
            slots.append((index, dtype))
    return tuple(slots)


def parse(text):
    """Turns customize_dtypes text into precision rules for the rewrite pass.

    Args:
      text: the file content.
    Returns:
      A list of ``PrecisionRule``s, one per line.
    Raises:
      ValueError: a line is malformed or names an unknown dtype.
    """
    rules = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("OpType::"):
            head, _, rest = line[len("OpType::") :].partition(":")
            selector, target = "type", tf_op_type(head.strip())
        elif "::" in line:
            head, _, rest = line.partition("::")
            selector, target = "name", head.strip()
        else:
            raise OptionValueError(
                f"line {number}: {line!r} is not OpName::InputDtype:...,OutputDtype:... or "
                "OpType::Type:InputDtype:...,OutputDtype:..."
            )
        parts = {"InputDtype": (), "OutputDtype": ()}
        pieces = _PART.split(rest)
        if pieces[0].strip(" ,") or len(pieces) < 3:
            raise OptionValueError(
                f"line {number}: expected InputDtype:... and/or OutputDtype:... after the op, got {rest!r}"
            )
        for key, value in zip(pieces[1::2], pieces[2::2]):
            parts[key] = _slots(value, number)
        if not head.strip():
            raise OptionValueError(f"line {number}: the op name or type is empty")
        rules.append(PrecisionRule(selector, target, parts["InputDtype"], parts["OutputDtype"]))
    return rules


def load(path):
    """Reads and parses a customize_dtypes file.

    Args:
      path: the file path.
    Returns:
      The ``PrecisionRule``s (see ``parse``).
    Raises:
      ValueError: the file cannot be read or is malformed.
    """
    try:
        text = bounded_files.read_text(path)
    except OSError as e:
        raise OptionValueError(f"cannot read the file: {e.strerror}") from None
    return parse(text)
