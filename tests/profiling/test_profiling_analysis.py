"""The pieces of the profile analysis: step stats reading, iterations, streams, step trace, roofline, raw data."""

import struct

import pytest
import tensorflow as tf
from tensorflow.core.framework import step_stats_pb2, types_pb2

from npu_bridge.core.profiling import op_classes, raw_trace, roofline, step_trace, summary
from npu_bridge.core.profiling.models import ModelRegistry
from npu_bridge.core.profiling.run_signature import run_signature
from npu_bridge.core.profiling.step_stats import OpRun, RunOps, StepStatsReader, split_iterations
from npu_bridge.core.profiling.streams import StreamAssigner
from npu_bridge.core.runtime.errors import ProfileDataError

NS = 1_800_000_000_000_000_000  # a wall-clock time in ns


def node(stats, name, label, start_us, dur_us, shapes=()):
    n = stats.node_stats.add(
        node_name=name, timeline_label=label, all_start_nanos=NS + start_us * 1000, all_end_rel_nanos=dur_us * 1000
    )
    for slot, shape in enumerate(shapes):
        out = n.output.add(slot=slot)
        out.tensor_description.dtype = types_pb2.DT_FLOAT
        for d in shape:
            out.tensor_description.shape.dim.add(size=d)


def op(name, start, end, kind=op_classes.TASK, op_type="Mul", device="/device:CPU:0"):
    return OpRun(name, name, op_type, kind, device, start, end)


def test_step_stats_reader_reads_types_shapes_inputs_and_drops_plumbing():
    stats = step_stats_pb2.StepStats()
    dev = stats.dev_stats.add(device="/job:localhost/replica:0/task:0/device:CPU:0")
    node(dev, "w", "w = Const()", 0, 1, [(3, 4)])
    node(dev, "x", "x = _Arg()", 1, 1, [(2, 3)])
    node(dev, "mm", "[cpu 0.1MB 0.1MB] mm = MatMul(x, w)", 2, 10, [(2, 4)])
    node(dev, "split", "split = Split(mm)", 13, 2, [(2, 2), (2, 2)])
    node(dev, "gradients/y", "gradients/y = AddV2(split:1, split, ^mm)", 16, 3, [(2, 2)])
    node(dev, "ret", "ret = _Retval(gradients/y)", 20, 1)
    run = StepStatsReader().read(stats.SerializeToString())
    assert [o.name for o in run.ops] == ["mm", "split", "gradients/y"]
    mm = run.ops[0]
    assert (mm.op_type, mm.inputs, mm.outputs) == (
        "MatMul",
        (("FLOAT", (2, 3)), ("FLOAT", (3, 4))),
        (("FLOAT", (2, 4)),),
    )
    assert run.ops[2].inputs == (("FLOAT", (2, 2)), ("FLOAT", (2, 2)))
    assert (mm.start_ns, mm.end_ns) == (NS + 2000, NS + 12000)
    assert run.fetched == ("gradients/y",) and "w" in run.graph_key and run.step_ends == ()


@pytest.mark.op_types
def test_step_stats_reader_gives_the_op_types_of_the_users_graph():
    stats = step_stats_pb2.StepStats()
    dev = stats.dev_stats.add(device="/job:localhost/replica:0/task:0/device:CPU:0")
    node(dev, "conv/BiasAdd", "conv/BiasAdd = _MklNativeConv2DWithBias(x, w, b)", 0, 5)  # oneDNN's merge
    node(dev, "dense/Relu", "dense/Relu = _FusedMatMul(conv/BiasAdd, k, c)", 6, 2)  # the remapper's fusion
    node(dev, "gradients/MatMul_grad/MatMul", "gradients/MatMul_grad/MatMul = _MklMatMul(dense/Relu, k)", 9, 2)
    run = StepStatsReader(read_shapes=False).read(stats.SerializeToString())
    assert [o.op_type for o in run.ops] == ["Conv2D", "MatMul", "MatMul"]
    assert all(roofline.is_cube(o.op_type) for o in run.ops)


