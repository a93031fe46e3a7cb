"""Full and vanishing disks: training goes on, the overflow signal survives, every lost file is counted and
reported, and nothing partial is presented as complete. The disks are small tmpfs mounts (root only)."""

import errno
import json
import os
import re
import shutil
import subprocess

import numpy as np
import pytest
import tensorflow as tf
from helpers.dump import dump_config, feed, mlp_graph, train
from helpers.paths import TESTS_DIR
from helpers.processes import run_python
from test_overflow_detection import debug_config, exploding_graph

from npu_bridge.core import dump
from npu_bridge.core.dump import (
    cli,
    dump_file,
    dump_reports,
    dump_status,
    dump_tree,
    dump_writer,
    overflow_records,
    writer_watch,
)

v1 = tf.compat.v1


@pytest.fixture
def small_disk(tmp_path):
    """Mounts a tmpfs of the size the test asks for; yields a function size -> mount point."""
    mounted = []
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("a small disk needs root and mount(8) to mount a tmpfs")

    def make(size):
        point = tmp_path / f"disk{len(mounted)}"
        point.mkdir()
        result = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(point)], check=False)
        if result.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here (mount exit {result.returncode})")
        mounted.append(point)
        return point

    yield make
    for point in mounted:
        subprocess.run(["umount", "-l", str(point)], check=False)


def fill(disk):
    """Writes a filler file until the disk is full; returns its path."""
    path = disk / "filler"
    with open(path, "wb", buffering=0) as f:  # unbuffered: nothing left to flush when the file is closed
        try:
            while True:
                f.write(b"\0" * 4096)
        except OSError as e:
            assert e.errno == errno.ENOSPC
    return path


def root_of(dump_path):
    (time_dir,) = [name for name in os.listdir(dump_path) if name.isdigit()]
    (device,) = os.listdir(os.path.join(dump_path, time_dir))
    return os.path.join(dump_path, time_dir, device)


def test_a_disk_that_fills_up_loses_files_not_training_and_says_how_much(small_disk, npu_log, capsys):
    disk = small_disk("640k")
    errors_before = dump_writer.status()["error_count"]
    losses = train(dump_config(disk, dump_mode="all"), steps=12)
    assert len(losses) == 12 and np.all(np.isfinite(losses))  # training went on
    assert dump_writer.status()["error_count"] > errors_before

    root = root_of(disk)
    status = dump_status.read(os.path.join(root, dump_status.STATUS_FILE))
    assert status["state"] == "incomplete" and status["files_lost"] > 0
    lost_steps = {int(os.path.basename(step)) for step in status["lost_steps"]}
    assert lost_steps and max(lost_steps) == 11  # the disk stayed full to the end
    assert sum(status["lost_steps"].values()) == status["files_lost"]
    # One line when the first file is lost, one summary when the session ends: no line per step (and at most one
    # saying that op_sources.json, retried at every scan, could not be written).
    assert len([m for m in npu_log if "op_sources.json could not be written" in m]) <= 1
    lost_lines = [m for m in npu_log if "could not be written" in m and "op_sources.json" not in m]
    assert len(lost_lines) == 2, lost_lines
    assert f"the dump in {root} is incomplete: {status['files_lost']} files could not be written" in lost_lines[1]
    assert named_lost_steps(lost_lines[1]) == (min(lost_steps), sorted(lost_steps)[:5], max(0, len(lost_steps) - 5))
    # What is on disk is whole: every file decodes, no temporary file is left.
    for artifact in dump_tree.scan(root):
        dump_file.load(artifact.path)
    assert not [name for _, files in dump_tree.walk(root) for name in files if name.startswith(".tmp.")]

    capsys.readouterr()
    assert cli.main(["info", root]) == cli.EXIT_FINDING
    out = capsys.readouterr().out
    flagged = {line for line in out.splitlines() if "INCOMPLETE" in line}
    assert len(flagged) == len(lost_steps)
    assert all("files could not be written" in line for line in flagged)
    # Steps that fit are listed, not flagged. Which ones fit depends on how the writer threads interleave.
    kept = sorted(set(range(12)) - lost_steps)
    assert kept, lost_steps
    assert [line for line in out.splitlines() if f", step {kept[0]}:" in line and "INCOMPLETE" not in line]


def named_lost_steps(message):
    """(first lost step, the steps the directories named in an incomplete-dump message end in, the "N more")."""
    match = re.search(r"step directories, the first lost step is (\d+): (.*?)(?: and (\d+) more)?\)", message)
    assert match, message
    named = [int(os.path.basename(directory)) for directory in match.group(2).split(", ")]
    return int(match.group(1)), named, int(match.group(3) or 0)


