"""Names a hang early: a rank that waits in a collective longer than ``NPU_BRIDGE_STALL_SECONDS`` says which
collective it waits in and which ranks have not arrived, and what those ranks are doing.

The watchdog's thread calls ``tick`` about four times a second with the runs in flight and the last one that
ended; the session's run hook only records them (a few attribute writes per run, no I/O). From here:

  * this rank's status goes to the job's status directory (``status_files``, made by npu-run), but only once it
    has stayed the same for ``STABLE`` seconds, or at once when a run becomes stalled: a rank that runs steps
    quickly writes nothing, one that sits still (in a collective, or in its own code) writes once;
  * a run in flight for ``threshold`` seconds is stalled: the rank reads its peers' status and logs one warning
    line (``stall_report.rank_line``), once per run. npu-run reads the same files and prints one summary for
    the job. Nothing is stopped: the collective waits on until its timeout.

Without a status directory (ranks started without npu-run) the rank still reports its own stall; the other
ranks' activity is then unknown.
"""

import os
import time

from npu_bridge.core.collectives import stall_report, status_files
from npu_bridge.core.runtime import log

STABLE = 0.5  # seconds a status must stay the same before it is written


def open_status_directory(environ=os.environ):
    """The descriptor of the status directory npu-run named in ``NPU_RUN_STATUS_DIR``, or None (unset or unusable:
    then one warning says why)."""
    path = environ.get(status_files.STATUS_DIR_VARIABLE, "")
    if not path:
        return None
    try:
        return status_files.open_directory(path)
    except OSError as e:
        log.logger.warning(
            "%s cannot be used (%s); stall reports will not show what the other ranks do",
            status_files.STATUS_DIR_VARIABLE,
            e.strerror or e,
        )
        return None


class StallWatch:
    """Publishes this rank's collective activity and reports its stalled runs.

    Args:
      rank: this process's rank.
      threshold: seconds in a collective after which a run is stalled (0: never).
      dir_fd: descriptor of the job's status directory, or None.
      wall: wall clock (the records of ranks and npu-run share it).
      report: function(line) for this rank's report (default: a warning of the ``npu_bridge`` logger).
    """

    def __init__(self, rank, threshold, dir_fd=None, wall=time.time, report=None):
        self.rank = rank
        self.threshold = threshold
        self._fd = dir_fd
        self._wall = wall
        self._report = report or (lambda line: log.logger.warning("%s", line))
        self._key = None
        self._changed_at = 0.0
        self._published = None

    def tick(self, now, runs, last):
        """One look at this rank's runs.

        Args:
          now: the monotonic time of the watchdog's clock.
          runs: the runs in flight (objects with ``started``, ``timeout``, ``step``, ``collectives`` (a
            ``registry.RunCollectives`` or None), ``describe`` and a ``stalled`` flag this sets).
          last: the run that ended last (with ``ended``), or None.
        """
        newly = [r for r in runs if not r.stalled and self.threshold and now - r.started >= self.threshold]
        for run in newly:
            run.stalled = True
        key = (tuple(id(r) for r in runs), id(last), tuple(r.stalled for r in runs))
        if key != self._key:
            self._key, self._changed_at = key, now
        if not newly and (self._fd is None or key == self._published or now - self._changed_at < STABLE):
            return
        record = self.record(now, runs, last)
        if self._fd is not None:
            try:
                status_files.publish(self._fd, self.rank, record)
                self._published = key
            except OSError as e:
                log.warn_once(("stall-status", e.errno), "cannot write this rank's status: %s", e.strerror or e)
        if newly:
            records = status_files.read_all(self._fd) if self._fd is not None else {}
            records[self.rank] = record
            wall_now = self._wall()
            for run in newly:
                entry = next(e for r, e in zip(runs, record["waiting"]) if r is run)
                self._report(stall_report.rank_line(self.rank, entry, records, wall_now))

    def record(self, now, runs, last):
        """This rank's status record (see ``status_files``)."""
        wall_now = self._wall()
        waiting = []
        for run in runs:
            entry = self._run_entry(run)
            entry.update(since=wall_now - (now - run.started), stalled=run.stalled, timeout=run.timeout)
            waiting.append(entry)
        finished = None
        if last is not None:
            finished = self._run_entry(last)
            finished["ended"] = wall_now - (now - last.ended)
        return {
            "rank": self.rank,
            "pid": os.getpid(),
            "time": wall_now,
            "stall_seconds": self.threshold,
            "waiting": waiting,
            "last": finished,
        }

    @staticmethod
    def _run_entry(run):
        if run.collectives is not None:
            collectives = run.collectives.collectives()
        else:
            collectives = [{"op": run.describe()}]
        return {"collectives": collectives, "step": run.step}
