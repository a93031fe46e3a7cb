"""The TF2 adapter ``npu_device`` (the facade package of that name re-exports these modules).

option_fields    the fields of ``global_options()``, declared once
global_options   the options tree and its assignment rules
option_values    from assigned fields to the option table's validated options
function_config  the NpuOptimizer passes on every ``tf.function`` graph
device           ``open()``, the device handle, ``global_npu_ctx()``
default_patches  what ``as_default()`` changes in TensorFlow
activations      ``npu_device.ops.gelu``
distribute       ``npu_device.distribute``
loss_scale       ``NpuLossScaleOptimizer``
loop_size        ``set_npu_loop_size``
run_context      ``npu_run_context`` and ``configs.run_context_options()``
optimizer_updates  tf_keras optimizer updates in float32 under mixed precision
keras26          user code's ``tf.keras``: Keras 2.6's optimizers, 1-D ``fit`` inputs, ``__version__``
profiling_calls  every function call recorded while the options profile
compat           ``enable_v1()`` and the ``npu_device.compat.v1`` import tree

legacy_imports   Keras 2.6 and TensorFlow-internal imports of user code (``import npu_device``, ``python -m
                 npu_bridge.tf2``): switching on the route both modes share (``runtime/legacy_modules``); the launcher
environment      ``NPU_BRIDGE_TF2``: the same from the first line of every Python ``npu-run --tf2`` starts
"""
