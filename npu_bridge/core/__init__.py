"""The implementation of npu_bridge, one folder per domain.

Upstream's import paths (``npu_bridge.npu_init``, ``npu_bridge.estimator...``, ``npu_bridge.hccl...``, ...)
are thin facades over these folders; nothing here imports a facade.

  runtime       the C++ library, activation, errors, logging, system state, process resources
  session       the session bridge, setup steps and the pass-parameter contract with the C++ passes
  options       the NpuOptimizer option table: parsing, validation, documentation
  device        which backend (cpu, gpu, simulated ascend) and device id a session uses
  precision     precision modes, mixed precision lists, implementation modes, float status
  world         ranks, rank tables, groups, split strategies
  collectives   HCCL collectives on TensorFlow's collective ops and gRPC runtime
  training      optimizer wrappers, iterations_per_loop, outfeed, distributed training, loss scaling
  estimator     NPUEstimator / NPURunConfig and their hooks
  tf_estimator  ``tf.estimator`` for TensorFlow releases that no longer ship it
  dump          data dump, overflow records, exception dump, ``npu-dump``
  profiling     profiling sessions, artifacts, ``npu-prof``
  compute       NPU compute ops (dropout, RNN, activations, ...) and attribute scopes
  launch        ``npu-run``; imports no TensorFlow
  cli           ``npu-bridge``
"""
