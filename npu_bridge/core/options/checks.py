"""Reusable validators for one option value.

A check is a callable that takes a value already converted to the option's kind (bool, int or str) and
returns the normalized value, or raises ``OptionValueError(detail)`` (a ``ValueError``). The parser turns it into
an ``NpuOptionError`` naming the key, the value and the allowed values, so ``detail`` only says what is wrong.
"""

import os
import re
from typing import Any, Callable, Optional, Sequence, Tuple

from npu_bridge.core.options import profiling_options as profiling_options_format
from npu_bridge.core.runtime import bounded_files, log
from npu_bridge.core.runtime.errors import OptionValueError, shortened_text

Check = Callable[[Any], Any]  # value -> normalized value; raises OptionValueError

_STEP_ITEM = re.compile(r"([0-9]+)(?:-([0-9]+))?")  # ASCII digits: \d also matches other scripts' digits
_INT_LIST = r"[0-9]+(,[0-9]+)*"
_NAME_LIST = r"[A-Za-z_][A-Za-z0-9_]*(,[A-Za-z_][A-Za-z0-9_]*)*"
_SHAPE_ITEM = re.compile(r"([^:;,]+):(-?[0-9]+(?:,-?[0-9]+)*)")
_MAX_DUMP_STEP_SETS = 100
_MAX_STEP = 2**63 - 1  # steps travel to the C++ dump kernels as int64


def one_of(values: Sequence[Any], detail: Optional[str] = None) -> Check:
    """Returns a check accepting exactly the given values.

    Args:
      values: the accepted values (compared with ``==``).
      detail: the message for a rejected value; default "must be one of ...".
    Returns:
      The check.
    """
    accepted = tuple(values)
    detail = detail or "must be one of " + ", ".join(str(v) for v in accepted)

    def check(value):
        if value not in accepted:
            raise OptionValueError(detail)
        return value

    return check


def at_least(minimum: int, detail: str) -> Check:
    """Returns a check accepting integers >= ``minimum``.

    Args:
      minimum: smallest accepted value.
      detail: the message for a rejected value.
    Returns:
      The check.
    """

    def check(value):
        if value < minimum:
            raise OptionValueError(detail)
        return value

    return check


def between(low: int, high: int, detail: str) -> Check:
    """Returns a check accepting integers in ``[low, high]``.

    Args:
      low: smallest accepted value.
      high: largest accepted value.
      detail: the message for a rejected value.
    Returns:
      The check.
    """

    def check(value):
        if not low <= value <= high:
            raise OptionValueError(detail)
        return value

    return check


def clamped(low: int, high: int, label: str) -> Check:
    """Returns a check that clamps integers into ``[low, high]`` and warns once when it had to.

    Args:
      low: smallest kept value.
      high: largest kept value.
      label: the option name used in the warning.
    Returns:
      The check; it never raises.
    """

    def check(value):
        result = min(max(value, low), high)
        if result != value:
            log.warn_once(
                (__name__, label, value),
                "NpuOptimizer option %s=%d is outside [%d, %d]; using %d",
                label,
                value,
                low,
                high,
                result,
            )
        return result

    return check


def note_when(noted: Any, message: str) -> Check:
    """Returns a check that accepts every value and logs ``message`` once when the value equals ``noted``.

    Args:
      noted: the value worth a note.
      message: the info-level log text.
    Returns:
      The check; it never raises.
    """

    def check(value):
        if value == noted:
            log.info_once((__name__, message), message)
        return value

    return check


def existing_rw_dir(value: str) -> str:
    """Accepts an existing directory with read and write permission.

    Args:
      value: the path as given.
    Returns:
      The path made absolute with symlinks resolved (``os.path.realpath``).
    Raises:
      ValueError: the path is empty, missing, not a directory or not readable and writable.
    """
    if not value:
        raise OptionValueError("the path is empty")
    path = os.path.realpath(value)
    if not os.path.exists(path):
        raise OptionValueError(f"the path {shortened_text(path)} is invalid: it does not exist")
    if not os.path.isdir(path):
        raise OptionValueError(f"the path {shortened_text(path)} is not a directory")
    if not os.access(path, os.R_OK | os.W_OK):
        raise OptionValueError(f"the path {shortened_text(path)} doesn't have read, write permissions")
    return path


