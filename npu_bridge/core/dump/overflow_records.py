"""The overflow report: which ops overflowed, in which step, in execution order, first overflow first.

Built from Opdebug records (written here with enable_dump_debug, or by Ascend's runtime): each record is
matched with the dump file of the same task and stream in its step directory (the nearest timestamp), whose
inputs and outputs are summarized like msaccucmp's overflow summary ([Format][Shape][Dtype][Max][Min][Mean],
over finite values, plus NaN/Inf counts). Timestamps order the records: they are the execution order.

Where each op was created in the user's script comes from ``op_sources.json`` (written next to the report by
the session that produced the dump: {op name: "file:line in function"}); dumps from elsewhere have none.
"""

import dataclasses
import os
from typing import List, Optional

from npu_bridge.core.dump import dump_file, dump_tree, tensor_stats
from npu_bridge.core.runtime import bounded_files, inert_text

REPORT_FILE = "overflow_report.txt"
SOURCES_FILE = "op_sources.json"
DEFAULT_DETAILED = 20


@dataclasses.dataclass
class TensorSummary:
    """Statistics of one input or output of an overflowing op (over its finite values)."""

    io: str
    index: int
    data_format: str
    shape: tuple
    dtype: str
    maximum: float
    minimum: float
    mean: float
    nan: int
    inf: int

    def text(self):
        """msaccucmp-style "[Format ND][Shape [2, 3]][Dtype DT_FLOAT][Max ..][Min ..][Mean ..][NaN n][Inf n]";
        Max/Min/Mean are "-" when no value is finite."""
        return (
            f"[Format {self.data_format}][Shape {list(self.shape)}][Dtype {self.dtype}]"
            f"[Max {_number(self.maximum)}][Min {_number(self.minimum)}][Mean {_number(self.mean)}]"
            f"[NaN {self.nan}][Inf {self.inf}]"
        )


@dataclasses.dataclass
class OverflowEntry:
    """One overflowing op in one step.

    Attributes:
      step, model: where the record sits (model is "{model_name}/{model_id}"; None outside a dump tree).
      timestamp: the record's timestamp (execution order).
      op_type, op_name: from the matched dump file ("?" when no dump file matches).
      task_id, stream_id: from the record's name.
      status: the AI Core status word of the record (None when the block is in another layout).
      opdebug_path, dump_path: the files (dump_path None when none matches).
      created_at: where the op was created in the user's script, when known.
      tensors: ``TensorSummary`` list (filled by ``summarize``).
    """

    step: Optional[int]
    model: Optional[str]
    timestamp: int
    op_type: str
    op_name: str
    task_id: Optional[int]
    stream_id: Optional[int]
    status: Optional[int]
    opdebug_path: str
    dump_path: Optional[str]
    created_at: Optional[str] = None
    tensors: List[TensorSummary] = dataclasses.field(default_factory=list)

    def summarize(self):
        """Loads the dump file and fills ``tensors`` (no-op without one or when already done)."""
        if self.tensors or not self.dump_path:
            return
        for tensor in dump_file.load(self.dump_path).tensors:
            self.tensors.append(_summary(tensor))


def find(root, sources=None):
    """Lists the overflows recorded under ``root``.

    Args:
      root: a dump tree (any level) or one Opdebug file.
      sources: {op name: creation site}; default: the op_sources.json files under and above ``root``.
    Returns:
      ``OverflowEntry`` list in execution order (tensors not summarized yet).
    Raises:
      DumpTreeError: ``root`` does not exist.
      DumpFormatError: an Opdebug record is damaged.
    """
    artifacts = dump_tree.scan(root)
    sources = read_sources(root) if sources is None else sources
    dumps = {}
    for artifact in artifacts:
        if artifact.name.kind == "dump":
            key = (os.path.dirname(artifact.path), artifact.name.task_id, artifact.name.stream_id)
            dumps.setdefault(key, []).append(artifact)
    entries = []
    for record in (a for a in artifacts if a.name.kind == "opdebug"):
        name = record.name
        candidates = dumps.get((os.path.dirname(record.path), name.task_id, name.stream_id), [])
        match = min(candidates, key=lambda a: abs((a.name.timestamp or 0) - (name.timestamp or 0)), default=None)
        info = dump_file.load(record.path, name).overflow or {}
        status = info.get("AI Core", {}).get("status")
        op_name = dump_file.load(match.path, match.name).op_name if match else "?"
        entries.append(
            OverflowEntry(
                record.step,
                record.model,
                name.timestamp or 0,
                match.name.op_type if match else "?",
                op_name,
                name.task_id,
                name.stream_id,
                status,
                record.path,
                match.path if match else None,
                sources.get(op_name),
            )
        )
    entries.sort(key=lambda e: (e.timestamp, e.opdebug_path))
    return entries


