"""Dumps go only where the user pointed, even when another user of the machine plants directories or symlinks
in the predictable dump tree: every directory below dump_path (and below the exception dump base) is created by
the writer or must be a real directory of this user, and is then held open, so swapping it for a symlink later
sends nothing elsewhere; a {time} directory someone else made is passed over for a new one; files are created
without following symlinks and renamed into place; a dump_path everyone can write without the sticky bit is
refused; and tensor data is owner-only by default.

Planting another user's directories needs a second user: those tests run as root and hand what "the other user"
plants to uid 65534 with ``os.lchown``; they skip when not run as root. Swapping a directory of ours for a
symlink needs no second user."""

import json
import os
import re
import stat
import time

import numpy as np
import pytest
import tensorflow as tf
from helpers.config import npu_config
from helpers.dump import artifacts, dump_config, feed, mlp_graph, train
from helpers.processes import run_python
from test_exception_dump import lookup_graph
from test_overflow_detection import debug_config, exploding_graph

from npu_bridge.core import dump
from npu_bridge.core.dump import cli, dump_root, dump_status, dump_writer, overflow_records
from npu_bridge.core.runtime import safe_paths
from npu_bridge.core.runtime.errors import EnvironmentVariableError, NpuOptionError

v1 = tf.compat.v1

OTHER_USER = 65534  # nobody
SECRET = b"root's own data\n"
SECONDS_PLANTED = 90  # the attacker pre-creates the {time} directories of the next seconds
REPORT_FILES = {dump_status.STATUS_FILE, overflow_records.REPORT_FILE, overflow_records.SOURCES_FILE}

needs_root = pytest.mark.skipif(
    os.geteuid() != 0, reason="planting another user's files needs root (os.lchown to uid 65534)"
)


def as_other_user(path):
    os.lchown(path, OTHER_USER, OTHER_USER)


def shared_directory(tmp_path):
    """A directory every user may create entries in, like /tmp (mode 1777)."""
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    return shared


def victim(tmp_path):
    """Root's private directory (0700) with a private file (0600): what the attacker wants overwritten."""
    directory = tmp_path / "victim"
    directory.mkdir()
    os.chmod(directory, 0o700)
    secret = directory / "secret"
    secret.write_bytes(SECRET)
    os.chmod(secret, 0o600)
    return directory, secret


def snapshot(directory):
    """{relative path: (mode, content)} of everything below ``directory``."""
    found = {}
    for top, dirs, files in os.walk(directory):
        for name in dirs + files:
            path = os.path.join(top, name)
            info = os.lstat(path)
            content = open(path, "rb").read() if stat.S_ISREG(info.st_mode) else None
            found[os.path.relpath(path, directory)] = (info.st_mode, info.st_uid, content)
    return found


@pytest.fixture(name="umask_022")
def fixture_umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def plant_time_directories(shared, victim_dir, secret, plant, now):
    """The attacker pre-creates the {time} directories of the next seconds in ``shared`` (as uid 65534).

    Returns:
      {real path: snapshot} of what was planted.
    """
    planted = {}
    for second in range(-1, SECONDS_PLANTED):
        stamp = time.strftime("%Y%m%d%H%M%S", time.localtime(now + second))
        names = [stamp] + [f"{stamp}.{n}" for n in range(1, 10)] * (plant == "numbered names too")
        for name in names:
            time_dir = shared / name
            if time_dir.exists():
                continue
            time_dir.mkdir()
            os.chmod(time_dir, 0o777)
            as_other_user(time_dir)
            device = time_dir / "0"
            if plant == "device directory is a symlink":
                os.symlink(victim_dir, device)
            else:
                device.mkdir()
                os.chmod(device, 0o777)
                for name in (dump_status.STATUS_FILE, "statistic.csv"):
                    os.symlink(secret, device / name)
                    as_other_user(device / name)
            as_other_user(device)
            planted[os.path.realpath(time_dir)] = snapshot(time_dir)
    return planted


def dumped_ops(directory):
    """{(op type, op name)} of the dump files below ``directory`` (after waiting for the writer)."""
    return {(a.name.op_type, a.name.op_name) for a in artifacts(directory)}


