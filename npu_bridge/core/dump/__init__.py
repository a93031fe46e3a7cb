"""Data dump, overflow detection and exception dump in Ascend's formats, and the tools that read them.

Sessions dump through NpuOptimizer options (``enable_dump``, ``enable_dump_debug``, ``enable_exception_dump``;
see ``npu_bridge.core.session.steps.dump``), which that step maps onto the modules here:

  dump_root            the dump root {dump_path}/{time}/{device id} and its {time} directory
  exception_directory  where exception dumps go, checked when the session is created
  dump_writer          Python's handle on the C++ dump writer and its environment variables
  writer_watch         follows the writer: overflow events, failed writes, finishing the reports
  dump_reports         a dump root's dump_status.json, overflow report and op_sources.json (op_sources: where
                       ops were created; dumped_ops: which ops the root holds files for)

The tools -- also the ``npu-dump`` command -- read dumps written here and by Ascend's
runtime:

  load(path)                       one dump file, Opdebug record or .npy tensor (``dump_file.DumpFile``)
  convert(sources, output_dir)     dump files -> .npy (Opdebug records -> .json)
  compare(mine, truth)             two dump trees, tensor by tensor (``dump_compare.Comparison``)
  overflow_report(root)            the overflow report of a dump tree, as text
  flush()                          waits until this process's dumps are on disk

Its modules besides those above:

  dump_config          ``DumpConfig`` for ``NPURunConfig(dump_config=...)``
  cli                  ``npu-dump``
  dump_file            one dump file; dump_proto: the ``DumpData`` protobuf schema, declared in code
  dump_names           file names of Ascend dump artifacts and how to read them back
  dump_tree            finding the artifacts in a dump directory tree
  dump_layouts         device layouts of tensors in Ascend's dumps, turned back into TensorFlow's
  dump_convert         dump files -> .npy, named as msaccucmp names them
  dump_compare         two dump trees compared tensor by tensor
  compare_metrics      the metrics of Ascend's comparison CSV
  error_origin         which ops introduce error rather than carry it (the rule of ``compare``)
  isolate              ``compare --isolate``: an op rerun on the ground truth's inputs, in float64 on the CPU
  compare_advice       the advisor line of ``compare``: the likely cause at the op to look at first
  compare_html         ``compare --html``: the comparison as a self-contained page
  op_graph             op_graph.json: each dumped op's type, inputs and NodeDef, for rerunning it
  run_config           run_config.json: a dumping run's options, environment, versions, seeds; and their check
  overflow_records     the overflow report: which ops overflowed, in which step, first overflow first
  rank_trees           the rank trees of a multi-rank job's dump ({dump_path}/{time}/{device_id}), one job only
  rank_origin          ``npu-dump origin``: the rank, step and op that made a job's first inf/NaN, across collectives
  rank_compare         ``npu-dump compare`` of two multi-rank dumps, rank by rank
  tensor_stats         statistics of dumped tensors, computed block by block (bounded memory)
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
