"""``profiling.profiler_trace``: a TensorFlow profiler trace of one function call as step stats."""

import pytest
from tensorflow.core.framework import step_stats_pb2
from tensorflow.tsl.profiler.protobuf import trace_events_pb2

from npu_bridge.core.profiling import profiler_trace
from npu_bridge.core.profiling.step_stats import StepStatsReader
from npu_bridge.core.runtime.errors import ProfileDataError

PYTHON, COMPUTE = 1, 2


def _trace(*events):
    trace = trace_events_pb2.Trace()
    for thread, name, start_us, duration_us, args in events:
        trace.trace_events.add(
            device_id=7,
            resource_id=thread,
            name=name,
            timestamp_ps=start_us * 1_000_000,
            duration_ps=duration_us * 1_000_000,
            args=args,
        )
    return trace.SerializeToString()


def test_the_kernels_of_the_function_steps_become_nodes_with_their_graph_names_and_times():
    trace = _trace(
        (PYTHON, "EagerExecute", 1, 50, {"eager_op": "VarHandleOp", "is_func": "0"}),
        (PYTHON, "EagerExecute", 2, 90, {"eager_op": "__inference_train_function_9", "is_func": "1"}),
        (PYTHON, "FunctionRun", 3, 2, {"id": "42"}),
        (PYTHON, "ExecutorState::Process", 4, 3, {"id": "-1"}),  # constant folding while the graph is built
        (PYTHON, "StridedSlice", 5, 1, {"long_name": "strided_slice:StridedSlice"}),
        (COMPUTE, "ExecutorState::Process", 10, 30, {"id": "42"}),
        (COMPUTE, "_MklMatMul", 11, 5, {"long_name": "dense/MatMul:_MklMatMul"}),
        (COMPUTE, "Prefetch", 17, 2, {"long_name": "Iterator::Root:Prefetch"}),
        (COMPUTE, "Relu", 20, 1, {"long_name": "dense/Relu:Relu#id=3#"}),
    )
    converted = profiler_trace.to_step_stats(trace, origin_ns=1_000_000_000)
    assert converted.functions == ("__inference_train_function_9",) and converted.ops == 2
    nodes = step_stats_pb2.StepStats.FromString(converted.step_stats).dev_stats[0].node_stats
    assert [(n.node_name, n.all_start_nanos, n.all_end_rel_nanos) for n in nodes] == [
        ("dense/MatMul", 1_000_011_000, 5_000),
        ("dense/Relu", 1_000_020_000, 1_000),
    ]
    ops = StepStatsReader().read(converted.step_stats).ops
    assert [(op.name, op.op_type) for op in ops] == [("dense/MatMul", "MatMul"), ("dense/Relu", "Relu")]


def test_a_trace_that_does_not_parse_is_a_profile_data_error():
    with pytest.raises(ProfileDataError, match="cannot be parsed"):
        profiler_trace.to_step_stats(b"\xff\xff\xff", 0)


def test_the_graph_that_ran_gives_the_nodes_their_inputs_dtypes_and_static_shapes():
    import tensorflow as tf

    from npu_bridge.core.profiling import graph_tensors

    @tf.function
    def step(x):
        return tf.nn.relu(tf.matmul(x, tf.ones([3, 4])))

    concrete = step.get_concrete_function(tf.TensorSpec([None, 3], tf.float32))
    nodes = graph_tensors.of_graph(concrete.graph)
    trace = _trace(
        (PYTHON, "EagerExecute", 1, 90, {"eager_op": concrete.name.decode(), "is_func": "1"}),
        (COMPUTE, "_MklMatMul", 11, 5, {"long_name": "MatMul:_MklMatMul"}),
        (COMPUTE, "Relu", 20, 1, {"long_name": "Relu:Relu"}),
        (COMPUTE, "NoSuchNode", 22, 1, {"long_name": "added_by_a_pass:NpuRound"}),
    )
    asked = []
    converted = profiler_trace.to_step_stats(trace, 0, tensors_of=lambda name: asked.append(name) or nodes)
    assert asked == [concrete.name.decode()]
    ops = StepStatsReader().read(converted.step_stats).ops
    matmul, relu, added = ops
    assert matmul.outputs == (("FLOAT", (-1, 4)),)  # the batch dimension is not known statically
    assert relu.inputs == (("FLOAT", (-1, 4)),)  # MatMul's output, as a traced session run reads it
    assert added.outputs == () and added.inputs == ()  # not in the graph: nothing is made up
