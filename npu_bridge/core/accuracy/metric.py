"""The number a script prints, read from its output, and when two of them agree.

The contract with the script: it prints the metric (its loss after a few steps, a named tensor's norm, ...) on a
line that ``--metric REGEX`` matches; the regex's first group (or the whole match when it has none) is the number.
The last match of standard output counts, or of standard error when standard output has none.
"""

import math
import re

from npu_bridge.core.runtime.errors import BisectError, shortened

DEFAULT_PATTERN = r"loss\s*[=:]\s*([-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|nan|inf))"


def compile_pattern(text):
    """Returns the compiled ``--metric`` regex.

    Raises:
      BisectError: it is not a valid regular expression.
    """
    try:
        return re.compile(text)
    except re.error as e:
        raise BisectError(f"--metric {shortened(text)} is not a regular expression ({e})") from None


def find(pattern, stdout, stderr):
    """Returns the metric of one run: the last match in ``stdout``, else in ``stderr``; None when neither has one.

    Raises:
      BisectError: a match is not a number.
    """
    for text in (stdout, stderr):
        matches = list(pattern.finditer(text or ""))
        if matches:
            last = matches[-1]
            value = last.group(1) if pattern.groups else last.group(0)
            try:
                return float(value)
            except (TypeError, ValueError):
                raise BisectError(
                    f"--metric {shortened(pattern.pattern)} matched {shortened(last.group(0))}, whose "
                    f"{'first group' if pattern.groups else 'text'} {shortened(value)} is not a number"
                ) from None
    return None


def within(value, reference, rtol, atol):
    """True when ``value`` is within ``atol + rtol * |reference|`` of ``reference`` (NaN never is)."""
    if math.isnan(value) or math.isnan(reference):
        return False
    if math.isinf(value) or math.isinf(reference):
        return value == reference
    return abs(value - reference) <= atol + rtol * abs(reference)
