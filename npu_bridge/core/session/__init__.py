"""Sessions: how a TF1 session with an ``NpuOptimizer`` config becomes an npu_bridge session.

bridge         wraps ``BaseSession.__init__``: parses options, plans the session, installs run hooks;
               ``plan_validated`` plans validated options (also TF2's function graphs, for ``npu_device.open()``)
planner        plans each session: resolves world, device id and backend, runs the setup steps in their one
               order, writes the pass plan (its keys are npu_bridge.core.plan's)
step_api       what the steps work with: ``SessionPlan``, ``RunContext``, ``RunHook``
steps/         one setup step per capability (determinism, precision, collectives, dump, profiling), each calling
               into its domain
run_hooks      attaches a session's run hooks to its ``run`` and ``close``
config_proto   building and editing ConfigProtos (``npu_config_proto`` and friends)
repeated_runs  repeated runs of the same fetches skip TensorFlow's per-run Python work
keras_session  Keras-in-Session helpers; script_helpers: helpers migration tools write into scripts
resource       npu_resource_init / npu_close and their siblings; system_ops: the initialize/shutdown graph ops
"""
