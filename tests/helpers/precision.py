"""Helpers for the precision, simulated-backend and loss-scaling tests."""

import numpy as np
import tensorflow as tf
from tensorflow.core.framework import node_def_pb2
from tensorflow.core.protobuf import device_properties_pb2
from tensorflow.python.grappler import cluster as grappler_cluster
from tensorflow.python.grappler import tf_optimizer

from helpers.config import npu_config
from npu_bridge.core.runtime.executed_op_types import user_op_type

v1 = tf.compat.v1

_TASK = "/job:localhost/replica:0/task:0"
CPU_DEVICE = device_properties_pb2.NamedDevice(
    name=f"{_TASK}/device:CPU:0",
    properties=device_properties_pb2.DeviceProperties(type="CPU", num_cores=2, frequency=2000),
)
GPU_DEVICE = device_properties_pb2.NamedDevice(
    name=f"{_TASK}/device:GPU:0",
    properties=device_properties_pb2.DeviceProperties(
        type="GPU",
        vendor="NVIDIA",
        model="virtual",
        num_cores=80,
        frequency=1500,
        memory_size=16 << 30,
        environment={"architecture": "7.0"},
    ),
)


def grappler_optimized(config, meta_graph, devices, graph_id):
    """The GraphDef Grappler's meta optimizer makes of ``meta_graph`` with the session ``config`` (NpuOptimizer
    included) on a virtual cluster of ``devices`` (``CPU_DEVICE``, ``GPU_DEVICE``), without executing anything."""
    cluster = grappler_cluster.Cluster(devices=devices)
    try:
        return tf_optimizer.OptimizeGraph(config, meta_graph, verbose=False, graph_id=graph_id, cluster=cluster)
    finally:
        cluster.Shutdown()


def run_executed(graph, fetches, feed=None, **options):
    """Runs ``fetches`` once in a bridged session with ``options``.

    Returns:
      (values, executed): the fetched values and ``executed_nodes`` of the run.
    """
    run_metadata = v1.RunMetadata()
    with v1.Session(graph=graph, config=npu_config(**options)) as sess:
        values = sess.run(fetches, feed, options=v1.RunOptions(output_partition_graphs=True), run_metadata=run_metadata)
    return values, executed_nodes(run_metadata)


def executed_nodes(run_metadata):
    """Copies of the NodeDefs of the partition graphs TensorFlow ran, each with its op type in the user's graph
    (with oneDNN on, TensorFlow runs MatMul as _MklMatMul, Conv2D as _MklNativeConv2D, ...)."""
    nodes = []
    for graph_def in run_metadata.partition_graphs:
        for node in graph_def.node:
            copy = node_def_pb2.NodeDef()
            copy.CopyFrom(node)
            copy.op = user_op_type(node.op)
            nodes.append(copy)
    return nodes


def casts_to(executed, dtype):
    """Names of the executed nodes that take float32 values to ``dtype``: Casts, and the precision pass's NpuRound
    (float32 rounded through ``dtype``; on a GPU device it is a Cast pair)."""
    enum = dtype.as_datatype_enum
    return [
        n.name
        for n in executed
        if (n.op == "Cast" and n.attr["DstT"].type == enum) or (n.op == "NpuRound" and n.attr["to"].type == enum)
    ]


def rounds_through(node, dtype):
    """True when ``node`` gives float32 values rounded through ``dtype``: an NpuRound, or a Cast back from it."""
    enum = dtype.as_datatype_enum
    if node.op == "NpuRound":
        return node.attr["to"].type == enum
    return node.op == "Cast" and node.attr["SrcT"].type == enum


def saturating(executed):
    """Names of the executed fp16 roundings that saturate as the simulated Ascend device does."""
    return {n.name for n in executed if n.op == "NpuRound" and n.attr["saturate"].b} | {
        n.input[0] for n in executed if n.op == "NpuSaturateFp16"
    }


def fp16(values):
    """``values`` rounded to float16 and back to float32."""
    return np.asarray(values, np.float32).astype(np.float16).astype(np.float32)


def bf16(values):
    """``values`` rounded (to nearest even) to bfloat16 and back to float32."""
    bits = np.asarray(values, np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return rounded.astype(np.uint32).view(np.float32)
