"""The setup steps of a bridged session, one module per capability, each with ``setup(plan)``.

A step maps the session's validated options onto its domain (``npu_bridge.core.precision``, ``collectives``,
``dump``, ``profiling``) and TensorFlow's own machinery: it may edit the plan's config and target, fill its pass
plan and attach ``RunHook``s (``npu_bridge.core.session.step_api``). The order they run in is stated once,
in ``npu_bridge.core.session.planner.step_modules``.

determinism    ``deterministic=1`` -> TensorFlow op determinism
precision      precision modes, mixed-precision lists, impl modes -> the pass plan
collectives    this rank's server, the session target, the collective timeout and its run hook
dump           dump root, dump and overflow settings on the pass plan, the writer's run hook
profiling      the ``ProfilingHook`` of a session that profiles (options, ``PROFILING_MODE``, ``Profiler``)
"""
