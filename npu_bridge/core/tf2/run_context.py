"""``npu_device.npu_run_context`` and ``configs.run_context_options()``: per-scope run options of the adapter.

On the NPU, the recompute setting of a run context applies to the graphs compiled inside the scope (memory
saving by recomputation in the graph engine). TensorFlow keeps its own memory plan here, so the scope validates
its options and says once that they have no effect.
"""

import contextlib
import threading

from npu_bridge.core.runtime import log
from npu_bridge.core.runtime.errors import NpuArgumentError
from npu_bridge.core.tf2.global_options import OptionGroup


class NpuRunContextOptions:
    """Options of a run context; its only field is ``experimental`` (``graph_memory_optimize_config.recompute``)."""

    def __init__(self):
        self.experimental = OptionGroup("experimental", threading.Event())


def run_context_options():
    """Returns new ``NpuRunContextOptions``."""
    return NpuRunContextOptions()


@contextlib.contextmanager
def npu_run_context(options=None):
    """A scope whose graphs compile with ``options`` on the NPU (no effect here).

    Args:
      options: ``NpuRunContextOptions`` or None.
    Raises:
      NpuArgumentError: ``options`` is of another type.
    """
    if options is not None and not isinstance(options, NpuRunContextOptions):
        raise NpuArgumentError(
            f"npu_run_context: options must come from npu_device.configs.run_context_options(), got "
            f"{type(options).__name__}"
        )
    recompute = None if options is None else options.experimental.graph_memory_optimize_config.recompute
    if recompute is not None:
        log.info_once(
            ("npu_device-run-context", recompute),
            "npu_device: npu_run_context(recompute=%r) has no effect here: recomputation is a memory saving of the "
            "NPU's graph engine",
            recompute,
        )
    yield
