"""What the setup steps of a bridged session work with: its ``SessionPlan``, and ``RunHook``s that see its runs.

A step (``npu_bridge.core.session.steps``) may edit ``plan.config``, change ``plan.target``, add ``RunHook``s and
fill ``plan.pass_plan``; ``npu_bridge.core.session.planner`` runs the steps, ``npu_bridge.core.session.run_hooks``
attaches the hooks.
"""

import dataclasses
from typing import Any, List, Optional

import tensorflow as tf
from tensorflow.core.protobuf import config_pb2

from npu_bridge.core.plan import pass_contract
from npu_bridge.core.world.world import World

PLAN_ATTRIBUTE = "_npu_bridge_plan"  # the SessionPlan of every bridged session instance


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
    world: Optional[World] = None
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


def with_note(error, note):
    """Returns ``error`` with ``note`` appended to its message (an OpError of the same class), or None after
    attaching the note to ``error`` itself when it cannot be rebuilt (what ``RunHook.run_failed`` returns)."""
    if isinstance(error, tf.errors.OpError):
        try:
            return type(error)(error.node_def, error.op, f"{error.message}\n{note}")
        except TypeError:
            pass
    error.add_note(note)
    return None
