"""How capabilities take part in bridged sessions.

A capability (collectives, dump, profiling, precision, ...) registers a *setup step* with ``setup_step``. For
every bridged session the session bridge builds a ``SessionPlan`` -- the validated options, a private copy of
the ConfigProto, the target, and the collective world, device id and backend, resolved here once -- and calls
the steps in order. A step may edit ``plan.config``, change ``plan.target``, add ``RunHook``s and fill
``plan.pass_plan``, which ``plan_session`` then hands to the C++ passes in one go
(``npu_bridge.core.plan.pass_contract``). After the session exists, ``attach_run_hooks`` wraps that one
session's ``run`` and ``close`` -- only when some step asked for hooks, so other sessions pay nothing for them.

Steps live in the modules ``load_capabilities`` imports at the first bridged session (keeping ``import
npu_bridge`` fast). Orders (lower runs first): 100 deterministic (``npu_bridge.core.session.determinism``),
200 precision, 300 collectives, 400 dump, 500 profiling. The world, device id, backend and the contract keys that
carry an option unchanged (``pass_contract.plan_from_options``) are not steps: ``plan_session`` resolves them before
the first step runs.
"""

import dataclasses
import threading
import weakref
from typing import Any, Callable, List, Optional

from tensorflow.core.protobuf import config_pb2

from npu_bridge.core.device import device_target
from npu_bridge.core.plan import pass_contract
from npu_bridge.core.runtime import interrupt, system
from npu_bridge.core.session import config_proto
from npu_bridge.core.world import world as collective_world

_lock = threading.Lock()
_steps = []  # (order, name, function)
_imported = False
_live_sessions = weakref.WeakSet()  # every bridged session not yet garbage-collected


@dataclasses.dataclass
class SessionPlan:
    """What a bridged session will be created with; setup steps edit it.

    Attributes:
      options: the validated ``NpuOptions`` of the session (read-only).
      config: the ConfigProto the session will be created with (a private copy; steps may edit it).
      target: the session target.
      run_hooks: ``RunHook``s to attach to the session.
      world: the collective ``World`` of this process as the session sees it (its session_device_id); its
        ``device_id`` is this rank's device id.
      backend: the backend that computes: "cpu", "gpu" or "ascend".
      pass_plan: what the C++ NpuOptimizer passes do for this session (a ``pass_contract.PassPlan``).
    World and backend are None, and the pass plan is unused, for a session that is not bridged.
    """

    options: Any
    config: config_pb2.ConfigProto
    target: str
    run_hooks: List["RunHook"] = dataclasses.field(default_factory=list)
    world: Optional[collective_world.World] = None
    backend: Optional[str] = None
    pass_plan: pass_contract.PassPlan = dataclasses.field(default_factory=pass_contract.PassPlan)


@dataclasses.dataclass
class RunContext:
    """One ``Session.run`` call as hooks see it; ``before_run`` may replace the run arguments.

    Attributes:
      session: the bridged session.
      fetches, feed_dict, options, run_metadata: the arguments ``run`` is called with (``options`` is a
        ``RunOptions`` or None, ``run_metadata`` a ``RunMetadata`` or None).
      step: how many ``run`` calls this session had before this one.
    For a run of a callable Keras made (``_make_callable_from_options``), ``fetches`` are the names of its
    fetches and targets and ``feed_dict`` is None; ``options`` set by a hook are merged into the callable's
    own run options (through a second callable made once per distinct options).
    """

    session: Any
    fetches: Any
    feed_dict: Any
    options: Any
    run_metadata: Any
    step: int


class RunHook:
    """Observes the runs of one bridged session. Subclasses override what they need."""

    def before_run(self, context):
        """Called before each run; may change ``context.options`` / ``context.run_metadata``."""

    def after_run(self, context, results):
        """Called after each successful run with what ``run`` returned."""

    def end(self, session):
        """Called once when the session is closed."""

    def run_failed(self, context, error):
        """Called when ``run`` raised ``error`` (already replaced by later hooks, if they did); may return an
        exception to raise instead (chained to the original). Also called with a ``KeyboardInterrupt`` (Ctrl-C
        during the run), which is never replaced: what the hook returns then is ignored."""


def setup_step(order, name):
    """Registers ``function(plan)`` as a setup step; used as a decorator in capability modules.

    Args:
      order: position among the steps (see the module docstring).
      name: a short name for logs and errors.
    Returns:
      The decorator.
    """

    def register(function: Callable[[SessionPlan], None]):
        with _lock:
            _steps.append((order, name, function))
            _steps.sort(key=lambda step: step[0])
        return function

    return register


def load_capabilities():
    """Imports the capability modules (once), which registers their setup steps.

    Imported here, at the first bridged session, to keep ``import npu_bridge`` fast. A module that registers a setup
    step belongs to the session layer (``npu_bridge.core.LAYERS``), whichever domain folder it sits in.
    """
    global _imported
    if not _imported:
        # Imported for the steps they register.
        import npu_bridge.core.collectives.session_step  # noqa: F401
        import npu_bridge.core.dump.session_step  # noqa: F401
        import npu_bridge.core.precision.session_step  # noqa: F401
        import npu_bridge.core.profiling.session_step  # noqa: F401
        import npu_bridge.core.session.determinism  # noqa: F401

        _imported = True


