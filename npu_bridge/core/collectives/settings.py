"""Collective settings from the environment and the session options, validated.

``HCCL_CONNECT_TIMEOUT`` (seconds, default 120): how long a rank waits for every other rank to start.
``HCCL_EXEC_TIMEOUT`` (seconds, default 1836, HCCL's default): how long one collective may wait for its
peers; the ``hccl_timeout`` option (an init option) wins over it, as on Ascend.
``HCCL_IF_BASE_PORT`` (default 60000): rank ``r``'s collective server listens on base + r. Upstream uses
this variable for HCCL's host ports; here the gRPC servers of the ranks take that role. Base + rank id never
collides between ranks, also when several ranks share a machine.
``NPU_BRIDGE_STALL_SECONDS`` (seconds, default 60, 0 = off): after how long a rank waiting in a collective reports
which collective it waits in and which ranks have not arrived (``stall_watch``); the wait goes on until the
collective timeout.
"""

import os

from npu_bridge.core.device.device_id import parse_int
from npu_bridge.core.runtime.errors import EnvironmentVariableError, shortened
from npu_bridge.core.world.timeouts import (  # noqa: F401 (re-exported: the collectives' settings in one place)
    CONNECT_TIMEOUT_VARIABLE,
    MAX_SECONDS,
    connect_timeout,
    seconds_variable,
)

EXEC_TIMEOUT_VARIABLE = "HCCL_EXEC_TIMEOUT"
PORT_BASE_VARIABLE = "HCCL_IF_BASE_PORT"
STALL_VARIABLE = "NPU_BRIDGE_STALL_SECONDS"
DEFAULT_STALL_SECONDS = 60
DEFAULT_EXEC_TIMEOUT = 1836
DEFAULT_PORT_BASE = 60000
MAX_PORT = 65535


def stall_seconds(environ=os.environ):
    """Returns NPU_BRIDGE_STALL_SECONDS: seconds in a collective after which a rank reports the stall (0: never).

    Raises:
      ValueError: the variable is not a whole number of seconds from 0 to 2147483647.
    """
    text = environ.get(STALL_VARIABLE, "").strip()
    if not text:
        return DEFAULT_STALL_SECONDS
    value = parse_int(text)
    if value is None or not 0 <= value <= MAX_SECONDS:
        raise EnvironmentVariableError(
            f"{STALL_VARIABLE} has invalid value {shortened(environ[STALL_VARIABLE])}: must be a whole number of "
            f"seconds >= 0 and <= {MAX_SECONDS} (0 turns the stall report off; default {DEFAULT_STALL_SECONDS})"
        )
    return value


def exec_timeout(hccl_timeout=None, environ=os.environ):
    """Returns the collective execution timeout in seconds.

    Args:
      hccl_timeout: the ``hccl_timeout`` option value (already validated), None when unset.
      environ: mapping of environment variables.
    Returns:
      ``hccl_timeout`` when set, else HCCL_EXEC_TIMEOUT, else 1836.
    Raises:
      ValueError: HCCL_EXEC_TIMEOUT is not a whole number >= 1.
    """
    from_environment = seconds_variable(environ, EXEC_TIMEOUT_VARIABLE, DEFAULT_EXEC_TIMEOUT)
    return int(hccl_timeout) if hccl_timeout is not None else from_environment


def port_base(rank_size, environ=os.environ):
    """Returns the port of rank 0's collective server; rank r listens on base + r.

    Args:
      rank_size: the number of ranks (all of their ports must be valid).
      environ: mapping of environment variables.
    Raises:
      ValueError: HCCL_IF_BASE_PORT is not an integer, or base + rank_size - 1 is not a valid port.
    """
    text = environ.get(PORT_BASE_VARIABLE, "").strip()
    if not text:
        base = DEFAULT_PORT_BASE
    else:
        parsed = parse_int(text)  # ASCII digits only
        base = -1 if parsed is None else parsed
    if rank_size > MAX_PORT:
        raise EnvironmentVariableError(
            f"the job has {rank_size} ranks, but each rank's collective server listens on its own port "
            f"({PORT_BASE_VARIABLE} + rank id), so at most {MAX_PORT} ranks fit; use fewer ranks"
        )
    if not text and base > MAX_PORT - rank_size + 1:
        raise EnvironmentVariableError(
            f"the job has {rank_size} ranks: rank r's collective server listens on {PORT_BASE_VARIABLE} + r, "
            f"and above the default base {DEFAULT_PORT_BASE} only {MAX_PORT - DEFAULT_PORT_BASE + 1} ranks fit; "
            f"set {PORT_BASE_VARIABLE} to an integer in [1, {MAX_PORT - rank_size + 1}] or use fewer ranks"
        )
    if not 1 <= base <= MAX_PORT - rank_size + 1:
        value = f"value {shortened(text)}" if text else f"default {DEFAULT_PORT_BASE} (unset)"
        raise EnvironmentVariableError(
            f"{PORT_BASE_VARIABLE} has invalid {value}: must be an integer in [1, {MAX_PORT - rank_size + 1}], "
            f"so that the ports base..base+{rank_size - 1} of the {rank_size} ranks are valid"
        )
    return base
