"""Data dump from a bridged session: files decode to the tensors TensorFlow computed, in Ascend's layout."""

import csv
import os
import re

import helpers.collectives
import numpy as np
import pytest
import tensorflow as tf
from helpers.config import npu_config
from helpers.dump import artifacts, device_dirs, dump_config, dumped, feed, mlp_graph, training_model

from npu_bridge.core import dump
from npu_bridge.core.dump import dump_root, dump_writer
from npu_bridge.core.runtime.errors import NpuOptionError
from npu_bridge.estimator.npu import util
from npu_bridge.estimator.npu.npu_config import DumpConfig

v1 = tf.compat.v1


def train(config, steps, fetch=("matmul", "hidden", "logits", "loss"), graph_parts=None):
    """Initializes and runs ``steps`` training steps; returns (graph parts, [per-step fetched values])."""
    graph, x, y, parts = graph_parts or mlp_graph()
    fetched = []
    with v1.Session(graph=graph, config=config) as sess:
        sess.run(parts["init"])
        for step in range(steps):
            inputs = feed(x, y, step)
            w1 = sess.run(parts["w1"])
            values = sess.run([parts[name] for name in fetch] + [parts["train"]], inputs)
            fetched.append({"x": inputs[x], "w1": w1, **dict(zip(fetch, values))})
    dump.flush()
    return (graph, x, y, parts), fetched


def test_dumped_tensors_are_exactly_the_values_fetched_in_the_same_step(tmp_path):
    _, fetched = train(dump_config(tmp_path, dump_mode="all"), steps=3)
    model = training_model(tmp_path)
    for step, values in enumerate(fetched):
        matmul = dumped(tmp_path, "layer1/MatMul", step, model)
        assert matmul.op_name == "layer1/MatMul" and matmul.version == 2
        np.testing.assert_array_equal(matmul.inputs[0].array(), values["x"])
        np.testing.assert_array_equal(matmul.inputs[1].array(), values["w1"])  # read before the update
        np.testing.assert_array_equal(matmul.outputs[0].array(), values["matmul"])
        np.testing.assert_array_equal(dumped(tmp_path, "layer1/Tanh", step, model).outputs[0].array(), values["hidden"])
        second = dumped(tmp_path, "layer2/MatMul", step, model)
        np.testing.assert_array_equal(second.inputs[0].array(), values["hidden"])
        np.testing.assert_array_equal(second.outputs[0].array(), values["logits"])
        assert dumped(tmp_path, "loss", step, model).outputs[0].array() == values["loss"]


def test_layout_names_and_golden_files_follow_ascend(tmp_path):
    _, fetched = train(dump_config(tmp_path), steps=1)
    ((device, root),) = device_dirs(tmp_path).items()
    assert device == 0 and re.fullmatch(r"\d{14}", os.path.basename(os.path.dirname(root)))
    matmul = next(a for a in artifacts(tmp_path) if a.name.op_name == "layer1_MatMul")
    step_dir = os.path.dirname(matmul.path)
    model_id_dir = os.path.dirname(step_dir)
    model_dir = os.path.dirname(model_id_dir)
    assert os.path.dirname(model_dir) == root and os.path.basename(step_dir) == "0"
    assert re.fullmatch(r"ge_default_\d{14}_(\d+)", os.path.basename(model_dir)).group(1) == os.path.basename(
        model_id_dir
    )
    assert re.fullmatch(r"MatMul\.layer1_MatMul\.\d+\.0\.\d{16}", os.path.basename(matmul.path))
    loaded = dump.load(matmul.path)
    assert [t.io for t in loaded.tensors] == ["output"]  # the default dump_mode
    assert loaded.outputs[0].dtype_name == "DT_FLOAT" and loaded.outputs[0].format_name == "ND"
    golden = [a for a in artifacts(tmp_path, "golden") if a.name.op_name == "layer1_Tanh"]
    assert len(golden) == 1 and re.fullmatch(r"layer1_Tanh\.0\.\d{16}\.npy", os.path.basename(golden[0].path))
    np.testing.assert_array_equal(np.load(golden[0].path), fetched[0]["hidden"])


