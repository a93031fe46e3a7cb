"""What every other part stands on.

activation      switching npu_bridge on once TensorFlow is in the process
keras_selection  legacy Keras (tf_keras) for TF1 code, whichever of TensorFlow and npu_bridge is imported first
native_library  loading the C++ library and checking which TensorFlow it was built for
errors          every exception class npu_bridge raises
bounded_files   reading the small files users name: regular files only, bounded size, never blocking
version         the --version line of the command-line tools
log             the ``npu_bridge`` logger (ASCEND_GLOBAL_LOG_LEVEL, ASCEND_SLOG_PRINT_TO_STDOUT)
system          process-wide NPU system state; system_ops: the initialize/shutdown graph ops
executed_op_types  the user's op types behind the op types TensorFlow executed (oneDNN kernels, fusions)
resource        npu_resource_init / npu_close and their siblings
job_values      upstream's process-wide value store (``util.global_dict_*``)
arg_checks      argument checks with upstream's messages
unsupported     upstream names that cannot work off the NPU
tf_adapter_module  upstream's SWIG module ``npu_bridge.tf_adapter``: its DT_* constants; its functions unsupported
graph_manager_scope  ``ScopedGraphManager`` (no effect here)
api_surface     the upstream import paths the facades serve; doc_blocks: generated blocks of the docs/ pages
"""
