"""What a failed collective means, said the same way for TF1 session runs and TF2 function calls.

TensorFlow reports a collective that failed as an ``OpError`` of the run or call, often with gRPC's wording. The
replacement is a ``CollectiveError`` that names this rank, the collective, and the rank to blame (the peer that
cannot be reached), or says that the peers ran out of the collective timeout or passed different shapes. The
first failure is recorded on the rank's ``server.Runtime``: TensorFlow stops collectives in a process for good
after one, so later failures repeat its cause.
"""

import re

import tensorflow as tf

from npu_bridge.core.collectives import registry
from npu_bridge.core.runtime import interrupt
from npu_bridge.core.runtime.errors import CollectiveError

_REMOTE_TASK = re.compile(r"remote target /job:[\w-]+/replica:\d+/task:(\d+)")
_EXITED_RANK = re.compile(r"world rank (\d+) has exited")  # the shared-memory engine's words for a peer that ended
_NOISE = (
    "Graph execution error",
    "Detected at node",
    "Node:",
    "From /job:",
    "Original stack trace",
    "The error could be from",
    "Additional GRPC error",
    "[[{{node",
    'File "',
)
CANNOT_RUN_AGAIN = (
    "Collectives cannot run again in this process after that failure (TensorFlow stops them for good): end this "
    "rank and restart the job"
)


def is_collective_failure(error):
    """True when ``error`` (any exception) is a TensorFlow error a collective raised."""
    if not isinstance(error, tf.errors.OpError):
        return False
    if error.op is not None and registry.info(error.op) is not None:
        return True
    return "ollective" in (error.message or "")


def replacement(error, collective, runtime, timeout):
    """The exception to raise instead of a collective's TensorFlow error; records the first failure.

    Args:
      error: the ``tf.errors.OpError``.
      collective: what failed, e.g. "HcomAllReduce (allreduce, group 'hccl_world_group', ranks [0, 1])".
      runtime: the rank's ``server.Runtime``.
      timeout: the collective timeout in seconds.
    Returns:
      A ``CollectiveError``, or a ``KeyboardInterrupt`` when npu-run is stopping the job (the peers left because
      of that, not by failing).
    """
    reason = interrupt.stop_reason()
    if reason is not None:
        return KeyboardInterrupt(f"npu-run is stopping the job ({reason}); {collective} could not finish")
    if runtime.failure is not None:
        return CollectiveError(f"{runtime.failure}\n{CANNOT_RUN_AGAIN}")
    message = explain(error, collective, runtime, timeout)
    runtime.record_failure(message)
    return CollectiveError(message)


def cause(error):
    """Returns the informative line of a TensorFlow error message (without TF's wrapping)."""
    for line in (error.message or str(error)).splitlines():
        line = line.strip()
        if not line or any(line.startswith(noise) for noise in _NOISE):
            continue
        while line.startswith("Collective ops is aborted by:"):
            line = line[len("Collective ops is aborted by:") :].strip()
        if line:
            return line
    return type(error).__name__


def explain(error, collective, runtime, timeout):
    """Builds the message of the ``CollectiveError`` that replaces a TensorFlow collective error.

    Args:
      error: the ``tf.errors.OpError`` the run or call raised.
      collective: what failed (see ``replacement``).
      runtime: the ``server.Runtime``.
      timeout: the collective timeout in seconds.
    """
    what = f"rank {runtime.rank}: {collective}"
    detail = cause(error)
    if isinstance(error, tf.errors.DeadlineExceededError):
        return (
            f"{what} did not finish within the collective timeout of {timeout} s (hccl_timeout / "
            f"HCCL_EXEC_TIMEOUT): a peer rank is hung or much slower, or did not run the matching collective "
            f"(every rank must run the same collectives in the same order). TensorFlow: {detail}"
        )
    text = error.message or ""
    called = {int(task) for task in _REMOTE_TASK.findall(text)} | {int(r) for r in _EXITED_RANK.findall(text)}
    peers = [
        r
        for r, address in enumerate(runtime.addresses)
        if r != runtime.rank and (r in called or re.search(re.escape(address) + r"(?!\d)", text))
    ]
    if peers:
        names = ", ".join(runtime.describe_rank(p) for p in peers)
        return f"{what} failed: {names} cannot be reached; it has probably exited or crashed. TensorFlow: {detail}"
    if "Shape mismatch" in detail:
        return (
            f"{what} failed: the ranks passed different shapes; every rank must pass the same shape, "
            f"and the same on every run. TensorFlow: {detail}"
        )
    return f"{what} failed. TensorFlow: {detail}"
