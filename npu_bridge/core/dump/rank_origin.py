"""Where the first inf/NaN of a multi-rank job came from: the rank, step and op that made it, followed through the
collectives (``npu-dump origin``).

Each rank's *first event* (``rank_trees`` finds the ranks) is, in execution order (the dump timestamps): its first
dumped op with an inf or NaN output, or its first Opdebug overflow record (enable_dump_debug, which also records
fp16 saturation), whichever came first. An event is judged by the op's inputs in that step: its dumped inputs
(dump_mode all or input), else the dumped outputs of the ops that feed it (op_graph.json):

  made       the inputs are finite and the op is no collective: the op made the value (an origin)
  input      an input already held inf/NaN that no dumped op made: a feed, a variable or an op not dumped (an origin)
  received   a collective (op type Collective* or Hcom*, such as HcomAllReduce) whose inputs are finite on this rank:
             the value came from another rank. The same collective -- model id, step, op name and occurrence -- is
             looked up on the other ranks; those whose inputs to it hold inf/NaN sent it, and their first event is
             judged in turn. When its inputs are not known on some rank, the earliest earlier event of such a rank
             stands in for the sender
  reduction  a collective whose inputs are finite on every rank: the collective itself overflowed (an origin)
  unknown    no input of the op was dumped or found through op_graph.json (an origin, as far as the dump shows)

The job's origin is the earliest origin (dump time) the ranks' events lead to; further origins, made independently,
are listed after it.
"""

import dataclasses
import os
from typing import List, Optional

from npu_bridge.core.dump import dump_file, dump_names, op_graph, overflow_records, tensor_stats
from npu_bridge.core.runtime import inert_text

COLLECTIVE_TYPE_PREFIXES = ("Collective", "Hcom")  # TensorFlow's collective ops here; Ascend's HCCL op types


@dataclasses.dataclass
class TensorCheck:
    """The inf/NaN count of one dumped tensor."""

    io: str
    index: int
    size: int
    nan: int
    inf: int

    @property
    def bad(self):
        """Whether it holds inf or NaN."""
        return self.nan + self.inf > 0

    def text(self):
        """e.g. "output 0: NaN 2, inf 0 of 4 values"."""
        return f"{self.io} {self.index}: NaN {self.nan}, inf {self.inf} of {self.size} values"


@dataclasses.dataclass
class Event:
    """A rank's first inf/NaN (or overflow record), judged.

    Attributes:
      device_id: the rank's device id.
      path: the dump file (or the Opdebug record when no dump file matches it).
      op_name, op_type, step, model, timestamp: where it is (model "{model_name}/{model_id}").
      bad: the ``TensorCheck`` of the tensors holding inf/NaN (outputs; inputs when no output was dumped).
      status: the AI Core status word of its overflow record, when the event is one.
      kind: "made", "input", "received", "reduction" or "unknown" (module docstring).
      detail: why, in words.
      senders: for "received": the events of the ranks the value came from.
      created_at: where the op was created in the user's code (op_sources.json), when known.
    """

    device_id: int
    path: str
    op_name: str
    op_type: str
    step: Optional[int]
    model: Optional[str]
    timestamp: int
    bad: List[TensorCheck]
    status: Optional[int] = None
    kind: str = ""
    detail: str = ""
    senders: list = dataclasses.field(default_factory=list)
    created_at: Optional[str] = None

    @property
    def is_origin(self):
        """Whether the value starts here (every kind but "received")."""
        return self.kind != "received"


@dataclasses.dataclass
class Trace:
    """What ``trace`` found: ``firsts`` {device id: first ``Event`` or None}, ``origins`` earliest first."""

    ranks: list
    firsts: dict
    origins: List[Event]


def is_collective(op_type):
    """Whether a dumped op of ``op_type`` is a collective (exchanges values with other ranks)."""
    return op_type.startswith(COLLECTIVE_TYPE_PREFIXES)


