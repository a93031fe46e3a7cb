"""Where each dumped op was created: op_sources.json at the dump root, and npu-dump compare naming the source
of the ops it shows (terminal text and CSV), inert when the file was tampered with."""

import csv
import importlib.util
import inspect
import json
import os
import shutil
import textwrap

import pytest
import tensorflow as tf
from helpers.dump import dump_config
from helpers.processes import run_python

from npu_bridge.core import dump
from npu_bridge.core.dump import dump_compare, op_graph, overflow_records
from npu_bridge.core.dump.cli import main

v1 = tf.compat.v1

SCRIPT = textwrap.dedent(
    """\
    import numpy as np
    import tensorflow as tf


    def build_model(scale):
        graph = tf.Graph()
        with graph.as_default():
            x = tf.compat.v1.placeholder(tf.float32, [2, 3], name="x")
            w = tf.constant(np.arange(6, dtype=np.float32).reshape(3, 2) * scale, name="w")
            product = tf.matmul(x, w, name="layer/MatMul")
            out = tf.nn.relu(product, name="layer/Relu")
        return graph, x, out
    """
)
MATMUL_LINE, RELU_LINE = 10, 11  # the lines of SCRIPT that create the ops


def load_script(directory):
    path = directory / "my_model.py"
    path.write_text(SCRIPT, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"my_model_{abs(hash(str(directory)))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return str(path), module


def dump_run(directory, scale=1.0):
    """Dumps one run of the script's graph into ``directory``/dump; returns (dump root, script path)."""
    script, module = load_script(directory)
    base = directory / "dump"
    base.mkdir()
    graph, x, out = module.build_model(scale)
    with v1.Session(graph=graph, config=dump_config(base, dump_mode="all")) as sess:
        sess.run(out, {x: [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]})
    dump.flush()
    (time_dir,) = os.listdir(base)
    return base / time_dir / "0", script


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    first, second = tmp_path_factory.mktemp("first"), tmp_path_factory.mktemp("second")
    return dump_run(first), dump_run(second, scale=-1.0)


def test_every_dumped_op_is_listed_with_where_the_script_created_it(runs):
    (root, script), _ = runs
    with open(root / overflow_records.SOURCES_FILE, encoding="utf-8") as f:
        sources = json.load(f)
    assert sources["layer/MatMul"] == f"{script}:{MATMUL_LINE} in build_model"
    assert sources["layer/Relu"] == f"{script}:{RELU_LINE} in build_model"
    assert os.path.exists(root / "dump_status.json")  # it sits next to the status file, at the dump root
    base = root.parent.parent
    found = [d for d, _, files in os.walk(base) if overflow_records.SOURCES_FILE in files]
    assert found == [str(root)]  # only there: Ascend's layout has no such file, its tools pass over it
    assert overflow_records.read_sources(base) == sources  # what `npu-dump overflow` reads its sites from


def test_compare_shows_the_source_of_each_op_in_text_and_csv(runs, tmp_path, capsys):
    (mine, script), (truth, _) = runs
    output = tmp_path / "result.csv"
    assert main(["compare", str(mine), str(truth), "-o", str(output)]) == 1  # the sign flip diverges
    out = capsys.readouterr().out
    assert "first diverging op: #1 layer/MatMul output 0 (cosine" in out
    assert f"created at {script}:{MATMUL_LINE} in build_model" in out.split("first diverging op:")[1].splitlines()[0]
    with open(output, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert tuple(rows[0]) == dump_compare.CSV_HEADER + ("Source",)
    by_tensor = {row[9]: row[-1] for row in rows[1:]}
    assert by_tensor["layer/MatMul:output:0"] == f"{script}:{MATMUL_LINE} in build_model"
    assert by_tensor["layer/Relu:input:0"] == f"{script}:{RELU_LINE} in build_model"


def test_compare_without_op_sources_has_no_source_column(runs, tmp_path, monkeypatch):
    monkeypatch.setattr(overflow_records, "read_sources", lambda root: {})
    (mine, _), (truth, _) = runs
    comparison = dump.compare(mine, truth)
    comparison.write_csv(tmp_path / "plain.csv")
    with open(tmp_path / "plain.csv", newline="", encoding="utf-8") as f:
        assert tuple(next(csv.reader(f))) == dump_compare.CSV_HEADER
    assert "created at" not in comparison.summary()


def test_a_hostile_source_is_shown_escaped(runs, tmp_path, capsys):
    (mine, _), (truth, _) = runs
    hostile_tree, mine_copy = tmp_path / "hostile", tmp_path / "mine"
    shutil.copytree(truth, hostile_tree)  # the ground truth, with a tampered op_sources.json
    (hostile_tree / overflow_records.SOURCES_FILE).write_text(
        json.dumps({"layer/MatMul": '=HYPERLINK("http://x")\x1b[2J:1 in f', "layer/Relu": "/a\u202eb.py:2 in g"}),
        encoding="utf-8",
    )
    shutil.copytree(mine, mine_copy)  # my dump without its op_sources.json, so the ground truth's counts
    os.remove(mine_copy / overflow_records.SOURCES_FILE)
    output = tmp_path / "hostile.csv"
    main(["compare", str(mine_copy), str(hostile_tree), "-o", str(output)])
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\u202e" not in out
    assert 'created at =HYPERLINK("http://x")\\x1b[2J:1 in f' in out
    with open(output, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    by_tensor = {row[9]: row[-1] for row in rows[1:]}
    assert by_tensor["layer/MatMul:output:0"] == '\'=HYPERLINK("http://x")\\x1b[2J:1 in f'
    assert by_tensor["layer/Relu:output:0"] == "/a\\u202eb.py:2 in g"


def test_an_op_whose_file_name_is_in_mapping_csv_is_listed_under_its_name(tmp_path):
    name = "scope/" + "a" * 300
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [2], name="x")
        y = tf.multiply(x, 2.0, name=name)
        line = inspect.currentframe().f_lineno - 1  # the line above
    with v1.Session(graph=graph, config=dump_config(tmp_path)) as sess:
        sess.run(y, {x: [1.0, 2.0]})
    (time_dir,) = os.listdir(tmp_path)
    sources = overflow_records.read_sources(tmp_path / time_dir / "0")
    function = "test_an_op_whose_file_name_is_in_mapping_csv_is_listed_under_its_name"
    assert sources == {name: f"{__file__}:{line} in {function}"}


KILLED_SCRIPT = textwrap.dedent(
    """\
    import os, sys, time
    import numpy as np
    import tensorflow as tf
    import npu_bridge

    v1 = tf.compat.v1


    def config(path):
        proto = v1.ConfigProto()
        custom = proto.graph_options.rewrite_options.custom_optimizers.add()
        custom.name = "NpuOptimizer"
        for key, value in (("enable_dump", True), ("dump_path", path), ("dump_step", "0|1"), ("dump_mode", "all")):
            setattr(custom.parameter_map[key], "b" if isinstance(value, bool) else "s",
                    value if isinstance(value, bool) else value.encode())
        return proto


    init_graph = tf.Graph()
    with init_graph.as_default():
        ready = tf.constant(1.0, name="ready") * 2.0
    with v1.Session(graph=init_graph, config=config(sys.argv[1])) as sess:
        sess.run(ready)
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [64, 64], name="x")
        hidden = tf.nn.relu(tf.matmul(x, tf.constant(np.eye(64, dtype=np.float32)), name="layer/MatMul"))
        loss = tf.reduce_sum(tf.square(hidden), name="loss")
    sess = v1.Session(graph=graph, config=config(sys.argv[1]))
    for step in range(3):
        sess.run(loss, {x: np.ones((64, 64), np.float32)})
        time.sleep(0.3)  # the rest of a training step
    os._exit(0)  # killed: no session close, no exit handlers
    """
)


def run_killed(tmp_path, source):
    """Runs ``source`` (a script that dumps into argv[1] and ends by os._exit); returns (script path, op_sources.json,
    op_graph.json) of its dump root."""
    script = tmp_path / "killed.py"
    script.write_text(source, encoding="utf-8")
    (tmp_path / "dump").mkdir()
    ran = run_python(str(script), args=[str(tmp_path / "dump")], timeout=120)
    assert ran.returncode == 0, ran.stderr[-3000:]
    (root,) = [tmp_path / "dump" / name / "0" for name in os.listdir(tmp_path / "dump")]
    files = (overflow_records.SOURCES_FILE, op_graph.GRAPH_FILE)
    return (script, *(json.loads((root / name).read_text()) for name in files))


def line_of(source, marker):
    """The number of the first line of ``source`` holding ``marker``."""
    return 1 + next(n for n, text in enumerate(source.splitlines()) if marker in text)


@pytest.mark.slow
def test_a_process_killed_after_its_first_steps_leaves_the_creation_sites_of_their_ops(tmp_path):
    script, sources, graph = run_killed(tmp_path, KILLED_SCRIPT)
    assert sources.get("layer/MatMul") == f"{script}:{line_of(KILLED_SCRIPT, 'layer/MatMul')} in <module>", sources
    assert {"layer/MatMul", "loss"} <= set(graph) and graph["layer/MatMul"]["type"] == "MatMul"


KILLED_TF2_SCRIPT = textwrap.dedent(
    """\
    import os, sys, time
    import numpy as np
    import tensorflow as tf
    import npu_device

    npu_device.global_options().dump_config.enable_dump = True
    npu_device.global_options().dump_config.dump_path = sys.argv[1]
    npu_device.global_options().dump_config.dump_mode = "all"
    npu_device.open().as_default()


    @tf.function
    def step(x):
        return tf.reduce_sum(tf.nn.relu(tf.matmul(x, x, name="square")))


    for _ in range(3):
        step(tf.constant(np.ones((8, 8), np.float32)))
    time.sleep(4)  # the dump's watcher polls once a second
    os._exit(0)  # killed: no exit handlers
    """
)


@pytest.mark.slow
def test_a_killed_tf2_process_leaves_the_creation_sites_of_its_function_graphs_ops(tmp_path):
    script, sources, graph = run_killed(tmp_path, KILLED_TF2_SCRIPT)
    line = line_of(KILLED_TF2_SCRIPT, 'name="square"')
    assert sources.get("square") == f"{script}:{line} in step", sources
    assert graph["square"]["type"] == "MatMul"