@needs_root
@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    "plant", ["device directory is a symlink", "directories are the other user's", "numbered names too"]
)
def test_squatted_time_directories_are_passed_over_for_a_new_one_and_nothing_is_lost(
    plant, tmp_path, monkeypatch, npu_log, capsys
):
    shared = shared_directory(tmp_path)
    victim_dir, secret = victim(tmp_path)
    # The {time} of this process's dumps is the second its first dumping session is created: the next one here.
    monkeypatch.setitem(dump_root._state, "time", None)
    planted = plant_time_directories(shared, victim_dir, secret, plant, time.time())
    victim_before = snapshot(victim_dir)
    lost_before = dump_writer.status()["files_lost"]

    losses = train(dump_config(shared, dump_mode="all"))

    assert len(losses) == 2 and np.all(np.isfinite(losses))
    stamp = dump_root.process_time()
    squatted = os.path.join(os.path.realpath(shared), stamp)
    assert squatted in planted, "the session's {time} was not one the attacker planted"
    (time_dir,) = [d for d in os.listdir(shared) if os.path.realpath(shared / d) not in planted]
    if plant == "numbered names too":
        assert re.fullmatch(rf"{stamp}\.[0-9a-f]{{8}}", time_dir), time_dir
    else:
        assert time_dir == f"{stamp}.1"
    assert os.lstat(shared / time_dir).st_uid == os.geteuid()
    assert snapshot(victim_dir) == victim_before and secret.read_bytes() == SECRET
    assert {path: snapshot(path) for path in planted} == planted  # nothing written into the attacker's tree
    assert dump_writer.status()["files_lost"] == lost_before
    root = shared / time_dir / "0"
    steps = {a.step for a in artifacts(root)}
    assert steps == {0, 1} and ("MatMul", "layer1_MatMul") in dumped_ops(root)
    with open(root / dump_status.STATUS_FILE, encoding="utf-8") as f:
        assert json.load(f)["state"] == "complete"
    capsys.readouterr()
    assert cli.main(["info", str(shared / time_dir)]) == 0
    out = capsys.readouterr().out
    assert str(shared / time_dir) in out and re.search(r"step 1: \d+ dump", out), out
    why = f"refusing to write into {shared / stamp}: it belongs to user id {OTHER_USER}"
    assert any(why in m and f"this process dumps into {shared / time_dir} instead" in m for m in npu_log), npu_log


def swap_for_symlink(directory, target):
    """Renames ``directory`` away (to {name}.moved) and puts a symlink to ``target`` at its path."""
    moved = f"{directory}.moved"
    os.rename(directory, moved)
    os.symlink(target, directory)
    return moved


@pytest.mark.timeout(300)
@pytest.mark.parametrize("swapped", ["{time}", "{model}"])
def test_a_dump_directory_swapped_for_a_symlink_mid_job_keeps_getting_the_files(swapped, tmp_path):
    shared = shared_directory(tmp_path)
    victim_dir, secret = victim(tmp_path)
    lost_before = dump_writer.status()["files_lost"]
    graph, x, y, parts = mlp_graph()
    with v1.Session(graph=graph, config=dump_config(shared, dump_mode="all")) as sess:
        sess.run(parts["init"])
        sess.run([parts["loss"], parts["train"]], feed(x, y, 0))
        dump.flush()
        (step0,) = {os.path.dirname(a.path) for a in artifacts(shared) if a.name.op_name == "layer1_MatMul"}
        model_dir = os.path.dirname(os.path.dirname(step0))  # {time}/{device}/{model}/{model id}/0
        time_dir = os.path.dirname(os.path.dirname(model_dir))
        # Root's private directory, shaped like the tree, so that a write through the symlink would succeed.
        swapped_dir = time_dir if swapped == "{time}" else model_dir
        target = victim_dir / "tree"
        for step in ("0", "1", "2"):
            os.makedirs(target / os.path.relpath(os.path.dirname(step0), swapped_dir) / step, mode=0o700)
        victim_before = snapshot(victim_dir)
        moved = swap_for_symlink(swapped_dir, target)
        sess.run([parts["loss"], parts["train"]], feed(x, y, 1))
        sess.run([parts["loss"], parts["train"]], feed(x, y, 2))
    dump.flush()

    assert snapshot(victim_dir) == victim_before and secret.read_bytes() == SECRET
    assert dump_writer.status()["files_lost"] == lost_before
    moved_time_dir = moved if swapped == "{time}" else time_dir
    by_step = {}
    model_id = os.path.basename(os.path.dirname(step0))
    for a in artifacts(moved_time_dir):
        if os.path.basename(os.path.dirname(os.path.dirname(a.path))) == model_id:  # the training graph's
            by_step.setdefault(a.step, set()).add((a.name.op_type, a.name.op_name))
    assert sorted(by_step) == [0, 1, 2] and by_step[0] == by_step[1] == by_step[2], by_step
    with open(os.path.join(moved_time_dir, "0", dump_status.STATUS_FILE), encoding="utf-8") as f:
        assert json.load(f)["state"] == "complete"


