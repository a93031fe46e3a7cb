"""Sessions: how a TF1 session with an ``NpuOptimizer`` config becomes an npu_bridge session.

bridge         wraps ``BaseSession.__init__``: parses options, runs the setup steps, installs run hooks
setup_steps    the registry of setup steps and run hooks capabilities contribute; plans each session
pass_contract  the keys the C++ passes read (mirrored by optimizers/pass_contract.h) and their one writer
config_proto   building and editing ConfigProtos (``npu_config_proto`` and friends)
determinism    ``deterministic`` -> TensorFlow op determinism
keras_session  Keras-in-Session helpers; script_helpers: helpers migration tools write into scripts
"""
