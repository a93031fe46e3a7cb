"""``Profiler``: profile a block of code, whatever the sessions' options say (upstream's scoped profiler)."""

from npu_bridge.core.profiling import recorder
from npu_bridge.core.profiling import settings as profiling_settings
from npu_bridge.core.runtime import log
from npu_bridge.core.runtime.errors import NpuUsageError

_start_listeners = []


def on_start(listener):
    """Calls ``listener()`` whenever a ``Profiler`` starts, once however often it is given.

    The session layer's profiling step gives the function that hooks the bridged sessions already open.
    """
    if listener not in _start_listeners:
        _start_listeners.append(listener)


class Profiler:
    """Profiles every bridged session's runs between ``start()`` and ``stop()``; also a context manager.

    Sessions created before the scope are traced too. The profile is written, summarized and reported when
    the scope ends.

    Args:
      level: "L0" (op timings), "L1" or "L2" (also shapes and dtypes).
      aic_metrics: "" or an AI Core metrics name such as "PipeUtilization" (NPU counters: accepted, no effect
        here).
      output_path: directory for the profile; "" means the current directory.
    Raises:
      ValueError: a bad argument.
    """

    def __init__(self, level="L0", aic_metrics="", output_path=""):
        self._settings = profiling_settings.for_profiler(level, aic_metrics, output_path)
        self._started = False
        self.directory = None

    def start(self):
        """Starts profiling.

        Raises:
          RuntimeError: a Profiler is already active, or profiling_mode / PROFILING_MODE is recording.
        """
        recorder.start_scope(self._settings)
        self._started = True
        for listener in list(_start_listeners):
            listener()

    def stop(self):
        """Stops profiling and publishes the profile.

        Returns:
          The profile directory, or None when no bridged session ran in the scope.
        Raises:
          RuntimeError: this Profiler was not started.
        """
        if not self._started:
            raise NpuUsageError("Profiler.stop: this Profiler was not started (call start() first)")
        self._started = False
        self.directory = recorder.stop_scope()
        if self.directory is None:
            log.logger.warning(
                "Profiler: no session configured with NpuOptimizer ran while the Profiler was "
                "active; nothing was written"
            )
        return self.directory

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc_info):
        self.stop()
        return False