def test_categories_and_task_types():
    assert op_classes.category("_SOURCE", "NoOp") == op_classes.PLUMBING
    assert op_classes.category("npu_iterations_loop/counter/add", "AddV2") == op_classes.PLUMBING
    assert op_classes.category("npu_iterations_loop/body/conv", "Conv2D") == op_classes.TASK
    assert op_classes.display_name("npu_iterations_loop/body/conv") == "conv"
    assert op_classes.category("check", "NpuOverflowCheck") == op_classes.INSTRUMENTATION
    assert op_classes.category("ar", "CollectiveReduceV2") == op_classes.HCCL
    assert op_classes.task_type(op_classes.HCCL, "CollectiveReduceV2") == "HCCL"
    assert op_classes.task_type(op_classes.TASK, "IteratorGetNext") == "AI_CPU"
    assert op_classes.task_type(op_classes.TASK, "Conv2D") == "AI_CORE"
    assert op_classes.is_backward("training/SGD/gradients/gradients/dense/MatMul_grad/MatMul", "MatMul")
    assert op_classes.is_backward("relu_grad", "ReluGrad") and not op_classes.is_backward("dense/MatMul", "MatMul")
    assert not op_classes.is_forward("update", "ResourceApplyAdam")
    assert not op_classes.is_forward("batch", "IteratorGetNext") and op_classes.is_forward("conv", "Conv2D")


def test_loop_runs_split_at_the_step_ends():
    ops = (op("a", 0, 5), op("b", 6, 9), op("a", 12, 15), op("b", 16, 19), op("exit", 25, 26))
    run = RunOps(ops, frozenset(), (), (10, 20))
    assert [[o.start_ns for o in it] for it in split_iterations(run)] == [[0, 6], [12, 16, 25]]
    assert split_iterations(RunOps(ops, frozenset(), (), ())) == [list(ops)]


def test_an_op_ends_when_its_kernel_ended_so_a_late_done_stamp_stays_in_its_step():
    """TensorFlow stamps a node's overall end after it handed its outputs on; under load the next step's first op
    can start before that stamp. The op's end is its kernel's end, so the steps' windows do not overlap."""
    stats = step_stats_pb2.StepStats()
    dev = stats.dev_stats.add(device="/job:localhost/replica:0/task:0/device:CPU:0")
    late = dev.node_stats.add(node_name="apply", timeline_label="apply = AssignAddVariableOp(v, g)")
    late.all_start_nanos, late.op_end_rel_nanos, late.all_end_rel_nanos = NS, 4000, 30000
    step_end = dev.node_stats.add(node_name=op_classes.LOOP_STEP_END, timeline_label="n = NextIteration(add)")
    step_end.all_start_nanos, step_end.op_end_rel_nanos, step_end.all_end_rel_nanos = NS + 5000, 1000, 2000
    node(dev, "loop/Less", "loop/Less = Less(i, n)", 10, 1)  # no kernel end recorded: its overall end counts
    node(dev, op_classes.LOOP_STEP_END, "n = NextIteration(add)", 20, 1)
    run = StepStatsReader().read(stats.SerializeToString())
    assert [(o.name, o.end_ns - NS) for o in run.ops] == [("apply", 4000), ("loop/Less", 11000)]
    assert run.step_ends == (NS + 6000, NS + 21000)
    first, second = split_iterations(run)
    assert max(o.end_ns for o in first) <= min(o.start_ns for o in second)


def test_streams_never_overlap_and_report_waits():
    ops = [op("a", 0, 10), op("b", 5, 8), op("c", 9, 12), op("d", 14, 20), op("ar", 2, 4, op_classes.HCCL)]
    assigner = StreamAssigner()
    placed = assigner.assign(ops)
    assert placed == [(0, 0), (1, 0), (1, 1), (0, 4), (2, 0)]
    assert assigner.streams[2] == ("communication", "", 0)
    assert assigner.assign([op("a", 100, 110)]) == [(0, 0)]  # stable ids across runs, no wait across runs


def test_models_fix_points_and_the_step_trace_keeps_training_models():
    registry = ModelRegistry()
    train_ops = [
        op("data", 0, 2, op_type="IteratorGetNext"),
        op("conv", 3, 6, op_type="Conv2D"),
        op("gradients/conv_grad", 7, 9, op_type="Conv2DBackpropFilter"),
        op("update", 9, 10, op_type="ResourceApplyGradientDescent"),
    ]
    init_ops = [op("init", 0, 1, op_type="AssignVariableOp")]
    init = registry.model_for("init", RunOps(tuple(init_ops), frozenset({"init"}), (), ()), [init_ops])
    model = registry.model_for("train", RunOps(tuple(train_ops), frozenset({"t"}), (), ()), [train_ops])
    assert (init.model_id, init.training, model.model_id, model.training) == (1, False, 2, True)
    assert (model.fp_point, model.bp_point) == ("conv", "gradients/conv_grad")
    trace = step_trace.StepTrace()
    trace.add(step_trace.iteration_of(init, 1, init_ops))
    for k in range(2):
        shifted = [
            OpRun(o.node, o.name, o.op_type, o.kind, o.device, o.start_ns + 100 * k, o.end_ns + 100 * k)
            for o in train_ops
        ]
        trace.add(step_trace.iteration_of(model, k + 1, shifted))
    rows = trace.rows(registry.models)
    assert [(r.model_id, r.iteration_id) for r in rows] == [(2, 1), (2, 2)]
    first, second = rows
    assert (first.time_ns, first.fp_bp_ns, first.refresh_ns, first.data_aug_ns) == (7, 6, 1, None)
    assert (second.time_ns, second.data_aug_ns) == (100, 93)
    assert step_trace.csv_row(second, 0, 0, False)[2:9] == [
        "0.103",
        "0.109",
        "0.110",
        "0.100",
        "0.006",
        "0.001",
        "0.093",
    ]
    assert step_trace.us(-1500) == "-1.500" and step_trace.us(None) == "N/A"


