"""Slurm's compact notations for node lists and task counts, read without ``scontrol``.

A node list is comma-separated names; a name may hold bracketed ranges that expand in order, keeping zero padding
(``n[01-03],m5`` is n01, n02, n03, m5; ``r[1-2]-n[1-2]`` is r1-n1, r1-n2, r2-n1, r2-n2). Tasks per node are
comma-separated counts, ``c(xk)`` meaning k nodes with c tasks each (``2(x3),1`` is 2, 2, 2, 1).
"""

import re

from npu_bridge.core.runtime.errors import RankTableError, shortened

MAX_NAMES = 65536  # more nodes than any Slurm cluster has; bounds what a hostile variable can make us build
_COUNT = re.compile(r"([0-9]+)(?:\(x([0-9]+)\))?")
_RANGE = re.compile(r"([0-9]+)(?:-([0-9]+))?")


NODES_ALLOWED = "must be node names separated by commas, with ranges in brackets, like n[01-04],m5"
COUNTS_ALLOWED = 'must be task counts separated by commas, like "2(x3),1" (2 tasks on each of 3 nodes, then 1)'


def _error(name, text, why, allowed=NODES_ALLOWED):
    return RankTableError(f"{name} has invalid value {shortened(text)}: {why}; {allowed}")


def _split_top_level(text, name):
    """Splits at commas outside brackets."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char == "[":
            depth += 1
            if depth > 1:
                raise _error(name, text, "brackets cannot nest")
        elif char == "]":
            depth -= 1
            if depth < 0:
                raise _error(name, text, "a ']' has no '['")
        elif char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    if depth:
        raise _error(name, text, "a '[' is not closed")
    parts.append(text[start:])
    return parts


def _range_values(body, name, text):
    values = []
    for item in body.split(","):
        match = _RANGE.fullmatch(item.strip())
        if not match:
            raise _error(name, text, f"the brackets hold {shortened(body)}, not numbers and ranges like 1-4")
        first, last = match.group(1), match.group(2) or match.group(1)
        if int(last) < int(first):
            raise _error(name, text, f"the range {item.strip()} runs backwards")
        if int(last) - int(first) >= MAX_NAMES:
            raise _error(name, text, f"the range {item.strip()} has more than {MAX_NAMES} names")
        width = len(first) if first.startswith("0") and len(first) > 1 else 0
        values.extend(str(v).zfill(width) for v in range(int(first), int(last) + 1))
    return values


def _expand_one(pattern, name, text):
    if "[]" in pattern:
        raise _error(name, text, "empty brackets")
    names = [""]
    for literal, body in re.findall(r"([^\[]*)(?:\[([^\]]*)\])?", pattern):
        names = [n + literal for n in names]
        if body:
            values = _range_values(body, name, text)
            if len(names) * len(values) > MAX_NAMES:
                raise _error(name, text, f"it names more than {MAX_NAMES} nodes")
            names = [n + v for n in names for v in values]
    return names


def expand_nodes(text, name="SLURM_STEP_NODELIST"):
    """Expands a Slurm node list into node names, in order.

    Args:
      text: the list, e.g. ``"n[01-03],m5"``.
      name: the variable it came from, for messages.
    Returns:
      A list of node names.
    Raises:
      RankTableError: the text is empty or malformed, or names more than ``MAX_NAMES`` nodes.
    """
    stripped = text.strip()
    if not stripped:
        raise _error(name, text, "an empty node list")
    names = []
    for part in _split_top_level(stripped, name):
        if not part.strip() or any(c.isspace() for c in part.strip()):
            raise _error(name, text, "node names are non-empty and separated by single commas")
        names.extend(_expand_one(part.strip(), name, text))
        if len(names) > MAX_NAMES:
            raise _error(name, text, f"it names more than {MAX_NAMES} nodes")
    return names


def expand_counts(text, name="SLURM_STEP_TASKS_PER_NODE"):
    """Expands Slurm's tasks-per-node notation into one count per node.

    Args:
      text: e.g. ``"2(x3),1"``.
      name: the variable it came from, for messages.
    Returns:
      A list of positive integers.
    Raises:
      RankTableError: malformed, a count of 0, or more than ``MAX_NAMES`` nodes.
    """
    counts = []
    for item in text.strip().split(","):
        match = _COUNT.fullmatch(item.strip())
        if not match:
            raise _error(name, text, "not a count", COUNTS_ALLOWED)
        count, repeat = int(match.group(1)), int(match.group(2) or 1)
        if count < 1 or repeat < 1:
            raise _error(name, text, "every node runs at least one task", COUNTS_ALLOWED)
        if len(counts) + repeat > MAX_NAMES:
            raise _error(name, text, f"it describes more than {MAX_NAMES} nodes", COUNTS_ALLOWED)
        counts.extend([count] * repeat)
    return counts
