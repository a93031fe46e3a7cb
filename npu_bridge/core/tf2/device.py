"""``npu_device.open()``: opening "the NPU" of a TF2 process, and its handle.

The device is a name over the backend that computes (cpu, gpu or the simulated Ascend backend): ``open()`` reads
``global_options()`` once and validates them through the option table once (``option_values``, the device id
included as ``session_device_id``), resolves the collective world once, has the session layer plan them as it
plans a TF1 session (``function_config``), which puts an ``NpuOptimizer`` entry carrying the plan into the
configuration TensorFlow optimizes every ``tf.function`` graph with, and initializes the NPU system with their
init-stage options. Every function a script then runs -- its own ``tf.function`` steps and Keras'
``train_function`` -- goes through the same C++ passes as a TF1 session's graph.
"""

import os
import threading

from npu_bridge.core.device.device_id import resolve as resolve_device_id
from npu_bridge.core.runtime import log, system
from npu_bridge.core.runtime.errors import DeviceIdError, NpuUsageError, RankTableError
from npu_bridge.core.tf2 import (
    default_patches,
    function_config,
    global_options,
    loop_size,
    optimizer_updates,
    option_values,
    profiling_calls,
)
from npu_bridge.core.world import world

DEVICE_PREFIX = "/job:localhost/replica:0/task:0/device:NPU"

_lock = threading.Lock()
_handle = None
_default = None


class NpuDeviceHandle:
    """The opened device.

    Attributes:
      device_id: the device id.
      workers_num: the number of ranks in the job.
      worker_id: this process's rank.
      options: the validated ``NpuOptions`` the device opened with.
    """

    def __init__(self, device_id, world, options):
        self.device_id = device_id
        self.workers_num = world.rank_size
        self.worker_id = world.rank_id
        self.options = options

    def name(self):
        """The device's full name, ``/job:localhost/replica:0/task:0/device:NPU:<id>``."""
        return f"{DEVICE_PREFIX}:{self.device_id}"

    def scope(self):
        """A context manager for ops on this device: they run on the backend's device, as every op does here."""
        return default_patches.current_device_scope()

    def is_cluster_worker(self):
        """True when the job has more than one rank and this process is one of them."""
        return self.workers_num > 1 and 0 <= self.worker_id < self.workers_num

    def as_default(self):
        """Makes this the default device, with the adapter's process-wide changes to TensorFlow
        (``default_patches``).

        Returns:
          This handle.
        """
        global _default
        default_patches.install()
        _default = self
        return self

    def __repr__(self):
        return f"NpuDeviceHandle({self.name()!r}, worker {self.worker_id} of {self.workers_num})"


def open(device_id=None):  # noqa: A001  (upstream's name)
    """Opens the NPU of this process (once; later calls with the same id return the same handle).

    Args:
      device_id: the device id; default ``ASCEND_DEVICE_ID`` (then ``DEVICE_ID``), else 0.
    Returns:
      The ``NpuDeviceHandle``.
    Raises:
      NpuUsageError (a RuntimeError): a device with another id is already open.
      RankTableError (a ValueError): both RANK_SIZE and CM_WORKER_SIZE are set, or the rank environment is
        malformed.
      CollectiveError: with several ranks, this rank's server cannot start or the others do not arrive within
        HCCL_CONNECT_TIMEOUT.
      DeviceIdError: ``device_id`` is not a non-negative integer.
      NpuOptionError: an option set in ``global_options()`` has a bad value.
    """
    global _handle
    with _lock:
        wanted = _device_id(device_id)
        if _handle is not None:
            if wanted != _handle.device_id:
                raise NpuUsageError(
                    f"npu_device.open({device_id!r}): device {_handle.device_id} is already open in this process; "
                    "a process opens one NPU"
                )
            log.logger.info("npu_device: device %d is already open", wanted)
            return _handle
        if os.environ.get("RANK_SIZE") and os.environ.get("CM_WORKER_SIZE"):
            raise RankTableError(
                "npu_device.open(): RANK_SIZE and CM_WORKER_SIZE are both set; set the world size with one of them"
            )
        loop_size.npu_loop_size()  # a bad NPU_LOOP_SIZE fails here, as when the adapter's backend loads
        log.configure()
        options = option_values.parse_assigned(global_options.snapshot(), wanted)  # the one validation
        current = world.environment_world(wanted)  # the one world: the plan takes it as it is
        plan = function_config.install(options, current)  # with several ranks, its collectives step joins the job
        optimizer_updates.install()
        profiling_calls.install(plan)
        system.initialize(plan.options.by_stage("init"), "npu_device.open", is_global=True)
        _handle = NpuDeviceHandle(wanted, plan.world, plan.options)
        log.logger.info("npu_device: opened %s (%d workers)", _handle.name(), _handle.workers_num)
        return _handle


def opened():
    """Returns the handle of the opened device, or None."""
    return _handle


def global_npu_ctx():
    """Returns the handle ``as_default()`` made the default device, or None."""
    return _default


def _device_id(device_id):
    if device_id is None:
        return resolve_device_id()
    if isinstance(device_id, bool) or not isinstance(device_id, int) or device_id < 0:
        raise DeviceIdError(f"npu_device.open(device_id={device_id!r}): the device id must be an integer >= 0")
    return device_id