@pytest.mark.parametrize(
    "op_type, inputs, outputs, flops",
    [
        ("MatMul", [("FLOAT", (8, 32)), ("FLOAT", (32, 16))], [("FLOAT", (8, 16))], 2 * 8 * 16 * 32),
        ("MatMul", [("FLOAT", (32, 8)), ("FLOAT", (32, 16))], [("FLOAT", (8, 16))], 2 * 8 * 16 * 32),  # transpose_a
        (
            "BatchMatMulV2",
            [("FLOAT", (4, 8, 32)), ("FLOAT", (4, 32, 16))],
            [("FLOAT", (4, 8, 16))],
            2 * 4 * 8 * 16 * 32,
        ),
        ("Conv2D", [("FLOAT", (2, 9, 9, 3)), ("FLOAT", (3, 3, 3, 8))], [("FLOAT", (2, 7, 7, 8))], 2 * 2 * 49 * 8 * 27),
        (
            "Conv2DBackpropInput",
            [("INT32", (4,)), ("FLOAT", (3, 3, 3, 8)), ("FLOAT", (2, 7, 7, 8))],
            [("FLOAT", (2, 9, 9, 3))],
            2 * 2 * 49 * 8 * 27,
        ),
        (
            "Conv2DBackpropFilter",
            [("FLOAT", (2, 9, 9, 3)), ("INT32", (4,)), ("FLOAT", (2, 7, 7, 8))],
            [("FLOAT", (3, 3, 3, 8))],
            2 * 2 * 49 * 8 * 27,
        ),
        (
            "DepthwiseConv2dNative",
            [("FLOAT", (1, 5, 5, 4)), ("FLOAT", (3, 3, 4, 2))],
            [("FLOAT", (1, 3, 3, 8))],
            2 * 9 * 8 * 9,
        ),
        ("Relu", [("FLOAT", (2, 100))], [("FLOAT", (2, 100))], 200),
    ],
)
def test_roofline_flops(op_type, inputs, outputs, flops):
    assert roofline.estimate(op_type, inputs, outputs, roofline.PrecisionPolicy()).flops == flops


def test_roofline_time_bound_and_precision():
    peaks = roofline.ASCEND_910
    big = [("FLOAT", (4096, 4096)), ("FLOAT", (4096, 4096))]
    fp16 = roofline.estimate("MatMul", big, [("FLOAT", (4096, 4096))], roofline.PrecisionPolicy())
    assert fp16.bound == "compute" and fp16.bytes == 3 * 4096 * 4096 * 2  # cube ops move fp16 by default
    assert fp16.microseconds == pytest.approx(2 * 4096**3 / peaks["cube_fp16_flops"] * 1e6)
    kept = roofline.estimate(
        "MatMul", big, [("FLOAT", (4096, 4096))], roofline.PrecisionPolicy("must_keep_origin_dtype")
    )
    assert kept.microseconds == pytest.approx(2 * 4096**3 / peaks["vector_fp32_flops"] * 1e6)
    add = roofline.estimate("AddV2", big, [("FLOAT", (4096, 4096))], roofline.PrecisionPolicy())
    assert add.bound == "memory"
    assert add.microseconds == pytest.approx(3 * 4096 * 4096 * 4 / peaks["hbm_bytes_per_second"] * 1e6)
    forced = roofline.estimate("AddV2", big, [("FLOAT", (4096, 4096))], roofline.PrecisionPolicy("force_fp16"))
    assert forced.bytes == add.bytes / 2


