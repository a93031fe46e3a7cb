"""Lays the ops of a run onto streams: rows on which no two ops overlap, as tasks on an Ascend stream.

TensorFlow runs independent ops in parallel on a thread pool and its step stats do not say which thread ran
what, so ops are laid out greedily: each op goes to the first row of its group that is free when it starts.
Groups: the script's ops per device, collectives, npu_bridge instrumentation per device. A row keeps its
stream id for the whole profile.
"""

from npu_bridge.core.profiling import op_classes

GROUPS = {
    op_classes.TASK: "compute",
    op_classes.HCCL: "communication",
    op_classes.INSTRUMENTATION: "instrumentation",
}  # op category -> stream group


class StreamAssigner:
    """Assigns stream ids; one instance per profile so ids are stable across runs."""

    def __init__(self):
        self._ids = {}

    @property
    def streams(self):
        """{stream id: (group, device, row)} of every stream handed out."""
        return {stream: key for key, stream in self._ids.items()}

    def assign(self, ops):
        """Places the ops of one run.

        Args:
          ops: the run's ``OpRun``s sorted by start time.
        Returns:
          A list aligned with ``ops`` of (stream id, wait ns): the wait is the idle time of the row since its
          previous op in this run (0 for the row's first op).
        """
        rows = {}  # (group, device) -> [end of last op per row]
        placed = []
        for op in ops:
            group = GROUPS[op.kind]
            device = "" if op.kind == op_classes.HCCL else op.device
            ends = rows.setdefault((group, device), [])
            row = next((i for i, end in enumerate(ends) if end <= op.start_ns), len(ends))
            if row == len(ends):
                ends.append(None)
                wait = 0
            else:
                wait = op.start_ns - ends[row]
            ends[row] = op.end_ns
            placed.append((self._ids.setdefault((group, device, row), len(self._ids)), wait))
        return placed
