"""Data dump, overflow detection and exception dump in Ascend's formats, and the tools that read them.

Sessions dump through NpuOptimizer options (``enable_dump``, ``enable_dump_debug``, ``enable_exception_dump``;
see ``session_step``). The tools -- also the ``npu-dump`` command -- read dumps written here and by Ascend's
runtime:

  load(path)                       one dump file, Opdebug record or .npy tensor (``dump_file.DumpFile``)
  convert(sources, output_dir)     dump files -> .npy (Opdebug records -> .json)
  compare(mine, truth)             two dump trees, tensor by tensor (``dump_compare.Comparison``)
  overflow_report(root)            the overflow report of a dump tree, as text
  flush()                          waits until this process's dumps are on disk
"""

from npu_bridge.core.dump import overflow_records
from npu_bridge.core.dump.dump_compare import compare
from npu_bridge.core.dump.dump_convert import convert
from npu_bridge.core.dump.dump_file import load, write_dump_file
from npu_bridge.core.dump.dump_writer import flush
from npu_bridge.core.dump.overflow_records import DEFAULT_DETAILED
from npu_bridge.core.runtime.errors import DumpFormatError, DumpTreeError


def overflow_report(root, detailed=DEFAULT_DETAILED):
    """Returns the overflow report of the dump tree ``root`` (text; see ``overflow_records``).

    Args:
      root: a dump tree (any level) or an Opdebug file.
      detailed: how many overflow records get their inputs' and outputs' statistics.
    Raises:
      DumpTreeError: ``root`` does not exist.
      DumpFormatError: a record is damaged.
    """
    return overflow_records.render(overflow_records.find(root), root, detailed)


__all__ = [
    "DumpFormatError",
    "DumpTreeError",
    "compare",
    "convert",
    "flush",
    "load",
    "overflow_report",
    "write_dump_file",
]