class _Rank:
    """One rank's dump files in execution order, their inf/NaN counts read once, block by block."""

    def __init__(self, tree):
        self.tree = tree
        self.device_id = tree.device_id
        self.dumps = sorted(
            (a for a in tree.artifacts if a.name.kind == "dump"), key=lambda a: (a.name.timestamp or 0, a.path)
        )
        self.sources = overflow_records.read_sources(tree.root)
        self.graph = {dump_names.sanitize(name): entry for name, entry in op_graph.read(tree.root).items()}
        self.occurrences = {}  # (model id, step, op key) -> dump files in execution order
        for artifact in self.dumps:
            self.occurrences.setdefault(_key(artifact), []).append(artifact)
        self._by_path = {artifact.path: artifact for artifact in self.dumps}
        self._checks = {}
        self._first = False

    def checks(self, artifact):
        """(op name, input checks, output checks) of a dump file; tensors without real numbers are left out."""
        if artifact.path not in self._checks:
            loaded = dump_file.load(artifact.path, artifact.name)
            self._checks[artifact.path] = (
                loaded.op_name or artifact.name.op_name,
                [c for c in map(_check, loaded.inputs) if c is not None],
                [c for c in map(_check, loaded.outputs) if c is not None],
            )
        return self._checks[artifact.path]

    def first_event(self):
        """The rank's first event (module docstring), not judged yet; None when it has none."""
        if self._first is False:
            found = next((self.event(a) for a in self.dumps if self._bad(a)), None)
            records = overflow_records.find(self.tree.root, self.sources) if self._has_records() else []
            if records and found is not None and records[0].dump_path == found.path:
                found.status = records[0].status  # the op's own record
            elif records and (found is None or records[0].timestamp < found.timestamp):
                found = self._record_event(records[0])
            self._first = found
        return self._first

    def event(self, artifact, status=None):
        """The ``Event`` of a dump file."""
        op_name, inputs, outputs = self.checks(artifact)
        bad = [c for c in outputs if c.bad] or ([] if outputs else [c for c in inputs if c.bad])
        return Event(
            self.device_id,
            artifact.path,
            op_name,
            artifact.name.op_type,
            artifact.step,
            artifact.model,
            artifact.name.timestamp or 0,
            bad,
            status,
            created_at=_site(self.sources, op_name),
        )

    def artifact(self, path):
        """The dump file at ``path`` among this rank's, or None."""
        return self._by_path.get(path)

    def bad_inputs(self, path):
        """(texts naming the inputs that hold inf/NaN, whether every input is known) of the dump file ``path``."""
        artifact = self.artifact(path)
        if artifact is None:
            return [], False
        _, inputs, _ = self.checks(artifact)
        if inputs:
            return [c.text() for c in inputs if c.bad], True
        entry = self.graph.get(artifact.name.op_name)
        if entry is None or not entry["inputs"]:
            return [], False
        bad, known = [], True
        for index in range(len(entry["inputs"])):
            source = op_graph.producer(entry, index)
            producer = self._producer(artifact, source) if source else None
            check = None
            if producer is not None:
                check = next((c for c in self.checks(producer)[2] if c.index == source[1]), None)
            if check is None:
                known = False
            elif check.bad:
                bad.append(f"input {index} from {source[0]}:{source[1]} (NaN {check.nan}, inf {check.inf})")
        return bad, known

    def peer(self, path, other):
        """The dump file of ``other`` that is the same op occurrence as this rank's ``path`` (None: not dumped)."""
        artifact = self.artifact(path)
        key = _key(artifact)
        ordinal = self.occurrences[key].index(artifact)
        found = other.occurrences.get(key)
        if not found:  # another model id there: the same step and op name in exactly one model
            models = {k for k in other.occurrences if k[1:] == key[1:]}
            found = other.occurrences[models.pop()] if len(models) == 1 else []
        return found[ordinal] if ordinal < len(found) else None

    def _producer(self, artifact, source):
        """The latest dump of output ``source`` = (op name, index) in ``artifact``'s step, before it."""
        model_id, step, _ = _key(artifact)
        candidates = self.occurrences.get((model_id, step, dump_names.sanitize(source[0])), [])
        earlier = [a for a in candidates if (a.name.timestamp or 0) <= (artifact.name.timestamp or 0)]
        return earlier[-1] if earlier else None

    def _bad(self, artifact):
        _, inputs, outputs = self.checks(artifact)
        return any(c.bad for c in outputs) or (not outputs and any(c.bad for c in inputs))

    def _has_records(self):
        return any(a.name.kind == "opdebug" for a in self.tree.artifacts)

    def _record_event(self, record):
        artifact = self.artifact(record.dump_path) if record.dump_path else None
        if artifact is not None:
            return self.event(artifact, record.status)
        return Event(
            self.device_id,
            record.opdebug_path,
            record.op_name,
            record.op_type,
            record.step,
            record.model,
            record.timestamp,
            [],
            record.status,
            created_at=_site(self.sources, record.op_name),
        )


