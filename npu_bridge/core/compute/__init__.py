"""NPU compute ops (``npu_ops``, ``npu_aicore_ops``, ``npu_unary_ops``, the NPU RNN layers) built from
TensorFlow ops, so they run on CPU and GPU and TensorFlow differentiates them."""