def read_sources(root):
    """Merges the op_sources.json files in ``root``'s tree and in the directories above it."""
    sources = {}
    above, inside = dump_tree.side_files(root, SOURCES_FILE)
    for path in above + inside:
        try:
            parsed = bounded_files.parse_json(bounded_files.read_text(path))
        except (OSError, ValueError):
            continue  # a damaged side file only costs the creation sites
        if isinstance(parsed, dict):
            sources.update(parsed)
    return sources


def render(entries, root, detailed=DEFAULT_DETAILED):
    """The report text.

    Args:
      entries: ``OverflowEntry`` list in execution order.
      root: the tree the report is about (named in the title).
      detailed: how many entries get their inputs' and outputs' statistics.
    Returns:
      The text, ending with a newline; what comes from files (names, paths, creation sites) is inert
      (``inert_text.value``).
    """
    lines = [f"npu_bridge overflow report for {inert_text.value(root)}"]
    if not entries:
        lines.append("no overflow recorded")
        return "\n".join(lines) + "\n"
    first = entries[0]
    steps = {(e.model, e.step) for e in entries}
    lines.append(
        f"{len(entries)} overflow records in {len(steps)} steps; the first overflowing op is "
        f"[{inert_text.value(first.op_type)}] {inert_text.value(first.op_name)}{_where(first)}"
    )
    current = None
    for number, entry in enumerate(entries, 1):
        if (entry.model, entry.step) != current:
            current = (entry.model, entry.step)
            lines.append("")
            lines.append(f"step {entry.step}" + (f", model {inert_text.value(entry.model)}" if entry.model else ""))
        status = "?" if entry.status is None else f"0x{entry.status:x}"
        lines.append(
            f"  {number}. [{inert_text.value(entry.op_type)}] {inert_text.value(entry.op_name)} "
            f"[AI Core][TaskId {entry.task_id}]"
            f"[StreamId {entry.stream_id}][Status {status}][Timestamp {entry.timestamp}]"
        )
        if number > detailed:
            continue
        if entry.created_at:
            lines.append(f"     created at {inert_text.value(entry.created_at)}")
        entry.summarize()
        for tensor in entry.tensors:
            lines.append(f"     {tensor.io} {tensor.index}: {tensor.text()}")
        files = [inert_text.value(os.path.basename(p)) for p in (entry.opdebug_path, entry.dump_path) if p]
        lines.append(f"     files: {', '.join(files) if files else 'none (they could not be written)'}")
    if len(entries) > detailed:
        lines.append("")
        lines.append(
            f"(statistics are shown for the first {detailed} records; `npu-dump overflow {inert_text.value(root)} "
            f"-n {len(entries)}` shows them all)"
        )
    return "\n".join(lines) + "\n"


def _where(entry):
    text = "" if entry.step is None else f" at step {entry.step}"
    return text + (f", created at {inert_text.value(entry.created_at)}" if entry.created_at else "")


def _number(value):
    return "-" if value != value else f"{value:.6g}"  # NaN: no finite value


def _summary(tensor):
    """The ``TensorSummary`` of a tensor, read block by block (``tensor_stats``)."""
    found = tensor_stats.summarize(tensor) or tensor_stats.Summary()
    return TensorSummary(
        tensor.io,
        tensor.index,
        tensor.format_name,
        tensor.logical_shape(),
        tensor.dtype_name,
        found.maximum,
        found.minimum,
        found.mean,
        found.nan,
        found.inf,
    )