def test_dump_step_selects_exactly_the_named_steps_of_each_graph(tmp_path):
    train(dump_config(tmp_path, dump_step="1|3-4"), steps=6)
    steps = {a.step for a in artifacts(tmp_path)}
    assert steps == {1, 3, 4}
    assert {a.model for a in artifacts(tmp_path)} == {training_model(tmp_path)}  # the init graph ran step 0 only


def train_counter_loop(config, runs=2, iterations=3):
    """Runs a counter (+1 per step) whose step also sums it in a nested while loop, ``runs`` times in a loop of
    ``iterations`` steps. In the step that starts with the counter at c: scaled = 10 * c and the nested loop's
    accumulate = c, 2c, 3c."""
    graph = tf.Graph()
    with graph.as_default():
        counter = v1.get_variable("counter", initializer=0.0)
        value = tf.identity(counter.read_value(), name="value")
        scaled = tf.multiply(value, 10.0, name="scaled")
        total = v1.while_loop(
            lambda i, acc: i < 3, lambda i, acc: (i + 1, tf.add(acc, value, name="accumulate")), (0, 0.0)
        )[1]
        train_op = v1.assign_add(counter, tf.minimum(scaled + total, 0.0) + 1.0).op  # needs both; adds 1
    with v1.Session(graph=graph, config=config) as sess:
        sess.run(counter.initializer)
        train_loop = util.set_iteration_per_loop(sess, train_op, iterations)
        for _ in range(runs):
            sess.run(train_loop)
        assert sess.run(counter) == runs * iterations
    dump.flush()


def counter_dumps(root):
    """{step: (scaled's dumped values, accumulate's dumped values in order)} of the counter loop's graph."""
    model = training_model(root, "scaled")
    found = {}
    for artifact in sorted(artifacts(root), key=lambda a: a.name.timestamp):
        if artifact.model != model or artifact.name.op_name not in ("scaled", "while_body__1_accumulate_0"):
            continue
        value = dump.load(artifact.path).outputs[0].array().item()
        found.setdefault(artifact.step, ([], []))[artifact.name.op_name != "scaled"].append(value)
    return found


def test_with_iterations_per_loop_every_loop_iteration_is_a_step(tmp_path):
    train_counter_loop(dump_config(tmp_path, iterations_per_loop=3))
    assert counter_dumps(tmp_path) == {
        step: ([10.0 * step], [float(step), 2.0 * step, 3.0 * step]) for step in range(6)
    }


def test_dump_step_selects_one_iteration_of_a_loop_run_nested_loops_included(tmp_path):
    train_counter_loop(dump_config(tmp_path, dump_step="4", iterations_per_loop=3))  # run 2, iteration 2
    assert counter_dumps(tmp_path) == {4: ([40.0], [4.0, 8.0, 12.0])}
    model = training_model(tmp_path, "scaled")
    assert {a.step for a in artifacts(tmp_path) if a.model == model} == {4}
    assert os.listdir(os.path.dirname(os.path.dirname(dumped(tmp_path, "scaled").path))) == ["4"]


@pytest.mark.parametrize(
    "mode, ios, golden", [("input", {"input"}, False), ("output", {"output"}, True), ("all", {"input", "output"}, True)]
)
def test_dump_mode(tmp_path, mode, ios, golden):
    train(dump_config(tmp_path, dump_mode=mode, dump_step="0"), steps=1)
    matmul = dumped(tmp_path, "layer1/MatMul")
    assert {t.io for t in matmul.tensors} == ios
    assert bool(artifacts(tmp_path, "golden")) == golden


