"""Profiling of a TF2 process: every eager call of a ``tf.function`` is one recorded run.

A TF1 session's traced run returns step stats; an eager function call returns none (``enable_run_metadata``
gives its partition graphs and empty step stats). So, when the options ``npu_device.open()`` read profile,
``install`` wraps ``Function.__call__`` (the class behind ``tf.function``, the script's steps and Keras'
``train_function`` alike): each eager call runs inside a TensorFlow profiler session of its own, whose trace
(``profiling.profiler_trace``) gives the op kernels the call ran, with their node names and times; their inputs,
dtypes and static shapes come from the traced graph of the concrete function called (``profiling.graph_tensors``).
The run is
recorded (``profiling.recorder``) under the signature ``function:<concrete function>``, numbered per function
graph; the profile is exported when the process exits (``npu_close``). Without profiling nothing is wrapped.

Calls made while another call is traced (from another thread) or while the script's own profiler runs
(``tf.profiler.experimental``, Keras' TensorBoard ``profile_batch``) are not recorded: a process has one
profiler session at a time.
"""

import functools
import threading
import time

from npu_bridge.core.profiling import graph_tensors, profiler_trace, recorder
from npu_bridge.core.profiling import settings as profiling_settings
from npu_bridge.core.profiling.profile_context import profile_context
from npu_bridge.core.runtime import log

SIGNATURE_PREFIX = "function:"
_TRACE_LEVEL = "TF_PROFILER"

_lock = threading.Lock()
_busy = threading.Lock()  # held while a call is traced
_state = {"original": None, "settings": None, "context": None}
_graphs = {}  # concrete function name -> [graph index, calls recorded]
_tensors = {}  # concrete function name -> graph_tensors of its graph, or None when it is not found


def install(plan):
    """Records every eager function call from now on when ``plan``'s options profile (once per process).

    Args:
      plan: the ``SessionPlan`` the device opened with (options, world, backend).
    Returns:
      True when function calls are recorded.
    Raises:
      NpuOptionError: PROFILING_MODE or PROFILING_OPTIONS holds a bad value.
    """
    settings = profiling_settings.from_session_options(plan.options)
    if settings is None:
        return False
    from tensorflow.python.eager.polymorphic_function import polymorphic_function

    with _lock:
        if _state["original"] is not None:
            return True
        _state["settings"] = settings
        _state["context"] = profile_context(plan, _TRACE_LEVEL)
        original = polymorphic_function.Function.__call__
        _state["original"] = original
        polymorphic_function.Function.__call__ = _wrap(original)
    log.logger.info("npu_device: profiling every tf.function call into %s", settings.output)
    return True


def _wrap(original):
    @functools.wraps(original)
    def profiled_call(function, *args, **kwargs):
        from tensorflow.python.eager import context

        if not context.executing_eagerly() or not _busy.acquire(blocking=False):
            return original(function, *args, **kwargs)  # a call traced into a graph, or one during a traced call
        try:
            return _traced_call(original, function, args, kwargs)
        finally:
            _busy.release()

    return profiled_call


def _traced_call(original, function, args, kwargs):
    """Runs one eager call inside a profiler session and records it."""
    from tensorflow.python.profiler.internal import _pywrap_profiler

    settings = _state["settings"]
    recorder.ensure_started(settings, _state["context"])
    session = _pywrap_profiler.ProfilerSession()
    start_ns = time.time_ns()  # at or before the session's own time 0, so no op precedes the run
    try:
        session.start("", {})
    except Exception as e:  # TensorFlow's status errors: another profiler session is active
        log.warn_once(
            (__name__, "busy"),
            "profiling: a tf.function call is not recorded because another TensorFlow profiler is running (%s)",
            e,
        )
        return original(function, *args, **kwargs)
    try:
        result = original(function, *args, **kwargs)
    finally:
        end_ns = time.time_ns()
        trace = session.stop()
    converted = profiler_trace.to_step_stats(trace, start_ns, tensors_of=functools.partial(_graph_tensors, function))
    name = converted.functions[0] if converted.functions else getattr(function, "_name", "function")
    graph = _graphs.setdefault(name, [len(_graphs), 0])
    recorder.record(graph[0], graph[1], start_ns, end_ns, converted.step_stats, SIGNATURE_PREFIX + name)
    graph[1] += 1
    return result


def _graph_tensors(function, name):
    """The ``graph_tensors`` of the concrete function ``name`` of a ``tf.function`` (cached), or None."""
    if name not in _tensors:
        # TensorFlow's own list of the traced signatures (a private method: without it, no shapes)
        listing = getattr(function, "_list_all_concrete_functions", None)
        concrete = listing() if listing is not None else ()
        graph = next((c.graph for c in concrete if c.name.decode() == name), None)
        _tensors[name] = graph_tensors.of_graph(graph) if graph is not None else None
    return _tensors[name]
