"""Job information upstream's NPUEstimator reads (``npu_common``): a job start file, else the environment.

A job start file is JSON: {"job_id": ..., "device_info": {"Index": ...}, "rank_table_file": ...,
"rank_size": ..., "local_checkpoint_dir": ...}. Without one, ``JOB_ID`` must be set (upstream's NPUEstimator
refuses to start otherwise); ``HEARTBEAT``, ``RANK_TABLE_FILE``, ``POD_NAME`` or ``RANK_ID``,
``LOCAL_CHECKPOINT_DIR`` and ``RANK_SIZE`` / ``CM_WORKER_SIZE`` complete it.
"""

import dataclasses
import os
from typing import Optional

from npu_bridge.core.device import device_id
from npu_bridge.core.runtime import bounded_files, log
from npu_bridge.core.runtime.errors import EnvironmentVariableError, NpuArgumentError, RankTableError, shortened
from npu_bridge.core.world import world

JOB_ID_ERROR = "Load job info failed, please check whether `JOB_ID` is set in environment variable"


def get_ranksize():
    """Returns the rank size as upstream's ``util.get_ranksize``: a **string**, "1" when unset.

    Raises:
      ValueError: both RANK_SIZE and CM_WORKER_SIZE are set.
    """
    world.check_size_variables(os.environ)
    rank_size, worker_size = os.environ.get("RANK_SIZE"), os.environ.get("CM_WORKER_SIZE")
    return rank_size if rank_size is not None else (worker_size if worker_size is not None else "1")


@dataclasses.dataclass
class DeviceInfo:
    """This process's device: ``index`` is its identity (device_info.Index, POD_NAME or RANK_ID)."""

    index: str = "0"


@dataclasses.dataclass
class JobConfig:
    """Job-level settings: ``job_id`` and the heartbeat interval (HEARTBEAT)."""

    job_id: str = ""
    heartbeat_time: Optional[str] = None


@dataclasses.dataclass
class JobInfo:
    """Everything NPUEstimator knows about the job."""

    job_id: str
    job_config: JobConfig
    device_info: DeviceInfo
    rank_table_file: Optional[str]
    local_checkpoint_dir: Optional[str]
    rank_size: int


class NPUBasics:
    """Reads the job information once (upstream's job-info reader).

    Args:
      job_start_file: path of a job start file; "" (or a missing file) reads the environment.
    Raises:
      ValueError: the file is not valid JSON, or there is no file and ``JOB_ID`` is not set.
    """

    def __init__(self, job_start_file=""):
        if job_start_file and os.path.isfile(job_start_file):
            self._jobinfo = _from_file(job_start_file)
        else:
            if job_start_file:
                log.warn_once(
                    ("job_start_file", job_start_file),
                    "job start file %r does not exist; reading the job information from the environment",
                    job_start_file,
                )
            self._jobinfo = _from_environment()

    @property
    def jobinfo(self):
        """The ``JobInfo``."""
        return self._jobinfo

    def size(self):
        """Returns the number of ranks of the job."""
        return self._jobinfo.rank_size


def _from_file(path):
    try:
        data = bounded_files.parse_json(bounded_files.read_text(path))
    except (OSError, ValueError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else e
        raise NpuArgumentError(f"job start file {shortened(path)} is not a readable JSON file: {reason}") from None
    if not isinstance(data, dict):
        raise NpuArgumentError(f"job start file {shortened(path)} must hold a JSON object, got {type(data).__name__}")
    device = data.get("device_info") or {}
    return JobInfo(
        job_id=str(data.get("job_id", "")),
        job_config=JobConfig(job_id=str(data.get("job_id", "")), heartbeat_time=data.get("heartbeat")),
        device_info=DeviceInfo(index=str(device.get("Index", "0"))),
        rank_table_file=data.get("rank_table_file"),
        local_checkpoint_dir=data.get("local_checkpoint_dir"),
        rank_size=_as_rank_size(data.get("rank_size", get_ranksize()), f"rank_size in {shortened(path)}"),
    )


def _from_environment():
    job_id = os.environ.get("JOB_ID")
    if not job_id:
        raise EnvironmentVariableError(f"{JOB_ID_ERROR} (npu_bridge accepts any value, e.g. JOB_ID=10086)")
    identity = os.environ.get("POD_NAME") or os.environ.get("RANK_ID") or "0"
    return JobInfo(
        job_id=job_id,
        job_config=JobConfig(job_id=job_id, heartbeat_time=os.environ.get("HEARTBEAT")),
        device_info=DeviceInfo(index=identity),
        rank_table_file=os.environ.get("RANK_TABLE_FILE"),
        local_checkpoint_dir=os.environ.get("LOCAL_CHECKPOINT_DIR"),
        rank_size=_as_rank_size(get_ranksize(), "RANK_SIZE / CM_WORKER_SIZE"),
    )


def _as_rank_size(value, source):
    if isinstance(value, str) and not value.strip():
        return 1  # an empty variable counts as unset, as in the collective world
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        size = value
    else:
        size = device_id.parse_int(value) if isinstance(value, str) else None  # ASCII digits, as the world reads it
    if size is None or not 1 <= size <= world.MAX_RANKS:
        raise RankTableError(
            f"{source} must be a positive integer, got {shortened(value)} (a job has at most {world.MAX_RANKS} ranks)"
        )
    return size