def dump_step(value: str) -> str:
    """Accepts ``|``-separated steps, each ``N`` or ``A-B`` with ``A < B``, at most 100 of them.

    Args:
      value: the dump_step text, e.g. ``"0|5|10-20"``.
    Returns:
      The value unchanged (``dump_step_ranges`` gives the steps it selects).
    Raises:
      OptionValueError: with upstream's wording for each kind of mistake (see ``dump_step_ranges``).
    """
    dump_step_ranges(value)
    return value


def dump_step_ranges(value: str) -> Tuple[Tuple[int, int], ...]:
    """Parses dump_step: the one parser of the option, for its check and for the dump setup step.

    Args:
      value: the dump_step text, e.g. ``"0|5|10-20"``.
    Returns:
      A tuple of (first, last) step ranges, e.g. ((0, 0), (5, 5), (10, 20)).
    Raises:
      OptionValueError: more than 100 sets, an item that is not ``N`` or ``A-B`` in ASCII digits, a range with
        ``A >= B``, or a step beyond the int64 range.
    """
    items = value.split("|")
    if len(items) > _MAX_DUMP_STEP_SETS:
        raise OptionValueError(f"dump_step only support dump <= {_MAX_DUMP_STEP_SETS} sets of data")
    ranges = []
    for item in items:
        match = _STEP_ITEM.fullmatch(item)
        if not match:
            raise OptionValueError("dump_step string style is error, correct example:'0|5|10|50-100'")
        first, second = (int(step) for step in match.groups(match.group(1)))  # "N" is the range N-N
        if max(first, second) > _MAX_STEP:
            raise OptionValueError(f"step {max(first, second)} is beyond the largest step, {_MAX_STEP} (int64)")
        if match.group(2) is not None and first >= second:
            raise OptionValueError("in range steps, the first step is >= second step, correct example:'0|5|10-20'")
        ranges.append((first, second))
    return tuple(ranges)


def matches(pattern: str, detail: str) -> Check:
    """Returns a check accepting strings that match ``pattern`` in full.

    Args:
      pattern: a regular expression (write ``[0-9]``, not ``\\d``, which also matches other scripts' digits).
      detail: the message for a rejected value.
    Returns:
      The check.
    """
    compiled = re.compile(pattern)

    def check(value):
        if not compiled.fullmatch(value):
            raise OptionValueError(detail)
        return value

    return check


def existing_file(value: str) -> str:
    """Accepts the path of an existing, readable regular file (a config file the option hands to Ascend).

    Args:
      value: the path as given.
    Returns:
      The absolute path (``os.path.abspath``), as ``parsed_file`` gives.
    Raises:
      OptionValueError: the path is empty, missing, not a file or not readable.
    """
    _existing(value, os.path.isfile, "a file")
    if not os.access(value, os.R_OK):
        raise OptionValueError(f"the file {shortened_text(value)} is not readable")
    return os.path.abspath(value)


def existing_dir(value: str) -> str:
    """Accepts the path of an existing directory.

    Args:
      value: the path as given.
    Returns:
      The path with symlinks resolved (``os.path.realpath``), as ``existing_rw_dir`` gives.
    Raises:
      OptionValueError: the path is empty, missing or not a directory.
    """
    _existing(value, os.path.isdir, "a directory")
    return os.path.realpath(value)


def _existing(value, is_kind, kind_text):
    if not value:
        raise OptionValueError("the path is empty")
    if not os.path.exists(value):
        raise OptionValueError(f"the path {shortened_text(value)} does not exist")
    if not is_kind(value):
        raise OptionValueError(f"the path {shortened_text(value)} is not {kind_text}")