def trace(ranks):
    """Finds each rank's first inf/NaN and the origins they lead to.

    Args:
      ranks: ``rank_trees.RankTree`` list (one job).
    Returns:
      A ``Trace``.
    Raises:
      DumpFormatError: a dump file or record is damaged.
    """
    views = [_Rank(tree) for tree in ranks]
    firsts, origins = {}, {}
    for view in views:
        event = view.first_event()
        firsts[view.device_id] = event
        if event is not None:
            for origin in _judge(event, view, views, {(view.device_id, event.path)}):
                origins.setdefault(_origin_key(origin), origin)
    ordered = sorted(origins.values(), key=lambda e: (e.timestamp, e.device_id))
    return Trace(ranks, firsts, ordered)


def _origin_key(event):
    """What tells origins apart: an op of a rank; a collective that overflowed is one origin on every rank."""
    if event.kind == "reduction":
        model_id = event.model.rpartition("/")[2] if event.model else None
        return ("reduction", model_id, event.step, event.op_name)
    return (event.device_id, event.path)


def _judge(event, view, views, seen):
    """Sets ``event``'s kind, detail and senders; returns the origin events it leads to."""
    if event.kind:
        return _origins_of(event)
    bad_inputs, known = view.bad_inputs(event.path)
    if bad_inputs:
        event.kind = "input"
        event.detail = (
            f"{'; '.join(bad_inputs)} already held inf/NaN, which no op dumped before it made "
            "(a feed, a variable or an op that was not dumped)"
        )
        return [event]
    if not is_collective(event.op_type):
        if known:
            event.kind, event.detail = "made", "its inputs are finite: this op made the value"
        else:
            event.kind = "unknown"
            event.detail = "its inputs were not dumped (dump_mode=all shows whether they were finite)"
        return [event]
    senders, unknown = [], []
    for other in views:
        if other is view:
            continue
        peer = view.peer(event.path, other) if view.artifact(event.path) else None
        other_bad, other_known = other.bad_inputs(peer.path) if peer else ([], False)
        if other_bad:
            senders.append((other, peer, other_bad))
        elif not other_known:
            unknown.append(other)
    here = f"device {event.device_id}"
    if senders:
        event.kind = "received"
        where = "; ".join(f"on device {other.device_id}: {', '.join(texts)}" for other, _, texts in senders)
        event.detail = f"through this collective: its inputs are finite on {here}, not on the senders' ({where})"
        for other, peer, _ in senders:
            source = other.first_event()
            if source is None or source.timestamp > (peer.name.timestamp or 0):
                source = other.event(peer)
            event.senders.append(_follow(source, other, views, seen))
        return _origins_of(event)
    if not unknown and known:
        event.kind = "reduction"
        event.detail = "its inputs are finite on every rank: the collective itself overflowed"
        return [event]
    earlier = [(e, other) for other in unknown if (e := other.first_event()) and e.timestamp < event.timestamp]
    if earlier:
        source, other = min(earlier, key=lambda pair: pair[0].timestamp)
        event.kind = "received"
        event.detail = (
            f"through this collective: its inputs are finite on {here}; on device {other.device_id} they were not "
            "dumped, and an inf/NaN appeared there earlier"
        )
        event.senders.append(_follow(source, other, views, seen))
        return _origins_of(event)
    event.kind = "unknown"
    event.detail = "a collective whose inputs on the other ranks were not dumped"
    return [event]