@pytest.mark.timeout(300)
def test_an_exception_dump_directory_swapped_for_a_symlink_keeps_getting_the_files(tmp_path, monkeypatch):
    shared = shared_directory(tmp_path)
    victim_dir, secret = victim(tmp_path)
    (victim_dir / "data-dump" / "0").mkdir(parents=True, mode=0o700)  # shaped like the tree
    monkeypatch.delenv("NPU_COLLECT_PATH", raising=False)
    monkeypatch.setenv("ASCEND_WORK_PATH", str(shared))
    graph, params, indices, total = lookup_graph()
    values = np.arange(6, dtype=np.float32).reshape(3, 2)
    with v1.Session(graph=graph, config=npu_config(enable_exception_dump=1)) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="were written to"):
            sess.run(total, {params: values, indices: [0, 5]})
        victim_before = snapshot(victim_dir)
        moved = swap_for_symlink(shared / "extra-info", victim_dir)
        with pytest.raises(tf.errors.InvalidArgumentError, match="were written to"):
            sess.run(total, {params: values, indices: [0, 7]})
    assert snapshot(victim_dir) == victim_before and secret.read_bytes() == SECRET
    assert len(os.listdir(os.path.join(moved, "data-dump", "0"))) == 2


@pytest.mark.timeout(120)
@pytest.mark.parametrize("sticky", [False, True], ids=["not sticky", "sticky"])
@pytest.mark.parametrize("which", ["dump_path", "exception dump base", "profiling output"])
def test_a_dump_path_everyone_can_write_without_the_sticky_bit_is_refused_at_session_creation(
    which, sticky, tmp_path, monkeypatch
):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777 if sticky else 0o777)
    monkeypatch.delenv("NPU_COLLECT_PATH", raising=False)
    monkeypatch.setenv("ASCEND_WORK_PATH", str(shared if which == "exception dump base" else tmp_path))
    options = {
        "dump_path": {"enable_dump": True, "dump_path": str(shared)},
        "exception dump base": {"enable_exception_dump": 1},
        "profiling output": {"profiling_mode": True, "profiling_options": f'{{"output": "{shared}"}}'},
    }[which]
    if sticky:  # a shared directory like /tmp is allowed: what others plant in it is passed over or refused
        v1.Session(graph=tf.Graph(), config=npu_config(**options)).close()
        return
    with pytest.raises(NpuOptionError) as raised:
        v1.Session(graph=tf.Graph(), config=npu_config(**options))
    message = str(raised.value)
    assert f"{shared} (mode 0777) can be written by every user and has no sticky bit" in message, message
    assert f"chmod o-w {shared}" in message and "chmod +t" in message
    assert not os.listdir(shared)  # nothing was made there


@pytest.mark.timeout(300)
@pytest.mark.usefixtures("umask_022")
def test_symlinks_planted_at_file_names_in_our_directories_are_replaced_not_followed(tmp_path):
    victim_dir, secret = victim(tmp_path)
    victim_before = snapshot(victim_dir)
    dump_path = tmp_path / "dump"
    dump_path.mkdir()
    graph, x, y, parts = mlp_graph()
    with v1.Session(graph=graph, config=dump_config(dump_path, dump_data="stats")) as sess:
        sess.run(parts["init"])
        sess.run([parts["loss"], parts["train"]], feed(x, y, 0))
        dump.flush()
        (step0,) = [
            top
            for top, _, files in os.walk(dump_path)
            if "statistic.csv" in files and "layer1/MatMul" in open(os.path.join(top, "statistic.csv")).read()
        ]
        root = os.path.dirname(os.path.dirname(os.path.dirname(step0)))  # {root}/{model name}/{model id}/0
        step1 = os.path.join(os.path.dirname(step0), "1")
        os.mkdir(step1, 0o700)
        # The names the writer used to write through: the appended file itself and its fixed temporary names.
        for directory, names in (
            (step1, ("statistic.csv", ".tmp.statistic.csv", ".tmp.mapping.csv")),
            (root, (dump_status.STATUS_FILE, f".tmp.{os.getpid()}.{dump_status.STATUS_FILE}")),
        ):
            for name in names:
                path = os.path.join(directory, name)
                if os.path.lexists(path):  # dump_status.json says "running" since the session started
                    os.unlink(path)
                os.symlink(secret, path)
        sess.run([parts["loss"], parts["train"]], feed(x, y, 1))
    dump.flush()

    assert snapshot(victim_dir) == victim_before and secret.read_bytes() == SECRET
    statistic = os.path.join(step1, "statistic.csv")
    assert stat.S_ISREG(os.lstat(statistic).st_mode)  # the link was replaced by the file
    assert stat.S_IMODE(os.lstat(statistic).st_mode) == 0o600  # owner-only, as every file of tensor data
    with open(statistic, encoding="utf-8") as f:
        rows = f.read()
    assert rows.startswith("Op Type,") and "layer1/MatMul" in rows and SECRET.decode() not in rows
    status_path = os.path.join(root, dump_status.STATUS_FILE)
    assert stat.S_ISREG(os.lstat(status_path).st_mode)
    with open(status_path, encoding="utf-8") as f:
        assert json.load(f)["state"] == "complete"