def fusion_switch_file(value: str) -> str:
    """Accepts a JSON fusion switch file: ``{"Switch": {section: {pass name: "on" | "off", ...}, ...}}``.

    Args:
      value: the path as given.
    Returns:
      The absolute path.
    Raises:
      OptionValueError: a missing or unreadable file, bad JSON, or a layout other than the one above.
    """
    path = existing_file(value)
    try:
        content = bounded_files.parse_json(bounded_files.read_text(path))
    except (OSError, ValueError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else e
        raise OptionValueError(f"the file {shortened_text(value)} is not valid JSON: {reason}") from None
    switch = content.get("Switch") if isinstance(content, dict) else None
    if not isinstance(switch, dict):
        raise OptionValueError(f'the file {shortened_text(value)} must hold a JSON object with a "Switch" object')
    for section, passes in switch.items():
        if not isinstance(passes, dict) or any(state not in ("on", "off") for state in passes.values()):
            raise OptionValueError(f'"Switch"."{shortened_text(section)}" must map pass names to "on" or "off"')
    return path


def int_list(detail: str) -> Check:
    """Returns a check accepting comma-separated non-negative integers such as ``"0,1,2"``.

    Args:
      detail: the message for a rejected value.
    Returns:
      The check.
    """
    return matches(_INT_LIST, detail)


def name_list(detail: str) -> Check:
    """Returns a check accepting comma-separated identifiers (op types, pass names) such as ``"Pooling,SoftmaxV2"``.

    Args:
      detail: the message for a rejected value (empty, an empty item, spaces, other characters).
    Returns:
      The check.
    """
    return matches(_NAME_LIST, detail)


def input_shape(value: str) -> str:
    """Accepts ``name:d,d,...;name2:d,...`` where every dim is an integer >= -1 (-1 = dynamic).

    Args:
      value: the input_shape text.
    Returns:
      The value unchanged.
    Raises:
      ValueError: "input_shape string style is invalid".
    """
    for item in value.split(";"):
        match = _SHAPE_ITEM.fullmatch(item)
        if not match or any(int(dim) < -1 for dim in match.group(2).split(",")):
            raise OptionValueError("input_shape string style is invalid, example:'data:-1,3;label:-1'")
    return value


def dynamic_dims(value: str) -> str:
    """Accepts ``;``-separated groups of comma-separated non-negative integers, all groups equally long.

    Args:
      value: the dynamic_dims text, e.g. ``"20,20;40,40"``.
    Returns:
      The value unchanged.
    Raises:
      ValueError: "dynamic_dims string style is invalid".
    """
    groups = value.split(";")
    if not all(re.fullmatch(_INT_LIST, group) for group in groups) or len({group.count(",") for group in groups}) != 1:
        raise OptionValueError("dynamic_dims string style is invalid, example:'20,20;40,40' (equal-length groups)")
    return value


def profiling_options(value: str) -> str:
    """Accepts a JSON object string, the legacy colon list, or an empty string (= the default options).

    Every key and value is checked (``npu_bridge.core.options.profiling_options``), so a bad profile setting fails
    when the session is created rather than when the profile is written.

    Args:
      value: the profiling_options text.
    Returns:
      The value unchanged.
    Raises:
      ValueError: malformed JSON, a bad key value, or a bad legacy list.
    """
    profiling_options_format.parse(value)
    return value


def parsed_file(load: Callable[[str], Any]) -> Check:
    """Returns the check of an option naming a file that ``load(path)`` reads and validates.

    Args:
      load: a function that raises ``ValueError`` for a missing, unreadable or malformed file.
    Returns:
      A check that returns the absolute path.
    """

    def check(path):
        path = os.path.abspath(path)
        load(path)
        return path

    return check


# The checks that read the file system: a session applies them when it is created (upstream's C++ checks these
# paths then); the config classes, which only carry values, leave them to it.
FILE_SYSTEM_CHECKS = (existing_rw_dir, existing_file, existing_dir)
