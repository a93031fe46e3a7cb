"""A model whose fp16 run diverges because of one op among 226, found and fixed with ``npu-debug bisect``.

16 branches of 14 ops each (MatMul, Mul, AddV2, Relu, Sub, Square) are summed into the loss under
``precision_mode=allow_mix_precision``. Branch CULPRIT's MatMul gives values near 1e5, beyond fp16's largest value,
which saturate to 65504 on the simulated Ascend backend (as on an NPU): the loss is far from the float32 one unless
that MatMul keeps float32. Every other op only loses fp16 rounding. It prints ``loss = <value>`` after each of two
steps, which is what the tool reads:

    npu-debug bisect --output-dir bisect_out -- python3 examples/find_precision_culprit.py

names ``branch_11/matmul`` in about a dozen runs and writes bisect_out/customize_dtypes.cfg; give that file to the
script as the ``customize_dtypes`` option (here without editing it:
``NPU_BRIDGE_OPTIONS='{"customize_dtypes": "bisect_out/customize_dtypes.cfg"}'``) and the loss is the float32
one again. docs/debugging_accuracy.md walks through it; tests/precision/test_precision_bisect.py runs it.

The dump tools name the same op from one step of each run, without a search: dump step 0 in the script's precision
mode and in float32, then compare the two dumps:

    export NPU_BRIDGE_DEVICE_TARGET=ascend
    NPU_BRIDGE_OPTIONS='{"enable_dump": true, "dump_path": "dump_fp16", "dump_step": "0", "dump_mode": "all"}' \
        python3 examples/find_precision_culprit.py
    NPU_BRIDGE_OPTIONS='{"enable_dump": true, "dump_path": "dump_fp32", "dump_step": "0", "dump_mode": "all",
        "precision_mode": "must_keep_origin_dtype"}' python3 examples/find_precision_culprit.py
    npu-dump compare dump_fp16 dump_fp32 --html report.html

Each branch's fp16 MatMul introduces a little error, but the advisor follows the first diverging tensor back to the
one that matters: ``advisor: #... branch_11/matmul, created at .../find_precision_culprit.py:<the line of its
tf.matmul> in <module> (MatMul): likely cause overflow ...``; report.html shows it highlighted among the 660
tensors (tests/dump/test_compare_report.py runs this).

Usage: find_precision_culprit.py [CULPRIT]
"""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import npu_bridge  # noqa: E402,F401

BRANCHES = 16
CULPRIT = int(sys.argv[1]) if len(sys.argv) > 1 else 11
# After MatMul, Mul, AddV2 and Relu: a chain whose neighbours Grappler's constant folding does not merge.
CHAIN = (("add", tf.add, 0.05), ("damp", tf.multiply, 0.9), ("sub", tf.subtract, 0.01), ("grow", tf.multiply, 1.1))

v1 = tf.compat.v1
rng = np.random.RandomState(0)
graph = tf.Graph()
with graph.as_default():
    x = v1.placeholder(tf.float32, [4, 8], name="x")
    branches = []
    for i in range(BRANCHES):
        with tf.name_scope(f"branch_{i:02d}"):
            weights = rng.uniform(0.5, 1.5, (8, 8)).astype(np.float32) / 8
            scale = 0.5
            if i == CULPRIT:
                weights, scale = weights * 1e5, 1e-4
            value = tf.matmul(x, tf.constant(weights), name="matmul")
            value = tf.multiply(value, scale, name="scale")
            value = tf.nn.relu(tf.add(value, 0.1, name="bias"), name="relu")
            for k in range(9):
                name, op, constant = CHAIN[k % len(CHAIN)]
                value = op(value, constant, name=f"{name}_{k}")
            branches.append(tf.square(value, name="square"))
    loss = tf.reduce_sum(tf.add_n(branches, name="total"), name="loss")

config = v1.ConfigProto()
custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
custom_op.name = "NpuOptimizer"
custom_op.parameter_map["precision_mode"].s = b"allow_mix_precision"
feed = {x: rng.uniform(0.5, 1.5, (4, 8)).astype(np.float32)}
with v1.Session(graph=graph, config=config) as sess:
    for step in range(2):
        print(f"step {step}: loss = {sess.run(loss, feed):.6f}", flush=True)