@needs_root
@pytest.mark.timeout(300)
@pytest.mark.parametrize("plant", ["symlink", "another user's directory"])
def test_an_exception_dump_base_with_planted_directories_writes_nothing_there(plant, tmp_path, monkeypatch):
    shared = shared_directory(tmp_path)
    victim_dir, secret = victim(tmp_path)
    victim_before = snapshot(victim_dir)
    extra_info = shared / "extra-info"
    if plant == "symlink":
        os.symlink(victim_dir, extra_info)
        refused = f"refusing to write into {extra_info}: it is a symlink"
    else:
        extra_info.mkdir()
        os.chmod(extra_info, 0o777)
        os.symlink(victim_dir, extra_info / "data-dump")
        as_other_user(extra_info / "data-dump")
        refused = f"refusing to write into {extra_info}: it belongs to user id {OTHER_USER}"
    as_other_user(extra_info)
    monkeypatch.delenv("NPU_COLLECT_PATH", raising=False)
    monkeypatch.setenv("ASCEND_WORK_PATH", str(shared))
    graph, params, indices, total = lookup_graph()
    values = np.arange(6, dtype=np.float32).reshape(3, 2)
    with v1.Session(graph=graph, config=npu_config(enable_exception_dump=1)) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as raised:
            sess.run(total, {params: values, indices: [0, 5]})
        assert sess.run(total, {params: values, indices: [0, 1]}) == pytest.approx(np.sin(values[:2]).sum())
    message = str(raised.value)
    assert "indices[1] = 5 is not in [0, 3)" in message  # TensorFlow's error is kept
    assert "the inputs of lookup were not captured" in message and refused in message, message
    assert snapshot(victim_dir) == victim_before and secret.read_bytes() == SECRET


@pytest.fixture(name="data_mode")
def fixture_data_mode(monkeypatch):
    """Sets NPU_BRIDGE_DATA_MODE for the test (None: unset); the writer gets the default back afterwards."""

    def set_mode(text):
        if text is None:
            monkeypatch.delenv(safe_paths.DATA_MODE_VARIABLE, raising=False)
        else:
            monkeypatch.setenv(safe_paths.DATA_MODE_VARIABLE, text)

    yield set_mode
    monkeypatch.delenv(safe_paths.DATA_MODE_VARIABLE, raising=False)
    dump_writer.configure_from_environment()


def modes_below(top):
    """({directory: mode}, {file: mode}) of everything below ``top`` (not ``top`` itself)."""
    dirs, files = {}, {}
    for parent, dir_names, file_names in os.walk(top):
        for name in dir_names:
            dirs[os.path.join(parent, name)] = stat.S_IMODE(os.lstat(os.path.join(parent, name)).st_mode)
        for name in file_names:
            files[os.path.join(parent, name)] = stat.S_IMODE(os.lstat(os.path.join(parent, name)).st_mode)
    return dirs, files


def dump_dump_and_overflow(tmp_path):
    """Dumps a training run (dump files, golden .npy) and an overflow (Opdebug records) under tmp_path (the
    statistic.csv of dump_data=stats, an init option fixed per process, is checked by another test)."""
    train(dump_config(tmp_path / "dump", dump_mode="all"), steps=1)
    graph, x, scale, _, train_op, init = exploding_graph()
    with v1.Session(graph=graph, config=debug_config(tmp_path / "overflow")) as sess:
        sess.run(init)
        sess.run(train_op, {x: np.ones(4, np.float32), scale: 1000.0})
    dump.flush()