def test_stats_writes_a_statistics_csv_instead_of_tensors(tmp_path):
    _, fetched = train(dump_config(tmp_path, dump_data="stats", dump_mode="all"), steps=2)
    assert not artifacts(tmp_path) and not artifacts(tmp_path, "golden")
    model = training_model_from_stats(tmp_path)
    with open(os.path.join(model, "1", "statistic.csv"), newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0])[:12] == [
        "Op Type",
        "Op Name",
        "Task ID",
        "Stream ID",
        "Timestamp",
        "Input/Output",
        "Slot",
        "Data Size",
        "Data Type",
        "Format",
        "Shape",
        "Max Value",
    ]
    row = next(r for r in rows if r["Op Name"] == "layer1/Tanh" and r["Input/Output"] == "output")
    hidden = fetched[1]["hidden"]
    assert row["Op Type"] == "Tanh" and row["Data Type"] == "DT_FLOAT" and row["Shape"] == "[4,5]"
    assert int(row["Data Size"]) == hidden.nbytes and int(row["Count"]) == hidden.size
    assert float(row["Max Value"]) == pytest.approx(hidden.max()) and float(row["Min Value"]) == pytest.approx(
        hidden.min()
    )
    assert float(row["Avg Value"]) == pytest.approx(hidden.mean(), rel=1e-5)
    assert int(row["Negative Zero Count"]) == int((hidden < 0).sum()) and int(row["NaN Count"]) == 0
    assert float(row["L2Norm Value"]) == pytest.approx(np.linalg.norm(hidden), rel=1e-5)


def training_model_from_stats(root):
    for directory, _, files in os.walk(root):
        if "statistic.csv" in files:
            with open(os.path.join(directory, "statistic.csv"), encoding="utf-8") as f:
                if "layer1/MatMul" in f.read():
                    return os.path.dirname(directory)
    raise AssertionError("no statistic.csv of the training graph")


def test_dump_layer_dumps_the_named_ops_and_their_data_inputs(tmp_path, npu_log):
    _, fetched = train(dump_config(tmp_path, dump_layer="layer1/MatMul loss no/such_op"), steps=1)
    assert {a.name.op_name for a in artifacts(tmp_path)} == {"layer1_MatMul", "loss", "x"}
    np.testing.assert_array_equal(dumped(tmp_path, "x").outputs[0].array(), fetched[0]["x"])
    assert any("dump_layer names ops" in m and "no/such_op" in m for m in npu_log)


def test_over_long_names_are_listed_in_mapping_csv(tmp_path):
    name = "scope_" + "a" * 300
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [2], name="x")
        y = tf.multiply(x, 2.0, name=name)
    with v1.Session(graph=graph, config=dump_config(tmp_path)) as sess:
        sess.run(y, {x: [1.0, 2.0]})
    found = artifacts(tmp_path)
    assert [a.name.op_name for a in found] == [name]
    assert len(os.path.basename(found[0].path)) <= 255
    with open(os.path.join(os.path.dirname(found[0].path), "mapping.csv"), encoding="utf-8") as f:
        assert f"Mul.{name}." in f.read()
    assert dump.load(found[0].path).outputs[0].array().tolist() == [2.0, 4.0]


def test_the_device_id_names_the_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("ASCEND_DEVICE_ID", "3")
    train(dump_config(tmp_path), steps=1)
    assert list(device_dirs(tmp_path)) == [3]


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_each_rank_of_a_job_writes_its_own_device_directory(tmp_path):
    result, _ = helpers.collectives.launch("dump_worker.py", 2, args=[str(tmp_path)])
    assert result.returncode == 0, result.stdout + result.stderr
    assert sorted(device_dirs(tmp_path)) == [0, 1]
    for directory in device_dirs(tmp_path).values():
        assert any(f.startswith("Mul.doubled.") for _, _, files in os.walk(directory) for f in files)


def test_the_users_graph_is_untouched_and_results_do_not_change(tmp_path):
    parts = mlp_graph()
    _, plain = train(npu_config(), steps=3, graph_parts=parts)
    _, dumping = train(dump_config(tmp_path, dump_mode="all"), steps=3, graph_parts=parts)
    assert [v["loss"] for v in plain] == [v["loss"] for v in dumping]
    assert not any(node.op.startswith("Npu") for node in parts[0].as_graph_def().node)