def plan_session(options, config, target, function_graphs=False) -> SessionPlan:
    """Plans a new bridged session: resolves its world, device id and backend, runs every setup step and
    writes the pass plan into the session's NpuOptimizer entry.

    Args:
      options: the validated ``NpuOptions``.
      config: the ConfigProto copy the session will use (edited in place); it has one NpuOptimizer entry.
      target: the requested target.
      function_graphs: the plan is for TF2 function graphs (``npu_device``), not for a session.
    Returns:
      The ``SessionPlan`` after all steps.
    Raises:
      RankTableError, DeviceIdError, NotAvailableError: the collective world is misconfigured.
      NpuOptionError: NPU_BRIDGE_DEVICE_TARGET is invalid, or a setup step rejects the options.
    """
    load_capabilities()
    current = collective_world.environment_world(session_device_id=options.get("session_device_id"))
    plan = SessionPlan(
        options=options,
        config=config,
        target=target,
        world=current,
        backend=device_target.resolve(options),
        pass_plan=pass_contract.plan_from_options(
            options,
            validated=True,
            function_graphs=function_graphs,
            init_token=system.register_init_options(options.by_stage("init")),
        ),
    )
    with _lock:
        steps = list(_steps)
    for _, _, function in steps:
        function(plan)
    entry = next(
        e for e in config.graph_options.rewrite_options.custom_optimizers if e.name == config_proto.NPU_OPTIMIZER
    )
    pass_contract.write(entry, plan.pass_plan)
    return plan


def attach_run_hooks(session, hooks):
    """Wraps ``session.run``, the callables Keras makes (``_make_callable_from_options``) and
    ``session.close`` of this one session so ``hooks`` see every run.

    Also usable later on a live session (a capability switched on after the session was created).

    Args:
      session: a bridged session.
      hooks: ``RunHook``s; nothing is wrapped when empty.
    """
    _live_sessions.add(session)
    if not hooks:
        return
    original_run, original_close = session.run, session.close
    original_make_callable = session._make_callable_from_options
    state = {"steps": 0, "ended": False}

    def observed(fetches, feed_dict, options, run_metadata, call):
        context = RunContext(session, fetches, feed_dict, options, run_metadata, state["steps"])
        state["steps"] += 1
        for hook in hooks:
            hook.before_run(context)
        try:
            results = call(context)
        except KeyboardInterrupt as ctrl_c:
            _interrupted(hooks, context, ctrl_c)
            raise
        except Exception as error:  # hooks may explain it; it is re-raised
            if interrupt.is_hidden_interrupt(error):
                # SIGINT arrived while TensorFlow raised the run's error: pybind11 gives a RuntimeError
                # ("MISMATCH ... REPLACED BY KeyboardInterrupt"); raise what it hides, so that Ctrl-C is one.
                ctrl_c = KeyboardInterrupt()
                _interrupted(hooks, context, ctrl_c)
                raise ctrl_c from None
            raised = error
            for hook in reversed(hooks):
                raised = hook.run_failed(context, raised) or raised
            if raised is error:
                raise
            raise raised from error
        for hook in reversed(hooks):
            hook.after_run(context, results)
        return results

    def run(fetches, feed_dict=None, options=None, run_metadata=None):
        return observed(
            fetches,
            feed_dict,
            options,
            run_metadata,
            lambda c: original_run(c.fetches, c.feed_dict, c.options, c.run_metadata),
        )

    def make_callable_from_options(callable_options):
        call = original_make_callable(callable_options)
        fetches = list(callable_options.fetch) + list(callable_options.target)
        with_options = {}  # serialized RunOptions a hook asked for -> a callable made with them

        def call_as_hooks_ask(context, args, kwargs):
            if context.options is None:
                return call(*args, **dict(kwargs, run_metadata=context.run_metadata))
            key = context.options.SerializeToString()
            if key not in with_options:  # a callable's run options are fixed when it is made
                options = config_pb2.CallableOptions()
                options.CopyFrom(callable_options)
                options.run_options.MergeFrom(context.options)
                with_options[key] = original_make_callable(options)
            return with_options[key](*args, **dict(kwargs, run_metadata=context.run_metadata))

        def invoke(*args, **kwargs):
            return observed(
                fetches, None, None, kwargs.pop("run_metadata", None), lambda c: call_as_hooks_ask(c, args, kwargs)
            )

        return invoke

    def close():
        try:
            original_close()
        finally:
            if not state["ended"]:
                state["ended"] = True
                for hook in hooks:
                    hook.end(session)

    run.__doc__, close.__doc__ = original_run.__doc__, original_close.__doc__
    session.run, session.close = run, close
    session._make_callable_from_options = make_callable_from_options


def _interrupted(hooks, context, interrupt):
    """Tells ``hooks`` that Ctrl-C ended the run (they release what they hold for it); an interrupt is not
    replaced, so what they return is ignored."""
    for hook in reversed(hooks):
        hook.run_failed(context, interrupt)


def open_sessions():
    """The bridged sessions that exist and are not closed, in no particular order."""
    return [session for session in list(_live_sessions) if not getattr(session, "_closed", False)]
