"""The ops a bisection chooses from: the ops of the script's graphs that the dump of one reference run recorded.

The discovery run dumps the script's first step (``enable_dump``); the dump's ``op_graph.json`` files (see
``npu_bridge.core.dump.op_graph``) name every op that computes, with its type and data inputs. The ops are put in
an order that follows the data (an op after the ops it reads; ties by name), so a prefix of the list is a region
of the graph that starts at its inputs.
"""

import dataclasses
import heapq

from npu_bridge.core.dump import op_graph
from npu_bridge.core.runtime.errors import BisectError

MAX_OPS = 1_000_000


@dataclasses.dataclass(frozen=True)
class Op:
    """One candidate op: its node name, op type, and how many inputs and outputs a rule about it lists."""

    name: str
    type: str
    inputs: int
    outputs: int


def discover(dump_dir):
    """Returns the ops of the ``op_graph.json`` files below ``dump_dir``, in data order.

    Raises:
      BisectError: there are none (the script built no session graph the dump could record).
    """
    entries = op_graph.read(dump_dir, above_tree=False)
    if not entries:
        raise BisectError(
            "the reference run recorded no ops (the dump of its first step holds no op_graph.json): the command "
            "must build its model in a tf.compat.v1 Session (or NPUEstimator) configured with NpuOptimizer"
        )
    return ordered(entries)[:MAX_OPS]


def ordered(entries):
    """Returns ``Op``s for {name: {"type", "inputs"}} entries, each after the entries it reads (ties by name)."""
    producers = {name: _producers(entry) for name, entry in entries.items()}
    outputs = {}
    for inputs in producers.values():
        for producer, index in inputs:
            outputs[producer] = max(outputs.get(producer, 0), index + 1)
    waiting = {name: {p for p, _ in inputs if p in entries and p != name} for name, inputs in producers.items()}
    readers = {}
    for name, needs in waiting.items():
        for producer in needs:
            readers.setdefault(producer, []).append(name)
    ready = [name for name, needs in waiting.items() if not needs]
    heapq.heapify(ready)
    order = []
    while len(order) < len(entries):
        if not ready:  # a cycle (a while loop's back edge): take the smallest name left
            ready = [min(name for name, needs in waiting.items() if needs is not None)]
        name = heapq.heappop(ready)
        if waiting[name] is None:
            continue
        waiting[name] = None
        order.append(name)
        for reader in readers.get(name, ()):
            needs = waiting[reader]
            if needs is not None:
                needs.discard(name)
                if not needs:
                    heapq.heappush(ready, reader)
    return [
        Op(name, entries[name]["type"], len(entries[name]["inputs"]), max(1, outputs.get(name, 1))) for name in order
    ]


def _producers(entry):
    found = (op_graph.producer(entry, index) for index in range(len(entry["inputs"])))
    return [producer for producer in found if producer is not None]