def test_raw_trace_round_trip_limit_and_damage(tmp_path):
    path = str(tmp_path / "raw")
    header = raw_trace._HEADER.size
    writer = raw_trace.RawTraceWriter(path, limit_bytes=len(raw_trace.MAGIC) + 2 * (header + 100) + 4)
    assert writer.write(0, 0, 10, 20, b"x" * 100) and writer.write(0, 1, 30, 40, b"y" * 100, "f|g")
    assert not writer.write(1, 0, 50, 60, b"z")  # beyond the limit: dropped and counted
    writer.close()
    assert (writer.runs_written, writer.runs_dropped) == (2, 1)
    runs = list(raw_trace.read_runs(path))
    assert [(r.session, r.run, r.start_ns, r.end_ns, len(r.step_stats), r.graph) for r in runs] == [
        (0, 0, 10, 20, 100, ""),
        (0, 1, 30, 40, 100, "f|g"),
    ]
    with open(path, "r+b") as f:  # a record cut short by a crash ends the data
        f.truncate(len(raw_trace.MAGIC) + header + 100 + 50)
    assert len(list(raw_trace.read_runs(path))) == 1
    (tmp_path / "bad").write_bytes(b"not a trace")
    with pytest.raises(ProfileDataError, match="not an npu_bridge raw profiling file"):
        list(raw_trace.read_runs(str(tmp_path / "bad")))
    with pytest.raises(ProfileDataError, match="does not exist"):
        list(raw_trace.read_runs(str(tmp_path / "missing")))


def test_raw_traces_of_the_first_format_are_still_read(tmp_path):
    path = tmp_path / "v1"
    path.write_bytes(raw_trace.MAGIC_V1 + struct.pack("<IIIqq", 3, 0, 7, 10, 20) + b"abc")
    assert list(raw_trace.read_runs(str(path))) == [raw_trace.RawRun(0, 7, 10, 20, b"abc", "")]


def test_run_signatures_name_what_a_run_fetches_and_feeds():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, name="x")
        y = tf.identity(x, name="y")
        train = tf.group(y, name="train")
    first = run_signature({"loss": y, "ops": [train]}, {x: 1.0})
    assert first == "fetch:train,y:0|feed:x:0"
    assert run_signature([train, y], {"x:0": 2.0}) == first  # order and spelling do not matter
    assert run_signature(["y:0"], None) == "fetch:y:0|feed:"
    hook = object()  # MonitoredSession keys the hooks' fetches by the hook
    assert run_signature({"caller": [train], hook: {"y": y}}, {x: 1.0}) == first


def test_points_are_ops_of_every_iteration_of_a_loop_run():
    """With iterations_per_loop, an op computed once before the loop (it runs in the first iteration only) is not
    the FP point: later iterations would have none."""
    first = [op("prepare", 0, 2, op_type="Relu"), op("conv", 3, 6, op_type="Conv2D"), op("gradients/g", 7, 9)]
    second = [op("conv", 13, 16, op_type="Conv2D"), op("gradients/g", 17, 19)]
    run = RunOps(tuple(first + second), frozenset(), (), (10, 20))
    model = ModelRegistry().model_for("loop", run, split_iterations(run))
    assert (model.fp_point, model.bp_point, model.training) == ("conv", "gradients/g", True)


def test_display_names_map_loop_and_instrumentation_renames_back():
    assert op_classes.display_name("npu_iterations_loop/body/loss") == "loss"
    assert op_classes.display_name("conv/Conv2D/npu_dump_source") == "conv/Conv2D"
    assert op_classes.display_name("x/npu_overflow_source/npu_dump_source_1") == "x"
    assert op_classes.display_name("npu_dump_source") == "npu_dump_source"


def _row(time, fp_bp, refresh, data_aug, iteration=2):
    return summary.IterationRow(1, iteration, time, fp_bp, refresh, data_aug, None)


@pytest.mark.parametrize(
    "rows, shares",
    [
        # every iteration has its points: the parts of the time
        ([_row(10, 6, 1, 3), _row(20, 10, 2, 8)], (16 / 30 * 100, 3 / 30 * 100, 11 / 30 * 100)),
        # iterations without an FP point (a loop's later iterations, a cond's other branch) are left out
        ([_row(30, 20, 1, 9), _row(5, None, 1, None), _row(5, None, 1, None)], (20 / 30 * 100, 1 / 30 * 100, 30.0)),
        # overlapping runs of one graph: a part never exceeds its iteration's time
        ([_row(2, 9, 1, -8)], (100.0, 50.0, 0.0)),
    ],
)
def test_summary_shares_stay_between_0_and_100(rows, shares):
    profile = summary.ProfileSummary("p", {}, [_row(1, 1, 0, None, iteration=1)] + rows, [])
    got = tuple(profile.share(field) for field in ("fp_bp", "refresh", "data_aug"))
    assert got == pytest.approx(shares)
    assert all(0 <= share <= 100 for share in got)
