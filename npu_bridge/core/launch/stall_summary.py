"""npu-run's one summary of a stalled job: which collectives ranks wait in, which ranks have not arrived.

Every rank reports its own stall (``collectives.stall_watch``); npu-run reads the ranks' status files in the
job's status directory (``collectives.status_files``) twice a second and, once a stall has settled for
``SETTLE`` seconds (so that ranks stalling together make one block, not one each), prints one block for the
job (``collectives.stall_report.job_summary``). A stall is printed once; a new one (another run stalls) is
printed again. The job is not stopped: the collectives wait on until their timeout.
"""

import time

from npu_bridge.core.collectives import stall_report, status_files
from npu_bridge.core.runtime import inert_text

INTERVAL = 0.5
SETTLE = 1.0


class StallSummary:
    """Watches one job's status directory.

    Args:
      dir_fd: descriptor of the status directory (``status_files.make``).
      job_id: the job's id, for the first line.
      clock, wall: monotonic and wall clocks (injectable for tests).
    """

    def __init__(self, dir_fd, job_id, clock=time.monotonic, wall=time.time):
        self._fd = dir_fd
        self._job_id = job_id
        self._clock = clock
        self._wall = wall
        self._next = 0.0
        self._seen = None  # when stalls not yet printed were first seen
        self._printed = frozenset()

    def poll(self):
        """Returns the summary to print now (without the "npu-run: " prefix), or None."""
        now = self._clock()
        if now < self._next:
            return None
        self._next = now + INTERVAL
        records = status_files.read_all(self._fd)
        stalls = stall_report.signature(records)
        if not stalls - self._printed:
            self._seen = None
            return None
        if self._seen is None:
            self._seen = now
        if now - self._seen < SETTLE:
            return None
        self._seen = None
        self._printed |= stalls
        text = stall_report.job_summary(records, self._wall())
        return f"job {inert_text.value(self._job_id)}: {text}" if text else None