def test_reference_variables_and_their_updates_are_dumped(tmp_path):
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [3], name="x")
        w = v1.Variable(np.ones(3, np.float32), name="w", use_resource=False)
        loss = tf.reduce_sum(tf.square(tf.multiply(w, x, name="scaled")), name="loss")
        train_op = v1.train.GradientDescentOptimizer(0.5).minimize(loss)
        init = v1.global_variables_initializer()
    with v1.Session(graph=graph, config=dump_config(tmp_path, dump_mode="all")) as sess:
        sess.run(init)
        sess.run([train_op, loss], {x: [1.0, 2.0, 3.0]})
        updated = sess.run(w)
    update = dumped(tmp_path, "GradientDescent/update_w/ApplyGradientDescent")
    np.testing.assert_array_equal(update.outputs[0].array(), updated)
    np.testing.assert_array_equal(update.inputs[0].array(), updated)  # dumped after the op, as on Ascend
    scaled = dumped(tmp_path, "scaled")  # read the variable before the update changed it in place
    np.testing.assert_array_equal(scaled.inputs[0].array(), [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(scaled.outputs[0].array(), [1.0, 2.0, 3.0])


@pytest.fixture(name="small_writer_queue")
def fixture_small_writer_queue(monkeypatch):
    monkeypatch.setenv(dump_writer.QUEUE_VARIABLE, "1")
    yield
    monkeypatch.delenv(dump_writer.QUEUE_VARIABLE)
    dump_writer.configure_from_environment()


@pytest.mark.usefixtures("small_writer_queue")
def test_a_small_writer_queue_bounds_memory_and_loses_nothing(tmp_path):
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [512, 1024], name="x")  # 2 MiB, bigger than the queue
        y = tf.add(x, 1.0, name="big")
    with v1.Session(graph=graph, config=dump_config(tmp_path)) as sess:
        for step in range(5):
            sess.run(y, {x: np.full((512, 1024), step, np.float32)})
    assert dump_writer.status()["queue_limit_bytes"] == 1 << 20
    assert [dumped(tmp_path, "big", step).outputs[0].array()[0, 0] for step in range(5)] == [1, 2, 3, 4, 5]


def test_bad_input_is_reported_when_the_session_is_created(tmp_path, monkeypatch):
    graph = tf.Graph()
    with pytest.raises(NpuOptionError, match="dump_path must be set"):
        v1.Session(graph=graph, config=npu_config(enable_dump=True))
    with pytest.raises(NpuOptionError, match="does not exist"):
        v1.Session(graph=graph, config=npu_config(enable_dump=True, dump_path=str(tmp_path / "missing")))
    with pytest.raises(NpuOptionError, match="dump_step string style is error"):
        v1.Session(graph=graph, config=dump_config(tmp_path, dump_step="1,2"))
    monkeypatch.setenv(dump_writer.THREADS_VARIABLE, "many")
    with pytest.raises(NpuOptionError, match="NPU_BRIDGE_DUMP_THREADS.*positive integer"):
        v1.Session(graph=graph, config=dump_config(tmp_path))


@pytest.mark.parametrize(
    "name, text",
    [
        (dump_writer.THREADS_VARIABLE, "\u00b2"),  # "²": str.isdigit() says yes, int() refuses it
        (dump_writer.THREADS_VARIABLE, "17"),
        (dump_writer.QUEUE_VARIABLE, "\u0663"),  # Arabic-Indic 3: int() reads it as 3
        (dump_writer.QUEUE_VARIABLE, "\uff11"),  # fullwidth 1
        (dump_writer.QUEUE_VARIABLE, "1048577"),  # past 1 TiB
        (dump_writer.QUEUE_VARIABLE, "9223372036854775808"),  # would wrap in the writer's int64 bytes
        (dump_writer.QUEUE_VARIABLE, "9" * 5000),  # past int()'s digit limit
        (dump_writer.QUEUE_VARIABLE, "0"),
    ],
)
def test_dump_writer_variables_take_ascii_digits_within_their_range(name, text):
    with pytest.raises(NpuOptionError, match=rf"'{name}' has invalid value .*Allowed: a positive integer <= \d+"):
        dump_writer.configure_from_environment({name: text})


def test_dump_writer_variables_accept_their_bounds():
    try:
        dump_writer.configure_from_environment(
            {dump_writer.QUEUE_VARIABLE: "1048576", dump_writer.THREADS_VARIABLE: "16"}
        )
        assert dump_writer.status()["queue_limit_bytes"] == 1 << 40
    finally:
        dump_writer.configure_from_environment({})
    assert dump_writer.status()["queue_limit_bytes"] == 256 << 20


def test_dump_config_maps_onto_parameter_map_options(tmp_path):
    config = DumpConfig(enable_dump=True, dump_path=str(tmp_path), dump_step="0|2", dump_mode="all")
    assert config.parameter_map_values() == {
        "enable_dump": True,
        "enable_dump_debug": False,
        "dump_path": str(tmp_path),
        "dump_step": "0|2",
        "dump_mode": "all",
        "dump_debug_mode": "all",
        "dump_data": "tensor",
    }
    quirk = DumpConfig(
        enable_dump_debug=True, dump_path=str(tmp_path), dump_mode=None, dump_debug_mode="aicore_overflow"
    )
    assert "dump_debug_mode" not in quirk.parameter_map_values()  # upstream guards it by dump_mode
    with pytest.raises(NpuOptionError, match="dump_path must be set.*given to DumpConfig"):
        DumpConfig(enable_dump=True)
    with pytest.raises(NpuOptionError, match="dump_mode"):
        DumpConfig(enable_dump=True, dump_path=str(tmp_path), dump_mode="both")
    train(npu_config(**config.parameter_map_values()), steps=3)
    assert {a.step for a in artifacts(tmp_path)} == {0, 2}


def test_a_dump_that_cannot_be_written_is_reported_not_lost_silently(tmp_path, npu_log):
    # (A {time} that is not a directory of ours is passed over for a new one: the obstacle sits below it.)
    (tmp_path / dump_root.process_time()).mkdir()
    (tmp_path / dump_root.process_time() / "0").write_text("a file where the dump directory should be")
    errors_before = dump_writer.status()["error_count"]
    _, fetched = train(dump_config(tmp_path), steps=1)
    assert fetched[0]["loss"] > 0  # training is not stopped
    assert dump_writer.status()["error_count"] > errors_before
    assert any(
        "a dump file could not be written: refusing to write into " + str(tmp_path) in message
        and "it exists and is not a directory" in message
        for message in npu_log
    )


def test_reduced_precision_tensors_are_dumped_in_fp16_as_on_ascend(tmp_path):
    _, fetched = train(dump_config(tmp_path, dump_mode="all", precision_mode="allow_fp32_to_fp16"), 1)
    matmul = dumped(tmp_path, "layer1/MatMul", step=0, model=training_model(tmp_path))
    assert [t.dtype_name for t in matmul.inputs + matmul.outputs] == ["DT_FLOAT16"] * 3
    np.testing.assert_array_equal(matmul.inputs[0].array(), fetched[0]["x"].astype(np.float16))
    np.testing.assert_array_equal(matmul.outputs[0].array(), fetched[0]["matmul"].astype(np.float16))
    # The precision pass's roundings are Ascend's inserted casts: to fp16 before the MatMul, back to float32 after.
    to_fp16 = dumped(tmp_path, "x/npu_round_fp16_0", step=0)
    back = dumped(tmp_path, "layer1/MatMul/npu_round_fp16_0", step=0)
    assert [t.dtype_name for t in to_fp16.inputs + to_fp16.outputs] == ["DT_FLOAT", "DT_FLOAT16"]
    assert [t.dtype_name for t in back.inputs + back.outputs] == ["DT_FLOAT16", "DT_FLOAT"]
    assert {a.name.op_type for a in artifacts(tmp_path) if "npu_round" in a.name.op_name} == {"Cast"}