@pytest.mark.timeout(300)
@pytest.mark.usefixtures("umask_022")
@pytest.mark.parametrize("mode_text, file_mode, directory_mode", [(None, 0o600, 0o700), ("640", 0o640, 0o750)])
def test_dumped_tensor_data_is_owner_only_unless_npu_bridge_data_mode_widens_it(
    mode_text, file_mode, directory_mode, tmp_path, data_mode
):
    data_mode(mode_text)
    tops = [tmp_path / name for name in ("dump", "overflow")]
    for top in tops:
        top.mkdir()
    dump_dump_and_overflow(tmp_path)
    dirs, files = {}, {}
    for top in tops:
        below = modes_below(top)
        dirs.update(below[0])
        files.update(below[1])
    data = {path: mode for path, mode in files.items() if os.path.basename(path) not in REPORT_FILES}
    names = [os.path.basename(path) for path in data]
    assert any(n.endswith(".npy") for n in names) and any(n.startswith("MatMul.") for n in names)
    assert any(n.startswith("Opdebug.") for n in names)
    assert set(data.values()) == {file_mode}, {p: oct(m) for p, m in data.items() if m != file_mode}
    assert set(dirs.values()) == {directory_mode}, {p: oct(m) for p, m in dirs.items() if m != directory_mode}


@pytest.mark.timeout(300)
@pytest.mark.usefixtures("umask_022")
def test_exception_dumps_are_owner_only_by_default(tmp_path, monkeypatch, data_mode):
    data_mode(None)
    monkeypatch.delenv("NPU_COLLECT_PATH", raising=False)
    monkeypatch.setenv("ASCEND_WORK_PATH", str(tmp_path))
    graph, params, indices, total = lookup_graph()
    with v1.Session(graph=graph, config=npu_config(enable_exception_dump=1)) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="were written to"):
            sess.run(total, {params: np.zeros((3, 2), np.float32), indices: [0, 5]})
    dirs, files = modes_below(tmp_path)
    assert len(files) == 1 and set(files.values()) == {0o600}
    assert sorted(os.path.relpath(d, tmp_path) for d in dirs) == [
        "extra-info",
        "extra-info/data-dump",
        "extra-info/data-dump/0",
    ]
    assert set(dirs.values()) == {0o700}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("text", ["777", "rw-r-----", "0o600", "60", "1600", "６００"])
@pytest.mark.parametrize(
    "options",
    [{"enable_dump": True}, {"enable_dump_debug": True}, {"enable_exception_dump": 1}],
    ids=["dump", "overflow", "exception dump"],
)
def test_a_bad_npu_bridge_data_mode_is_an_error_when_the_session_is_created(
    text, options, tmp_path, monkeypatch, data_mode
):
    data_mode(text)
    monkeypatch.setenv("ASCEND_WORK_PATH", str(tmp_path))
    with pytest.raises(EnvironmentVariableError, match=r"NPU_BRIDGE_DATA_MODE=.*octal file mode") as raised:
        v1.Session(graph=tf.Graph(), config=npu_config(dump_path=str(tmp_path), **options))
    assert len(str(raised.value)) < 1024
    assert not os.listdir(tmp_path)  # nothing was written for the refused session


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_npu_device_open_refuses_a_dump_path_everyone_can_write_without_the_sticky_bit(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    result = run_python(
        f"""
        import npu_device
        npu_device.global_options().dump_config.enable_dump = True
        npu_device.global_options().dump_config.dump_path = {str(shared)!r}
        npu_device.open()
        """
    )
    assert result.returncode == 1, result.stderr
    assert f"{shared} (mode 0777) can be written by every user and has no sticky bit" in result.stderr
    assert not os.listdir(shared)


def open_directories_below(top):
    """The paths of this process's open descriptors that lie below ``top``."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(f"{top}{os.sep}"):
            found.append(target)
    return found


@pytest.mark.timeout(300)
def test_the_writer_keeps_a_bounded_number_of_directories_open_across_many_steps(tmp_path):
    steps = 100
    train(dump_config(tmp_path, dump_layer="layer1/MatMul"), steps=steps)
    held = open_directories_below(os.path.realpath(tmp_path))
    assert 0 < len(held) <= 70, held  # 64 step directories at most, and the directories that hold them
    dumped = {a.step for a in artifacts(tmp_path) if a.name.op_name == "layer1_MatMul"}
    assert dumped == set(range(steps))
