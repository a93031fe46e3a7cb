"""The words of a stall report: which collective a rank waits in, which ranks have not arrived, what they do.

Built from the ranks' status records (``status_files``; ``stall_watch`` writes them): a rank's own report is one
line, npu-run's summary of the job one block. Every value taken from a record is escaped (``inert_text``), so a
name or path cannot forge lines or move the cursor. This module imports no TensorFlow.
"""

from npu_bridge.core.runtime import inert_text

NO_STATUS = "no status (started outside this npu-run, on another machine, or not yet in a collective)"


def collective_text(collective):
    """E.g. "HcomAllReduce (allreduce, group 'g', ranks [0, 1], float32 [6]) created at train.py:20 in main"."""
    c = collective if isinstance(collective, dict) else {}
    ranks = c.get("ranks") if isinstance(c.get("ranks"), list) else []
    data = " ".join(inert_text.value(c[k]) for k in ("dtype", "shape") if c.get(k))
    details = [inert_text.value(c.get("kind", "?")), f"group {inert_text.value(repr(str(c.get('group', '?'))))}"]
    details.append(f"ranks [{', '.join(inert_text.value(r) for r in ranks)}]")
    if data:
        details.append(data)
    site = f" created at {inert_text.value(c['site'])}" if c.get("site") else ""
    return f"{inert_text.value(c.get('op', '?'))} ({', '.join(details)}){site}"


def run_text(entry):
    """The collective a run waits in (its first one), how many more the run has, and its step."""
    collectives = _collectives(entry)
    text = collective_text(collectives[0]) if collectives else "a collective"
    if len(collectives) > 1:
        text += f" (one of the {len(collectives)} collectives of its run)"
    if isinstance(entry.get("step"), int):
        text += f", step {entry['step']}"
    return text


def activity(rank, records, now):
    """What ``rank`` is doing, as far as its status record says."""
    record = records.get(rank)
    if not isinstance(record, dict):
        return NO_STATUS
    waiting = _waiting(record)
    if waiting:
        entry = waiting[0]
        return f"waiting in {run_text(entry)}, for {_age(now, entry.get('since'))}"
    last = record.get("last")
    if isinstance(last, dict) and _collectives(last):
        return f"not in a collective; last finished {run_text(last)}, {_age(now, last.get('ended'))} ago"
    return "not in a collective; has finished none yet"


def missing(rank, entry, records):
    """The ranks ``entry`` (a run rank ``rank`` waits in) needs that are not waiting in one of its collectives."""
    ids = _ids(entry)
    needed = sorted({r for c in _collectives(entry) for r in c.get("ranks", []) if isinstance(r, int)} - {rank})
    return [r for r in needed if not any(_ids(other) & ids for other in _waiting(records.get(r)))]


def rank_line(rank, entry, records, now):
    """One line for rank ``rank``'s own report of its stalled run ``entry``."""
    absent = missing(rank, entry, records)
    others = "; ".join(f"rank {r}: {activity(r, records, now)}" for r in absent) or "none (every rank is in it)"
    return (
        f"rank {rank}: stalled for {_age(now, entry.get('since'))} in {run_text(entry)}; not arrived: {others}. "
        f"Still waiting, until the collective timeout of {_number(entry.get('timeout'))} s "
        "(hccl_timeout / HCCL_EXEC_TIMEOUT)"
    )


def job_summary(records, now):
    """npu-run's block for every stalled run of the job, one paragraph per collective, or None when none is."""
    groups = {}  # the collectives' ids -> [(rank, entry)]
    for rank, record in sorted(records.items()):
        for entry in _waiting(record):
            if entry.get("stalled") is True:
                groups.setdefault(frozenset(_ids(entry)), []).append((rank, entry))
    if not groups:
        return None
    lines = []
    for stalled in groups.values():
        first_rank, first = stalled[0]
        waiting = [rank for rank, _ in stalled]
        absent = [r for r in missing(first_rank, first, records) if r not in waiting]
        lines.append(f"  {run_text(first)}")
        lines.append(
            "    waiting: " + ", ".join(f"rank {rank} (for {_age(now, entry.get('since'))})" for rank, entry in stalled)
        )
        lines.append("    not arrived: " + ("none" if not absent else f"rank{'s' if len(absent) > 1 else ''} "))
        if absent:
            lines[-1] += ", ".join(map(str, absent))
            lines.extend(f"      rank {r}: {activity(r, records, now)}" for r in absent)
    first_rank, some = next(iter(groups.values()))[0]
    threshold = _number(records[first_rank].get("stall_seconds"))
    count = sum(len(stalled) for stalled in groups.values())
    head = (
        f"{count} rank{'s' if count > 1 else ''} stalled in collectives (waiting longer than "
        f"NPU_BRIDGE_STALL_SECONDS={threshold} s); the job keeps waiting until the collective timeout "
        f"({_number(some.get('timeout'))} s, hccl_timeout / HCCL_EXEC_TIMEOUT):"
    )
    return "\n".join([head, *lines])


def signature(records):
    """What identifies the stalls of ``records``: {(rank, since)} of every stalled run."""
    return frozenset(
        (rank, _number(entry.get("since")))
        for rank, record in records.items()
        for entry in _waiting(record)
        if entry.get("stalled") is True
    )


def _waiting(record):
    waiting = record.get("waiting") if isinstance(record, dict) else None
    return [e for e in waiting if isinstance(e, dict)] if isinstance(waiting, list) else []


def _collectives(entry):
    collectives = entry.get("collectives") if isinstance(entry, dict) else None
    return [c for c in collectives if isinstance(c, dict)] if isinstance(collectives, list) else []


def _ids(entry):
    return {(str(c.get("group")), str(c.get("key"))) for c in _collectives(entry)}


def _age(now, since):
    if not isinstance(since, (int, float)) or isinstance(since, bool):
        return "? s"
    return f"{max(0.0, now - since):.1f} s"


def _number(value):
    return inert_text.value(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else "?"
