"""Sessions: how a TF1 session with an ``NpuOptimizer`` config becomes an npu_bridge session.

bridge         wraps ``BaseSession.__init__``: parses options, runs the setup steps, installs run hooks
setup_steps    the registry of setup steps and run hooks capabilities contribute; plans each session (the plan's
               keys are npu_bridge.core.plan's)
config_proto   building and editing ConfigProtos (``npu_config_proto`` and friends)
determinism    ``deterministic`` -> TensorFlow op determinism
keras_session  Keras-in-Session helpers; script_helpers: helpers migration tools write into scripts
resource       npu_resource_init / npu_close and their siblings; system_ops: the initialize/shutdown graph ops
"""
