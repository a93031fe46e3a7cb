"""``npu_device.set_npu_loop_size``: the NPU's loop sinking count, accepted and reported.

On the NPU, a function that is one ``while`` loop over a dataset iterator runs its body ``loop size`` times per
call, whatever the loop's own trip count; scripts set ``NPU_LOOP_SIZE`` equal to that trip count. TensorFlow runs
the loop as written, which is the same whenever they agree, so the value is kept and only reported.
"""

import os

from npu_bridge.core.runtime import log
from npu_bridge.core.runtime.errors import NpuArgumentError

VARIABLE = "NPU_LOOP_SIZE"

_loop_size = None


def set_npu_loop_size(loop_size):
    """Sets the loop size of later function calls.

    Args:
      loop_size: an integer >= 1.
    Raises:
      NpuArgumentError: not an integer >= 1.
    """
    global _loop_size
    if isinstance(loop_size, bool) or not isinstance(loop_size, int) or loop_size < 1:
        raise NpuArgumentError(f"set_npu_loop_size({loop_size!r}): the loop size must be an integer >= 1")
    _loop_size = loop_size
    _report(loop_size)


def npu_loop_size():
    """The loop size in force: the last ``set_npu_loop_size``, else ``NPU_LOOP_SIZE``, else 1.

    Raises:
      NpuArgumentError: ``NPU_LOOP_SIZE`` is not an integer >= 1.
    """
    if _loop_size is not None:
        return _loop_size
    text = os.environ.get(VARIABLE, "").strip()
    if not text:
        return 1
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise NpuArgumentError(f"{VARIABLE}={text!r}: the loop size must be an integer >= 1")
    _report(int(text))
    return int(text)


def _report(loop_size):
    if loop_size > 1:
        log.info_once(
            ("npu_device-loop-size", loop_size),
            "npu_device: loop size %d: TensorFlow runs each function's loops with their own trip counts, which "
            "equals the NPU's loop sinking when the trip count is the loop size",
            loop_size,
        )
