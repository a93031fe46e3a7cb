"""How profiling takes part in bridged sessions: a setup step and a run hook (``npu_bridge.core.session.setup_steps``).

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

import collections.abc
import itertools
import time
import weakref

from tensorflow.core.protobuf import config_pb2

from npu_bridge.core.profiling import recorder
from npu_bridge.core.profiling import settings as profiling_settings
from npu_bridge.core.runtime import system
from npu_bridge.core.session import bridge
from npu_bridge.core.session import setup_steps as session_setup
from npu_bridge.core.session.setup_steps import RunHook, setup_step

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


@setup_step(500, "profiling")
def attach_profiling_hook(plan):
    """Validates the session's profiling settings and attaches the profiling hook when something profiles."""
    settings = profiling_settings.from_session_options(plan.options)
    if settings is not None or recorder.scoped_settings() is not None:
        plan.run_hooks.append(ProfilingHook(settings, plan))


def hook_open_sessions():
    """Attaches a profiling hook to every open bridged session that has none (a ``Profiler`` scope starts)."""
    hooked = {id(hook.options) for hook in list(_hooks)}
    for session in session_setup.open_sessions():
        plan = getattr(session, bridge.PLAN_ATTRIBUTE, None)
        if plan is not None and plan.options is not None and id(plan.options) not in hooked:
            session_setup.attach_run_hooks(session, [ProfilingHook(None, plan)])


def run_signature(fetches, feed_dict):
    """What identifies the graph TensorFlow executes for a run: the names of what it fetches and feeds.

    TensorFlow builds (and the NpuOptimizer instruments) one graph per such signature in a session, so runs with
    the same signature are iterations of one model -- also when a cond takes another branch.

    Args:
      fetches: the run's fetches (any structure of tensors, operations, variables or names).
      feed_dict: its feed dict, or None.
    Returns:
      A text such as "fetch:loss:0,train|feed:x:0".
    """
    fetched = sorted({_fetch_name(item) for item in _leaves(fetches)})
    fed = sorted({_fetch_name(item) for item in _leaves(list(feed_dict or ()))})
    return "fetch:" + ",".join(fetched) + "|feed:" + ",".join(fed)


def _leaves(structure):
    """The leaves of nested dicts (their values: MonitoredSession keys hooks' fetches by hook), lists and tuples."""
    if isinstance(structure, collections.abc.Mapping):
        for value in structure.values():
            yield from _leaves(value)
    elif isinstance(structure, (list, tuple)):
        for item in structure:
            yield from _leaves(item)
    else:
        yield structure


def _fetch_name(item):
    name = getattr(item, "name", None)
    return name if isinstance(name, str) else str(item)


def _trace_level(session):
    """The trace level that gets step stats from this session's runtime."""
    target = getattr(session, "sess_str", b"") or b""
    return _DISTRIBUTED_TRACE_LEVEL if target.startswith(b"grpc://") else _LOCAL_TRACE_LEVEL


def profile_context(plan, trace_level):
    """Rank, device, backend and precision of a session (or of an opened TF2 device), recorded with its profile.

    Args:
      plan: the ``SessionPlan``.
      trace_level: how its runs are traced, e.g. "SOFTWARE_TRACE".
    Returns:
      The context dict.
    """
    options = plan.options
    return {
        "rank_id": plan.world.rank_id,
        "rank_size": plan.world.rank_size,
        "device_id": plan.world.device_id,
        "backend": plan.backend,
        "precision_mode": options.get("precision_mode"),
        "precision_mode_v2": options.get("precision_mode_v2"),
        "iterations_per_loop": options.get("iterations_per_loop"),
        "trace_level": trace_level,
    }
