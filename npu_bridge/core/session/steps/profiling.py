"""The profiling step: a run hook for the bridged sessions that profile.

A bridged session gets a ``ProfilingHook`` when its options (or ``PROFILING_MODE``) profile, when it is
created inside a ``Profiler`` scope, or when a ``Profiler`` scope starts while it is open; other sessions are
not wrapped. Outside a profile the hook only checks two variables per run. A traced run asks
TensorFlow for its step stats and hands them to the recorder with the run's graph signature (what it fetched
and fed, ``run_signature``); the analysis happens when the profile ends.
In-process sessions trace with ``SOFTWARE_TRACE`` (per-node start, end, outputs and op label, without the
memory tracking and device tracer of FULL_TRACE); the sessions of a multi-rank job run on TensorFlow's
distributed master, which returns step stats for ``FULL_TRACE`` only. A caller's own RunOptions and RunMetadata are
kept (the RunMetadata
then also holds the step stats).
"""

import itertools
import time
import weakref

from tensorflow.core.protobuf import config_pb2

from npu_bridge.core.profiling import profiler_scope, recorder
from npu_bridge.core.profiling import settings as profiling_settings
from npu_bridge.core.profiling.profile_context import profile_context
from npu_bridge.core.profiling.run_signature import run_signature
from npu_bridge.core.runtime import system
from npu_bridge.core.session import run_hooks
from npu_bridge.core.session.step_api import PLAN_ATTRIBUTE, RunHook

_LOCAL_TRACE_LEVEL = config_pb2.RunOptions.SOFTWARE_TRACE
_DISTRIBUTED_TRACE_LEVEL = config_pb2.RunOptions.FULL_TRACE
_sessions = itertools.count()
_hooks = weakref.WeakSet()  # live ProfilingHooks (a hook lives as long as its session's run wrapper)


class ProfilingHook(RunHook):
    """Traces the runs of one session while it (or a ``Profiler`` scope) profiles.

    Args:
      settings: the session's ``ProfilingSettings``, or None when its options do not profile.
      plan: the session's ``SessionPlan`` (options, world and backend).
    """

    def __init__(self, settings, plan):
        self._settings = settings
        self._plan = plan
        self._context = None
        self._session = next(_sessions)
        _hooks.add(self)

    @property
    def options(self):
        """The ``NpuOptions`` of the session this hook belongs to."""
        return self._plan.options

    def before_run(self, context):
        settings = recorder.scoped_settings() or self._settings
        if settings is None:
            return
        trace_level = _trace_level(context.session)
        if self._context is None:
            self._context = profile_context(self._plan, config_pb2.RunOptions.TraceLevel.Name(trace_level))
        recorder.ensure_started(settings, self._context)
        if context.options is None:
            context.options = config_pb2.RunOptions(trace_level=trace_level)
        elif context.options.trace_level < trace_level:
            options = config_pb2.RunOptions()
            options.CopyFrom(context.options)
            options.trace_level = trace_level
            context.options = options
        if context.run_metadata is None:
            context.run_metadata = config_pb2.RunMetadata()
        context.npu_profile_start_ns = time.time_ns()

    def after_run(self, context, results):
        start = getattr(context, "npu_profile_start_ns", None)
        if start is not None:
            recorder.record(
                self._session,
                context.step,
                start,
                time.time_ns(),
                context.run_metadata.step_stats.SerializeToString(),
                run_signature(context.fetches, context.feed_dict),
            )

    def end(self, session):
        if self._settings is not None:
            recorder.finish_after_shutdown(system.is_initialized)


def setup(plan):
    """Validates the session's profiling settings and attaches the profiling hook when something profiles; from
    now on a ``Profiler`` that starts hooks the open sessions too."""
    profiler_scope.on_start(hook_open_sessions)
    settings = profiling_settings.from_session_options(plan.options)
    if settings is not None or recorder.scoped_settings() is not None:
        plan.run_hooks.append(ProfilingHook(settings, plan))


def hook_open_sessions():
    """Attaches a profiling hook to every open bridged session that has none (a ``Profiler`` scope starts)."""
    hooked = {id(hook.options) for hook in list(_hooks)}
    for session in run_hooks.open_sessions():
        plan = getattr(session, PLAN_ATTRIBUTE, None)
        if plan is not None and plan.options is not None and id(plan.options) not in hooked:
            run_hooks.attach_run_hooks(session, [ProfilingHook(None, plan)])


def _trace_level(session):
    """The trace level that gets step stats from this session's runtime."""
    target = getattr(session, "sess_str", b"") or b""
    return _DISTRIBUTED_TRACE_LEVEL if target.startswith(b"grpc://") else _LOCAL_TRACE_LEVEL
