"""The implementation of npu_bridge, one folder per domain, in layers.

Upstream's import paths (``npu_bridge.npu_init``, ``npu_bridge.estimator...``, ``npu_bridge.hccl...``, ...)
are thin facades over these folders; nothing here imports a facade.

Imports go one way: a module imports only its own folder and the folders of lower layers (``LAYERS``, lowest
first; folders on one layer do not import each other), at module level, inside functions and through
``importlib`` strings alike. The session layer owns the capabilities' setup steps (``session/steps/``), which call
down into the domains; no domain imports the session. ``tests/repository/test_layout.py`` checks all of it, without
exception.

  runtime       the ground floor: the C++ library and its C functions, errors, logging, files, system state,
                Ctrl-C in ranks, clean-up at exit
  plan          the pass contract with the C++ passes, declared once
  device        which backend (cpu, gpu, simulated ascend) and device id a session uses
  world         ranks, rank tables, groups, split strategies
  precision     precision modes, mixed precision lists, implementation modes, float status
  collectives   HCCL collectives through shared memory on one host, else on TensorFlow's collective ops over gRPC
  options       the NpuOptimizer option table: parsing, validation, documentation, config objects
  compute       NPU compute ops (dropout, RNN, activations, ...) and attribute scopes
  dump          data dump, overflow records, exception dump, ``npu-dump``
  profiling     profiling sessions, artifacts, ``npu-prof``
  training      optimizer wrappers, iterations_per_loop, outfeed, distributed training, loss scaling
  tf_estimator  ``tf.estimator`` for TensorFlow releases that no longer ship it
  session       orchestration: the session bridge, the planner and the capabilities' setup steps, run hooks,
                process resources (npu_resource_init, npu_close)
  npu_estimator NPUEstimator / NPURunConfig and their hooks
  tf1           the TF1 mode (``python -m npu_bridge.tf1``)
  tf2           the TF2 adapter ``npu_device`` (its function graphs go through the session bridge's plan)
  activation    switching npu_bridge on once TensorFlow is in the process (one module)
  launch        ``npu-run``; imports no TensorFlow
  accuracy      ``npu-debug``: finding the ops whose precision explains a divergence; imports no TensorFlow
  cli           ``npu-bridge``
"""

LAYERS = (
    ("runtime",),
    ("plan",),
    ("device",),
    ("world",),
    ("precision",),
    ("collectives",),
    ("options",),
    ("compute",),
    ("dump", "profiling"),
    ("training",),
    ("tf_estimator",),
    ("session",),
    ("npu_estimator",),
    ("tf1", "tf2"),
    ("activation",),
    ("launch",),
    ("accuracy",),
    ("cli",),
)