def test_the_incomplete_dump_message_names_the_lost_steps_in_step_order(tmp_path, npu_log):
    root = str(tmp_path / "20240101000000" / "0")
    report = dump_reports.RootReport(root, str(tmp_path))
    steps = [100, 11, 5, 10, *range(200, 296)]
    status = {
        "lost_dirs": {os.path.join(root, "ge_default", "1", str(step)): 2 for step in steps},
        "unwritten_files": [],
        "lost_dirs_dropped": 0,
        "errors": ["No space left on device"],
        "last_error": "No space left on device",
    }
    report.finish(status, exiting=True)
    (message,) = [m for m in npu_log if "is incomplete" in m]
    assert (
        "200 files could not be written (in 100 step directories, the first lost step is 5: "
        "ge_default/1/5, ge_default/1/10, ge_default/1/11, ge_default/1/100, ge_default/1/200 and 95 more); "
    ) in message

    npu_log.clear()
    report = dump_reports.RootReport(root, str(tmp_path))
    status["lost_dirs"] = {os.path.join(root, "ge_default", "1", name): 1 for name in ("5", "10", "11", "100", "x")}
    report.finish(status, exiting=True)
    (message,) = [m for m in npu_log if "is incomplete" in m]
    assert "the first lost step is 5: ge_default/1/5, ge_default/1/10, ge_default/1/11, ge_default/1/100, " in message
    assert "ge_default/1/x)" in message and " more" not in message  # a name that is not a step comes last


def test_the_overflow_signal_survives_a_full_disk(small_disk, npu_log):
    disk = small_disk("256k")
    filler = None
    graph, x, scale, loss, train_op, init = exploding_graph()
    with v1.Session(graph=graph, config=debug_config(disk)) as sess:
        sess.run(init)
        filler = fill(disk)
        losses = []
        for step in range(3):
            feed_dict = {x: np.linspace(0.5, 1.0, 4).astype(np.float32), scale: 1000.0 if step == 1 else 1.0}
            losses.append(sess.run([loss, train_op], feed_dict)[0])  # a full disk does not stop training
        writer_watch.poll(final=True)
        root = root_of(disk)
        assert any("overflow detected: [Exp] explode at step 1 overflowed first" in m for m in npu_log)
        assert any(f"overflow: the report in {root} could not be written" in m for m in npu_log)
        os.unlink(filler)  # the disk has room again: the report is written when the session closes
    assert np.all(np.isfinite(losses))
    with open(os.path.join(root, overflow_records.REPORT_FILE), encoding="utf-8") as f:
        report = f.read()
    assert "1 overflow records in 1 steps; the first overflowing op is [Exp] explode at step 1" in report
    assert "files: none (they could not be written)" in report


def test_statistics_are_never_left_empty_and_are_written_once_the_disk_has_room(small_disk):
    disk = small_disk("256k")
    graph, x, y, parts = mlp_graph()
    with v1.Session(graph=graph, config=dump_config(disk, dump_data="stats")) as sess:
        sess.run(parts["init"])
        filler = fill(disk)
        for step in range(2):
            sess.run([parts["loss"], parts["train"]], feed(x, y, step))
        dump.flush()
        csvs = [os.path.join(d, n) for d, files in dump_tree.walk(disk) for n in files if n == "statistic.csv"]
        assert all(os.path.getsize(path) > 0 for path in csvs)  # none cut or empty: absent until it can be whole
        assert dump_writer.status()["unwritten_files"]
        os.unlink(filler)
    dump.flush()
    csvs = sorted(os.path.join(d, n) for d, files in dump_tree.walk(disk) for n in files if n == "statistic.csv")
    assert len(csvs) >= 2
    for path in csvs:
        with open(path, encoding="utf-8") as f:
            rows = f.read().splitlines()
        assert rows[0].startswith("Op Type,") and len(rows) > 5
    status = dump_status.read(os.path.join(root_of(disk), dump_status.STATUS_FILE))
    assert status["state"] == "complete" and not status["unwritten_files"]


def test_later_errors_are_logged_with_the_latest_file_not_a_stale_one(small_disk, npu_log, monkeypatch):
    disk = small_disk("256k")
    graph, x, y, parts = mlp_graph()
    with v1.Session(graph=graph, config=dump_config(disk)) as sess:
        sess.run(parts["init"])
        fill(disk)
        monkeypatch.setattr(writer_watch, "ERROR_LOG_INTERVAL_SECONDS", 0.0)
        for step in range(4):
            sess.run(parts["train"], feed(x, y, step))
            dump.flush()
            writer_watch.poll()
    status = dump_writer.status()
    assert status["error_count"] > 20 and len(status["errors"]) == 20
    later = [m for m in npu_log if "more dump writes failed" in m]
    assert later and later[-1].endswith(status["last_error"])
    assert status["last_error"] not in status["errors"]  # a file of the last step, not the 20th message


def test_a_killed_writer_leaves_its_newest_step_flagged(tmp_path, capsys):
    script = f"""
import os, sys
sys.path.insert(0, {TESTS_DIR!r})
import tensorflow as tf
from helpers.dump import dump_config, feed, mlp_graph
from npu_bridge.core import dump
graph, x, y, parts = mlp_graph()
sess = tf.compat.v1.Session(graph=graph, config=dump_config({str(tmp_path)!r}))
sess.run(parts["init"])
for step in range(3):
    sess.run(parts["train"], feed(x, y, step))
dump.flush()
os._exit(0)  # as a killed process: no session close, no exit handlers
"""
    result = run_python(script, timeout=240)
    assert result.returncode == 0, result.stderr
    root = root_of(tmp_path)
    assert json.load(open(os.path.join(root, dump_status.STATUS_FILE), encoding="utf-8"))["state"] == "running"
    capsys.readouterr()
    assert cli.main(["info", str(tmp_path)]) == cli.EXIT_FINDING
    flagged = [line for line in capsys.readouterr().out.splitlines() if "INCOMPLETE" in line]
    assert len(flagged) == 1 and "step 2:" in flagged[0] and "has not finished" in flagged[0]
