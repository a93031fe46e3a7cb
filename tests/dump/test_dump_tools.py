"""The npu-dump tools (CLI and Python API): convert, compare, overflow, info; on dumps written here and on
files laid out as Ascend's runtime writes them."""

import csv
import errno
import json
import os
import struct
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
from helpers.dump import artifacts, dump_config, feed, mlp_graph
from helpers.paths import REPO_ROOT

from npu_bridge.core import dump
from npu_bridge.core.dump import dump_compare, dump_file, dump_proto
from npu_bridge.core.dump.cli import main
from npu_bridge.core.runtime import safe_paths

v1 = tf.compat.v1
NPU_STEP = os.path.join("20240101000000", "0", "ge_default_20240101000000_1", "1", "0")


def run_training(path, perturb=None, steps=2):
    """Dumps ``steps`` training steps of mlp_graph; ``perturb`` adds noise to layer 2's weights."""
    path.mkdir()
    graph, x, y, parts = mlp_graph()
    with graph.as_default():
        noise = np.random.RandomState(7).normal(size=(5, 2)).astype(np.float32) * (perturb or 0.0)
        perturbation = parts["w2"].assign_add(noise)
    with v1.Session(graph=graph, config=dump_config(path, dump_mode="all")) as sess:
        sess.run(parts["init"])
        if perturb is not None:
            sess.run(perturbation)
        for step in range(steps):
            sess.run(parts["train"], feed(x, y, step))
    dump.flush()
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two identical training dumps and one whose layer 2 weights were perturbed."""
    base = tmp_path_factory.mktemp("runs")
    return {
        name: run_training(base / name, perturb) for name, perturb in (("a", None), ("b", None), ("perturbed", 0.8))
    }


def npu_tree(root):
    """A dump step directory laid out as Ascend's runtime writes it: a version 1 file, the newer file names
    (stream id first), a FRACTAL_NZ tensor and an Opdebug record."""
    step = root / NPU_STEP
    step.mkdir(parents=True)
    matrix = np.random.RandomState(3).normal(size=(20, 40)).astype(np.float16)
    padded = np.zeros((32, 48), np.float16)
    padded[:20, :40] = matrix
    nz = padded.reshape(2, 16, 3, 16).transpose(2, 0, 1, 3)
    dump_file.write_dump_file(
        step / "MatMul.dense_MatMul.0.7.1700000000000100.0.0.0.0",
        "dense/MatMul",
        inputs=[matrix[:, :3]],
        outputs=[nz],
        data_formats={("output", 0): (dump_proto.FORMAT_FRACTAL_NZ, matrix.shape)},
    )
    dump_file.write_dump_file(
        step / "Relu.dense_Relu.8.0.1700000000000200", "dense/Relu", outputs=[np.maximum(matrix, 0)], version=1
    )
    payload = bytearray(dump_file.OVERFLOW_PAYLOAD_SIZE)
    struct.pack_into("<6Q", payload, 256, 1, 0, 8, 0, 0, 0)
    struct.pack_into("<3Q", payload, 1024, 0, 0, 0x10)
    dump_file.write_dump_file(
        step / "Opdebug.Node_OpDebug.8.0.1700000000000201",
        "Node_OpDebug",
        outputs=[np.frombuffer(bytes(payload), np.uint8)],
    )
    return root, matrix


def test_convert_writes_one_npy_per_tensor_named_as_msaccucmp_does(runs, tmp_path, capsys):
    assert main(["convert", str(runs["a"]), "-o", str(tmp_path)]) == 0
    assert "wrote" in capsys.readouterr().out
    source = next(a for a in artifacts(runs["a"]) if a.name.op_name == "layer1_Tanh" and a.step == 1)
    relative = os.path.relpath(source.path, runs["a"])
    converted = np.load(tmp_path / f"{relative}.output.0.npy")
    np.testing.assert_array_equal(converted, dump.load(source.path).outputs[0].array())
    assert (tmp_path / f"{relative}.input.0.npy").exists()


def test_compare_of_identical_runs_finds_no_difference(runs, tmp_path, capsys):
    output = tmp_path / "result.csv"
    assert main(["compare", str(runs["a"]), str(runs["b"]), "-o", str(output)]) == 0
    out = capsys.readouterr().out
    assert "no tensor differs" in out and "no op diverges" in out and "at step 0" in out
    with open(output, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert tuple(rows[0]) == dump_compare.CSV_HEADER + ("Source",)  # the session wrote op_sources.json
    assert rows[0][:12] == [
        "Index",
        "OpSequence",
        "OpType",
        "NPUDump",
        "DataType",
        "Address",
        "GroundTruth",
        "DataType",
        "Address",
        "TensorIndex",
        "Shape",
        "OverFlow",
    ]
    body = {row[9]: row for row in rows[1:]}
    matmul = body["layer1/MatMul:output:0"]
    assert matmul[2] == "MatMul" and matmul[3] == matmul[6] == "layer1/MatMul" and matmul[4] == "DT_FLOAT"
    assert float(matmul[12]) == pytest.approx(1.0) and float(matmul[13]) == 0.0 and matmul[11] == "NO"


def test_compare_names_the_first_diverging_op(runs):
    comparison = dump.compare(runs["perturbed"], runs["a"], step=0)
    first = comparison.first_divergence
    assert first.key == ("layer2_MatMul", "output", 0) and first.mine.op_name == "layer2/MatMul"
    assert comparison.first_difference.key[0] == "layer2_MatMul"  # nothing before it differs
    earlier = [row for row in comparison.compared if row.sequence < first.sequence]
    assert earlier and all(row.identical for row in earlier)
    metrics = first.metrics
    mine = dump.load(first.mine.artifact.path).outputs[0].array().astype(np.float64).ravel()
    truth = dump.load(first.truth.artifact.path).outputs[0].array().astype(np.float64).ravel()
    cosine = mine @ truth / np.linalg.norm(mine) / np.linalg.norm(truth)
    assert metrics["CosineSimilarity"] == pytest.approx(cosine) and cosine < 0.99
    assert metrics["MaxAbsoluteError"] == pytest.approx(np.abs(mine - truth).max())
    assert metrics["RootMeanSquareError"] == pytest.approx(np.sqrt(np.mean((mine - truth) ** 2)))
    assert metrics["MeanRelativeError"] == pytest.approx(np.mean(np.abs(mine - truth) / np.abs(truth)))
    assert comparison.rows[0].diverged  # worst first
    summary = comparison.summary()
    assert f"first diverging op: #{first.sequence} layer2/MatMul output 0 (cosine" in summary


def test_a_real_npu_dump_compares_with_the_golden_files_of_a_run_here(tmp_path, capsys):
    root, matrix = npu_tree(tmp_path / "npu")
    golden = tmp_path / "golden"
    golden.mkdir()
    np.save(golden / "dense_MatMul.0.1700000000000000.npy", matrix)
    np.save(golden / "dense_Relu.0.1700000000000001.npy", np.maximum(matrix, 0) + np.float16(0.5))
    assert main(["compare", str(root), str(golden), "-o", str(tmp_path / "r.csv")]) == 1  # dense/Relu diverges
    out = capsys.readouterr().out
    assert "compared 2 tensors of 2 ops" in out and "first difference: #2 dense/Relu output 0" in out
    comparison = dump.compare(root, golden)
    matmul = next(row for row in comparison.rows if row.key[0] == "dense_MatMul" and row.key[1] == "output")
    assert matmul.identical and matmul.shape == "[20, 40]"  # the FRACTAL_NZ tensor was laid out again


def test_info_describes_files_and_trees(tmp_path, capsys):
    root, _ = npu_tree(tmp_path / "npu")
    step = root / NPU_STEP
    assert (
        main(
            [
                "info",
                str(step / "Relu.dense_Relu.8.0.1700000000000200"),
                str(step / "Opdebug.Node_OpDebug.8.0.1700000000000201"),
                str(root),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "Ascend dump file, version 1; op dense/Relu; type Relu" in out
    assert "output 0: DT_FLOAT16 ND [20, 40] 1600 bytes  min 0 max" in out
    assert "Opdebug overflow record" in out and "AI Core: model_id=1, stream_id=0, task_id=8" in out
    assert "status=16" in out
    assert "model ge_default_20240101000000_1/1, step 0: 2 dump, 1 opdebug" in out


def test_the_overflow_report_reads_ascend_records(tmp_path, capsys):
    root, _ = npu_tree(tmp_path / "npu")
    report = tmp_path / "report.txt"
    assert main(["overflow", str(root), "-o", str(report)]) == 1  # a finding
    out = capsys.readouterr().out
    assert "1 overflow records in 1 steps; the first overflowing op is [Relu] dense/Relu at step 0" in out
    assert "[AI Core][TaskId 8][StreamId 0][Status 0x10][Timestamp 1700000000000201]" in out
    assert "output 0: [Format ND][Shape [20, 40]][Dtype DT_FLOAT16]" in out
    assert report.read_text() in out


def test_convert_turns_opdebug_records_into_json_and_keeps_going_past_damage(tmp_path, capsys):
    root, _ = npu_tree(tmp_path / "npu")
    (root / NPU_STEP / "Add.broken.9.0.1700000000000300").write_bytes(b"\x05\x00\x00\x00\x00\x00\x00\x00abc")
    out_dir = tmp_path / "out"
    assert main(["convert", str(root), "-o", str(out_dir)]) == 2
    captured = capsys.readouterr()
    assert "cannot convert" in captured.err and "Add.broken.9.0.1700000000000300" in captured.err
    overflow = json.loads((out_dir / NPU_STEP / "Opdebug.Node_OpDebug.8.0.1700000000000201.output.0.json").read_text())
    assert overflow["AI Core"]["task_id"] == 8
    nz = np.load(out_dir / NPU_STEP / "MatMul.dense_MatMul.0.7.1700000000000100.0.0.0.0.output.0.npy")
    assert nz.shape == (20, 40)


def test_missing_and_damaged_inputs_fail_clearly(tmp_path, capsys):
    assert main(["compare", str(tmp_path / "nowhere"), str(tmp_path)]) == 2
    assert f"no such dump directory or file: {tmp_path / 'nowhere'}" in capsys.readouterr().err
    assert main(["overflow", str(tmp_path / "nowhere")]) == 2
    (tmp_path / "empty").mkdir()
    assert main(["convert", str(tmp_path / "empty"), "-o", str(tmp_path / "o")]) == 2
    assert "holds no dump files" in capsys.readouterr().err
    assert main(["overflow", str(tmp_path / "empty")]) == 2  # not "no overflow recorded"
    assert "holds no dump artifacts" in capsys.readouterr().err
    broken = tmp_path / "Mul.x.1.0.1700000000000000"
    broken.write_bytes(b"garbage!")
    assert main(["info", str(broken)]) == 2
    assert "not an Ascend dump file" in capsys.readouterr().err
    with pytest.raises(SystemExit) as usage:
        main(["compare", str(tmp_path)])
    assert usage.value.code == 2


def test_compare_asks_for_a_step_when_the_trees_share_none(runs, capsys):
    assert main(["compare", str(runs["a"]), str(runs["b"]), "--step", "9"]) == 2
    assert "step 9 is not in" in capsys.readouterr().err


@pytest.mark.slow
def test_the_module_runs_as_a_command(runs):
    result = subprocess.run(
        [sys.executable, "-m", "npu_bridge.core.dump.cli", "info", str(runs["a"])],
        env={**os.environ, "PYTHONPATH": REPO_ROOT},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "artifacts" in result.stdout and "step 1:" in result.stdout


def test_a_tree_deeper_than_any_dump_and_a_binary_mapping_are_refused_naming_the_path(tmp_path, capsys):
    deep = tmp_path / "deep"
    level = deep
    for _ in range(40):  # deeper than any dump tree
        level = level / "d"
    os.makedirs(level)
    (level / "Add.x.1.0.1700000000000000").write_bytes(b"garbage")
    assert main(["info", str(deep)]) == 2
    err = capsys.readouterr().err
    assert "is more than 32 directory levels below" in err and str(deep) in err and "Traceback" not in err
    step = tmp_path / "binary" / "0"
    step.mkdir(parents=True)
    (step / "mapping.csv").write_bytes(b"\xff\xfe\x00binary")
    assert main(["overflow", str(tmp_path / "binary")]) == 2
    assert f"{step / 'mapping.csv'}: cannot read it: it is not UTF-8 text" in capsys.readouterr().err


def test_compare_takes_msaccucmps_m_and_g_spellings(runs, tmp_path, capsys):
    output = tmp_path / "result.csv"
    assert main(["compare", "-m", str(runs["perturbed"]), "-g", str(runs["a"]), "-o", str(output)]) == 1
    by_flags = capsys.readouterr().out
    assert main(["compare", str(runs["perturbed"]), str(runs["a"]), "-o", str(output)]) == 1
    assert capsys.readouterr().out == by_flags and "first difference" in by_flags
    for argv, problem in (
        (["compare", "-m", str(runs["a"])], "the ground truth is missing"),
        (["compare", str(runs["a"]), str(runs["b"]), "-g", str(runs["a"])], "the ground truth is given twice"),
        (["compare", "-g", str(runs["a"])], "my dump is missing"),
    ):
        with pytest.raises(SystemExit) as usage:
            main(argv)
        assert usage.value.code == 2 and problem in capsys.readouterr().err


def test_compare_names_an_input_that_is_not_a_dump_without_scanning_its_directory(runs, tmp_path, capsys):
    deep = tmp_path / "deep"
    os.makedirs(deep.joinpath(*["d"] * 40))  # a directory next to the file, deeper than any dump tree
    text = tmp_path / "notes.txt"
    text.write_text("x\n")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for path, problem in (
        (text, "is not a dump file, Opdebug record or .npy file"),
        (fifo, "is a FIFO; give a dump tree"),
        (tmp_path / "missing" / "nope", "no such dump directory or file: "),
    ):
        assert main(["compare", str(path), str(runs["a"])]) == 2
        err = capsys.readouterr().err
        assert problem in err and str(path) in err and "deep" not in err
        assert main(["compare", str(runs["a"]), str(path), "-o", str(tmp_path / "r.csv")]) == 2
        err = capsys.readouterr().err
        assert "the ground truth" in err and str(path) in err
    assert not (tmp_path / "r.csv").exists()


@pytest.mark.timeout(120)
def test_output_files_that_are_not_regular_files_are_refused_before_the_work(runs, tmp_path, capsys):
    root, _ = npu_tree(tmp_path / "npu")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)  # nobody reads it: opening it for writing would block forever
    for target, kind in (
        (fifo, "it is a FIFO"),
        ("/dev/full", "it is a character device"),
        (tmp_path, "it is a directory"),
    ):
        for argv, what in (
            (["compare", str(runs["a"]), str(runs["b"])], "result CSV"),
            (["overflow", str(root)], "overflow report"),
        ):
            assert main([*argv, "-o", str(target)]) == 2
            captured = capsys.readouterr()
            assert f"npu-dump: cannot write the {what} {target}: {kind}" in captured.err
            assert captured.out == ""  # refused before comparing or reporting
    assert main(["overflow", str(root), "-o", str(tmp_path / "no_dir" / "r.txt")]) == 2
    assert f"its directory {tmp_path / 'no_dir'} does not exist" in capsys.readouterr().err


def test_output_files_are_written_atomically_and_write_errors_name_them(runs, tmp_path, capsys, monkeypatch):
    elsewhere = tmp_path / "elsewhere.csv"
    elsewhere.write_text("kept\n")
    link = tmp_path / "result.csv"
    link.symlink_to(elsewhere)
    assert main(["compare", str(runs["a"]), str(runs["b"]), "-o", str(link)]) == 0
    # The link is replaced by the result, never written through (artifact attacks:
    # tests/runtime/test_artifact_attacks.py).
    assert not link.is_symlink() and link.read_text().startswith("Index,") and elsewhere.read_text() == "kept\n"
    assert sorted(os.listdir(tmp_path)) == ["elsewhere.csv", "result.csv"]  # no temporary file left
    capsys.readouterr()
    before = link.read_bytes()

    class FullDisk:
        """A new file whose writes fail as on a full disk."""

        def __init__(self, file):
            self.file = file

        def __getattr__(self, name):
            return getattr(self.file, name)

        def write(self, data):
            raise OSError(errno.ENOSPC, "No space left on device")

    create_new = safe_paths.create_new
    monkeypatch.setattr(safe_paths, "create_new", lambda *args, **kwargs: FullDisk(create_new(*args, **kwargs)))
    for argv, what in (
        (["compare", str(runs["a"]), str(runs["b"])], "result CSV"),
        (["overflow", str(runs["a"])], "overflow report"),
    ):
        assert main([*argv, "-o", str(link)]) == 2
        assert f"npu-dump: cannot write the {what} {link}: No space left on device" in capsys.readouterr().err
    assert link.read_bytes() == before and sorted(os.listdir(tmp_path)) == ["elsewhere.csv", "result.csv"]
