"""Which collective ops a graph has, and which of them one ``Session.run`` executes.

The session step needs, per run: whether it runs collectives at all (only those runs are watched and fail
fast after a collective failure), which ranks they wait for (the watchdog probes those), and for runs with
every run a ``collective_graph_key`` that is the same on every rank. TensorFlow derives one from the V1 ops' instance
keys, which is the same on every rank only when every rank runs the same collectives: runs with V2 collectives,
point-to-point transfers or groups of different members get keys of their own, the others the key TensorFlow would
derive, made here so that rank 0 can hold its step sequence first (``step_sequences``). The answer depends only on
the fetched ops, so it is computed once per graph and set of fetches.
"""

import collections
import dataclasses
import hashlib
import threading
import weakref

import tensorflow as tf

MAX_CACHED_RUNS = 256
MAX_RECENT = 4096  # collectives remembered in building order, for ``recorded_since``
POINT_TO_POINT = ("send", "receive")


@dataclasses.dataclass(frozen=True)
class CollectiveInfo:
    """One collective op as built by ``primitives``.

    Attributes:
      kind: the upstream operation it implements ("allreduce", "allgather", ...).
      group: the group name.
      ranks: the world ranks taking part.
      key: its instance key (the first key of its block for size-varying ops).
      needs_graph_key: True for TensorFlow V2 collectives, whose runs need a collective_graph_key.
      shape, dtype: what the op exchanges, e.g. "[6]" and "float32" ("" when unknown).
      site: where the user's code created it ("file:line in function"), None when unknown.
      by_host: a step of a collective that goes by host (``hierarchy``); ``ranks`` are the whole group's.
      on_segment: it runs on the shared-memory segment (else it is one of TensorFlow's collective ops).
    """

    kind: str
    group: str
    ranks: tuple
    key: int
    needs_graph_key: bool = False
    shape: str = ""
    dtype: str = ""
    site: object = None
    by_host: bool = False
    on_segment: bool = False


@dataclasses.dataclass(frozen=True)
class RunCollectives:
    """The collectives one run executes.

    Attributes:
      ops: tuple of (op name, ``CollectiveInfo``).
      ranks: frozenset of the world ranks they involve.
      graph_key: the run's collective_graph_key (never 0: see ``for_run``).
      in_loop: some of them sit in a while loop of the graph (they run many times per run).
      tensorflow_ops: the names of those that are TensorFlow's collective ops (not on the shared-memory segment).
    """

    ops: tuple
    ranks: frozenset
    graph_key: int
    in_loop: bool = False
    tensorflow_ops: tuple = ()

    def collectives(self):
        """The run's collectives as plain dicts (``stall_report`` shows them; ``status_files`` stores them)."""
        return [
            {
                "op": name,
                "kind": info.kind,
                "group": info.group,
                "key": info.key,
                "ranks": list(info.ranks),
                "shape": info.shape,
                "dtype": info.dtype,
                "site": info.site,
            }
            for name, info in self.ops
        ]

    def describe(self, focus=None, limit=3):
        """A short text naming the collectives, e.g. "HcomAllReduce (allreduce, group 'g', ranks [0, 1])".

        Args:
          focus: an op name to name first (the one that failed), when it is one of the run's collectives.
          limit: how many to name.
        """
        ops = sorted(self.ops, key=lambda item: item[0] != focus)
        parts = [f"{name} ({info.kind}, group {info.group!r}, ranks {list(info.ranks)})" for name, info in ops[:limit]]
        if len(ops) > limit:
            parts.append(f"and {len(ops) - limit} more collectives of the run")
        return ", ".join(parts)


class _GraphRecord:
    def __init__(self):
        self.ops = {}
        self.runs = {}


_lock = threading.Lock()
_graphs = weakref.WeakKeyDictionary()
_recent = collections.deque(maxlen=MAX_RECENT)  # (op name, info) in building order
_count = [0]  # collectives recorded so far


def record(op, info):
    """Registers ``op`` (a ``tf.Operation``) as a collective described by ``info``."""
    with _lock:
        _graphs.setdefault(op.graph, _GraphRecord()).ops[op.name] = info
        _recent.append((op.name, info))
        _count[0] += 1


def recorded_count():
    """How many collectives were recorded so far (in any graph)."""
    return _count[0]


def recorded_since(count):
    """The (op name, ``CollectiveInfo``) recorded after ``recorded_count()`` returned ``count`` (the last
    ``MAX_RECENT`` at most)."""
    with _lock:
        new = min(_count[0] - count, len(_recent))
        return list(_recent)[len(_recent) - new :] if new > 0 else []


