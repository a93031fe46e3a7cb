"""Plans each bridged session: resolves what every step needs once, runs the setup steps in order, writes the
pass plan.

The session bridge calls ``plan_session`` for every bridged session and for TF2's function graphs. It builds a
``SessionPlan`` -- the validated options, a private copy of the ConfigProto, the target, and the collective world
(resolved here, or once by ``npu_device.open()``), device id and backend -- runs the setup steps of
``step_modules`` in that order, and hands the filled ``plan.pass_plan`` to the C++ passes in one go
(``npu_bridge.core.plan.pass_contract``). The world, device id, backend and the contract keys that carry an option
unchanged (``pass_contract.plan_from_options``) are not steps.

The order of the setup steps is stated once, in ``step_modules``, and has no numbers. It is not the order of
the C++ rewrite passes, which is numbered in ``optimizers/rewrite_pass.h`` (``REGISTER_NPU_REWRITE_PASS``:
100 init options ... 900 iterations loop): the steps run once, when the session is created, and only decide;
the passes run on every graph the session executes, in their own order, and do what the plan says.
"""

from npu_bridge.core.device import device_target
from npu_bridge.core.plan import pass_contract
from npu_bridge.core.runtime import system
from npu_bridge.core.session import config_proto
from npu_bridge.core.session.step_api import SessionPlan
from npu_bridge.core.world import world


def step_modules():
    """The setup step modules, in the order their ``setup(plan)`` runs.

    It is also the order of their run hooks (``before_run`` in this order, ``after_run`` and ``run_failed`` in
    reverse), so the profiling hook, last, times the run without the other hooks' work. Imported at the first
    bridged session, to keep ``import npu_bridge`` fast.
    """
    from npu_bridge.core.session.steps import collectives, determinism, dump, precision, profiling

    return (determinism, precision, collectives, dump, profiling)


def plan_session(options, config, target, function_graphs=False, resolved_world=None) -> SessionPlan:
    """Plans a new bridged session: resolves its world (unless given), device id and backend, runs every setup step
    and writes the pass plan into the session's NpuOptimizer entry.

    Args:
      options: the validated ``NpuOptions``.
      config: the ConfigProto copy the session will use (edited in place); it has one NpuOptimizer entry.
      target: the requested target.
      function_graphs: the plan is for TF2 function graphs (``npu_device``), not for a session.
      resolved_world: the collective ``World`` the caller resolved for the options' ``session_device_id``, or None.
    Returns:
      The ``SessionPlan`` after all steps.
    Raises:
      RankTableError, DeviceIdError, NotAvailableError: the collective world is misconfigured.
      NpuOptionError: NPU_BRIDGE_DEVICE_TARGET is invalid, or a setup step rejects the options.
    """
    steps = step_modules()
    current = resolved_world
    if current is None:
        current = world.environment_world(session_device_id=options.get("session_device_id"))
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
    for step in steps:
        step.setup(plan)
    entry = next(
        e for e in config.graph_options.rewrite_options.custom_optimizers if e.name == config_proto.NPU_OPTIMIZER
    )
    pass_contract.write(entry, plan.pass_plan)
    return plan
