"""The handle and process-wide habits of the zoo's TF2 scripts: open() twice (the second time after setting more
options, as SKNet's train.py does), another device id, the handle's attributes, gelu probed with hasattr, the
loop size, run context and saturation-mode calls. Prints one RESULT line."""

import json

import numpy as np
import tensorflow as tf

import npu_device

npu_device.global_options().precision_mode = "allow_mix_precision"
first = npu_device.open()
npu_device.global_options().precision_mode = "force_fp32"  # after open(): no effect, says so
second = npu_device.open().as_default()
result = {
    "same_handle": first is second,
    "name": second.name(),
    "workers": [second.workers_num, second.worker_id, second.is_cluster_worker()],
    "default": npu_device.global_npu_ctx() is second,
    "precision_mode": second.options.get("precision_mode"),
}
try:
    npu_device.open(device_id=1)
except RuntimeError as error:
    result["other_id"] = type(error).__name__
for bad in (0, 2.5):
    try:
        npu_device.set_npu_loop_size(bad)
    except ValueError as error:
        result.setdefault("loop_size_errors", []).append(str(error))
npu_device.set_npu_loop_size(8)
options = npu_device.configs.run_context_options()
options.experimental.graph_memory_optimize_config.recompute = "manual"
with npu_device.npu_run_context(options), npu_device.npu_recompute_scope(), npu_device.keep_dtype_scope():
    pass
result["inf_nan"] = npu_device.is_inf_nan_enabled()
gelu = npu_device.ops.gelu if hasattr(npu_device.ops, "gelu") else None
x = np.linspace(-3, 3, 7).astype(np.float32)
result["gelu_eager"] = gelu(tf.constant(x)).numpy().tolist()
result["gelu_graph"] = tf.function(gelu)(tf.constant(x)).numpy().tolist()
result["exact"] = tf.nn.gelu(x).numpy().tolist()
with tf.device("/gpu:0"):  # ignored after as_default(), as on an NPU host
    result["device_ignored"] = float(tf.reduce_sum(tf.ones([2])).numpy())
print("RESULT " + json.dumps(result), flush=True)