def info(op):
    """Returns the ``CollectiveInfo`` of ``op``, or None when it is not a registered collective."""
    with _lock:
        graph_record = _graphs.get(op.graph)
        return graph_record.ops.get(op.name) if graph_record else None


def _in_while_loop(op):
    context = op._control_flow_context
    return context is not None and context.GetWhileContext() is not None


def for_run(graph, fetches):
    """Returns the ``RunCollectives`` of running ``fetches`` in ``graph``, or None when it runs none.

    Args:
      graph: the session's graph.
      fetches: the ``fetches`` argument of ``Session.run`` (any nesting of tensors, ops, names, variables).
    """
    with _lock:
        graph_record = _graphs.get(graph)
        if not graph_record or not graph_record.ops:
            return None
    elements = _fetched_ops(graph, fetches)
    cache_key = tuple(sorted(op.name for op in elements))
    with _lock:
        if cache_key in graph_record.runs:
            return graph_record.runs[cache_key]
        known = dict(graph_record.ops)
    found = _collectives_upstream_of(elements, known)
    result = None
    if found:
        v2_keys = sorted(info.key for _, info in found if info.needs_graph_key)
        graph_key = 1 + _hash_keys(v2_keys) if v2_keys else 0
        if not graph_key and any(info.kind in POINT_TO_POINT for _, info in found):
            # TensorFlow would derive the key from the run's instance keys, which differ between the ranks of
            # a ring of sends and receives: their step ids would differ and the transfers never meet.
            graph_key = POINT_TO_POINT_GRAPH_KEY
        if not graph_key and any(i.by_host or set(i.ranks) != set(found[0][1].ranks) for _, i in found):
            # Instance keys that differ between the ranks of one run: groups of other members next to each other
            # (ranks 0 and 1 reduce in {0, 2} and {1, 3} next to a world collective), or the steps of a reduction
            # that goes by host. TensorFlow would derive the key from them, and the step ids of the run's shared
            # collectives would differ. The key comes from what every rank's run has alike, and the ranks the run
            # involves, so that runs of other ranks (which may run more often) keep keys of their own.
            alike = sorted(f"{i.kind}/{len(i.ranks)}/{i.dtype}/{i.shape}" for _, i in found)
            graph_key = 1 + _hash_keys(alike + sorted({r for _, i in found for r in i.ranks}))
        if not graph_key:  # the key TensorFlow would derive, made here so that rank 0 can hold it (step_sequences)
            graph_key = 1 + _hash_keys(sorted(info.key for _, info in found))
        result = RunCollectives(
            ops=tuple(found),
            ranks=frozenset(r for _, i in found for r in i.ranks),
            graph_key=graph_key,
            in_loop=any(_in_while_loop(graph.get_operation_by_name(name)) for name, _ in found),
            tensorflow_ops=tuple(name for name, info in found if not info.on_segment),
        )
    with _lock:
        if len(graph_record.runs) >= MAX_CACHED_RUNS:
            graph_record.runs.clear()
        graph_record.runs[cache_key] = result
    return result


def _fetched_ops(graph, fetches):
    ops = []
    pending = [fetches]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):  # MonitoredSession mixes str and hook keys: no sorting
            pending.extend(item.values())
            continue
        if isinstance(item, (list, tuple)):
            pending.extend(item)
            continue
        try:
            element = graph.as_graph_element(item, allow_tensor=True, allow_operation=True)
        except (TypeError, ValueError, KeyError):
            if isinstance(item, tf.__internal__.CompositeTensor):  # SparseTensor & co: their component tensors
                pending.extend(c for c in tf.nest.flatten(item, expand_composites=True) if c is not item)
            continue  # anything else: TensorFlow reports bad fetches itself
        ops.append(element if isinstance(element, tf.Operation) else element.op)
    return ops


def _collectives_upstream_of(ops, known):
    seen = set()
    stack = list(ops)
    found = []
    while stack:
        op = stack.pop()
        if op.name in seen:
            continue
        seen.add(op.name)
        if op.name in known:
            found.append((op.name, known[op.name]))
        stack.extend(t.op for t in op.inputs)
        stack.extend(op.control_inputs)
    found.sort()
    return found


def _hash_keys(keys):
    text = ",".join(str(k) for k in keys)
    return int.from_bytes(hashlib.sha256(text.encode("ascii")).digest()[:7], "big")


POINT_TO_POINT_GRAPH_KEY = 1 + _hash_keys(["point-to-point"])  # every run with a send or receive (``step_sequences``)