def _follow(source, view, views, seen):
    key = (source.device_id, source.path)
    if key not in seen:
        seen.add(key)
        _judge(source, view, views, seen)
    elif not source.kind:
        source.kind, source.detail = "unknown", "it leads back to a collective already followed"
    return source


def _origins_of(event, visited=None):
    """The origins ``event`` leads to (itself, or those of its senders); a cycle (damaged data) ends."""
    if event.is_origin:
        return [event]
    visited = set() if visited is None else visited
    if id(event) in visited:
        return []
    visited.add(id(event))
    return [origin for sender in event.senders for origin in _origins_of(sender, visited)]


def _check(tensor):
    found = tensor_stats.summarize(tensor)
    if found is None:
        return None
    return TensorCheck(tensor.io, tensor.index, found.size, found.nan, found.inf)


def _key(artifact):
    """(model id, step, sanitized op name) of a dump file: what names one op occurrence on every rank."""
    model_id = artifact.model.rpartition("/")[2] if artifact.model else None
    return model_id, artifact.step, artifact.name.op_name


def _site(sources, op_name):
    site = sources.get(op_name)
    return site if isinstance(site, str) else None


def render(found):
    """The text of ``npu-dump origin``: the job's origin, then each rank's first inf/NaN.

    Args:
      found: a ``Trace``.
    Returns:
      Lines (str) whose text from files is inert (``inert_text``).
    """
    devices = ", ".join(f"device {t.device_id} {inert_text.value(t.root)}" for t in found.ranks)
    lines = [f"npu-dump origin: {len(found.ranks)} rank trees ({devices})"]
    if not found.origins:
        lines.append(f"no inf/NaN in any dumped tensor and no overflow record on the {len(found.ranks)} ranks")
        return lines
    first = found.origins[0]
    lines.append(f"first inf/NaN: {_describe(first)}")
    lines.extend(f"  {text}" for text in _facts(first))
    reached = [
        e
        for e in found.firsts.values()
        if e is not None and not e.is_origin and any(origin is first for origin in _origins_of(e))
    ]
    for event in reached:
        lines.append(
            f"  it reaches device {event.device_id} through [{inert_text.value(event.op_type)}] "
            f"{inert_text.value(event.op_name)}{_step(event)}"
        )
    if len(found.origins) > 1:
        lines.append("further origins (made independently), earliest first:")
        for event in found.origins[1:]:
            lines.append(f"  {_describe(event)}: {event.kind}: {inert_text.value(event.detail)}")
    lines.append("each rank's first inf/NaN:")
    for device, event in sorted(found.firsts.items()):
        if event is None:
            lines.append(f"  device {device}: none")
            continue
        text = f"  device {device}:{_step(event)} [{inert_text.value(event.op_type)}] {inert_text.value(event.op_name)}"
        text += f" ({'; '.join(c.text() for c in event.bad)})" if event.bad else ""
        lines.append(f"{text}: {event.kind}: {inert_text.value(event.detail)}")
        for sender in event.senders:
            lines.append(f"    from device {sender.device_id}: {_describe(sender)} ({sender.kind})")
    return lines


def _describe(event):
    site = f", created at {inert_text.value(event.created_at)}" if event.created_at else ""
    return (
        f"device {event.device_id},{_step(event)} [{inert_text.value(event.op_type)}] "
        f"{inert_text.value(event.op_name)}{site}"
    )


def _facts(event):
    facts = [c.text() for c in event.bad]
    if event.status is not None:
        facts.append(f"overflow record status 0x{event.status:x}")
    facts.append(f"{event.kind}: {inert_text.value(event.detail)}")
    facts.append(f"file: {inert_text.value(os.path.basename(event.path))}")
    return facts


def _step(event):
    model = f" of model {inert_text.value(event.model)}" if event.model else ""
    return "" if event.step is None else f" step {event.step}{model}"
