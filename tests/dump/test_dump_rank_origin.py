"""npu-dump origin: the rank, step and op where a job's first inf/NaN came from, followed through the collectives;
on a 2-rank job and on trees laid out as the ranks write them. The 2-rank job, and npu-dump on its dumps, also run as
an unprivileged user (``helpers.unprivileged_users``): the dumps are theirs and owner-only."""

import json
import os
import stat
import struct
import sys
import zlib

import helpers.collectives
import helpers.unprivileged_users
import numpy as np
import pytest
from helpers.paths import WORKERS

from npu_bridge.core.dump import dump_file, dump_status, op_graph, overflow_records, rank_origin, rank_trees
from npu_bridge.core.dump.cli import main
from npu_bridge.core.runtime.errors import DumpTreeError

MODEL = os.path.join("ge_default_20260101120000_3", "3")
FINITE = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
NAN = np.array([0.0, np.nan, 1.1, 1.4], np.float32)


def write_op(root, device, step, op_type, op_name, timestamp, inputs=(), outputs=(), time_dir="20260101120000"):
    """Writes one dump file as a rank's session lays it out: {root}/{time}/{device}/{model}/{model id}/{step}/."""
    step_dir = os.path.join(root, time_dir, str(device), MODEL, str(step))
    os.makedirs(step_dir, exist_ok=True)
    task = zlib.crc32(op_name.encode()) % 1000 + 1
    path = os.path.join(step_dir, f"{op_type}.{op_name.replace('/', '_')}.{task}.0.{timestamp}")
    dump_file.write_dump_file(path, op_name, inputs=inputs, outputs=outputs)
    return task


def write_record(root, device, step, task, timestamp, status, time_dir="20260101120000"):
    """Writes an Opdebug overflow record of the op with task id ``task`` (AI Core status word ``status``)."""
    payload = bytearray(dump_file.OVERFLOW_PAYLOAD_SIZE)
    struct.pack_into("<6Q", payload, 256, 3, 0, task, 0, 0, 0)
    struct.pack_into("<3Q", payload, 1024, 0, 0, status)
    step_dir = os.path.join(root, time_dir, str(device), MODEL, str(step))
    dump_file.write_dump_file(
        os.path.join(step_dir, f"Opdebug.Node_OpDebug.{task}.0.{timestamp}"),
        "Node_OpDebug",
        outputs=[np.frombuffer(bytes(payload), np.uint8)],
    )


def write_side_file(root, device, name, content, time_dir="20260101120000"):
    with open(os.path.join(root, time_dir, str(device), name), "w", encoding="utf-8") as f:
        json.dump(content, f)


def planted_job(root, rank_1_input=None, with_inputs=True):
    """Two ranks, step 1: rank 1's log makes a NaN that reaches rank 0 through HcomAllReduce (timestamps in
    execution order; the allreduce finishes on both ranks after rank 1's log)."""
    bad_input = np.array([1.0, -1.0, 3.0, 4.0], np.float32) if rank_1_input is None else rank_1_input
    for device, x in ((0, FINITE), (1, bad_input)):
        base = 1767268800000000 + device * 10
        for step in (0, 1):
            with np.errstate(invalid="ignore"):
                logged = np.log(x if step == 1 else FINITE)
                reduced = np.log(FINITE) + np.log(bad_input if step == 1 else FINITE)
            stamp = base + step * 1000
            write_op(root, device, step, "Log", "features", stamp, [x if step == 1 else FINITE] * with_inputs, [logged])
            write_op(root, device, step, "Mul", "grad/Mul", stamp + 1, [logged] * with_inputs, [logged * 2])
            write_op(
                root,
                device,
                step,
                "CollectiveReduce",
                "HcomAllReduce",
                stamp + 100,
                [logged * 2] * with_inputs,
                [reduced * 2],
            )
        write_side_file(root, device, overflow_records.SOURCES_FILE, {"features": f"train.py:{20 + device} in build"})
    return root


def run_origin(capsys, *paths):
    code = main(["origin", *map(str, paths)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_nan_that_reaches_rank_0_through_an_allreduce_is_named_at_rank_1s_op(tmp_path, capsys):
    code, out, _ = run_origin(capsys, planted_job(tmp_path))
    assert code == 1
    lines = out.splitlines()
    assert lines[1] == (
        "first inf/NaN: device 1, step 1 of model ge_default_20260101120000_3/3 [Log] features, "
        "created at train.py:21 in build"
    )
    assert "  output 0: NaN 1, inf 0 of 4 values" in lines
    assert "  made: its inputs are finite: this op made the value" in lines
    assert any(
        line.startswith("  it reaches device 0 through [CollectiveReduce] HcomAllReduce step 1") for line in lines
    )
    device_0 = next(line for line in lines if line.startswith("  device 0:"))
    assert "[CollectiveReduce] HcomAllReduce" in device_0 and ": received: " in device_0
    assert "on device 1: input 0: NaN 1, inf 0 of 4 values" in device_0
    assert "    from device 1: device 1, step 1" in out
    assert "further origins" not in out


def test_without_dumped_inputs_op_graph_json_says_whether_a_collectives_inputs_were_finite(tmp_path, capsys):
    planted_job(tmp_path, with_inputs=False)
    for device in (0, 1):
        write_side_file(
            tmp_path,
            device,
            op_graph.GRAPH_FILE,
            {
                "features": {"type": "Log", "inputs": ["x:0"]},
                "grad/Mul": {"type": "Mul", "inputs": ["features:0"]},
                "HcomAllReduce": {"type": "CollectiveReduce", "inputs": ["grad/Mul:0"]},
            },
        )
    found = rank_origin.trace(rank_trees.find([tmp_path]))
    assert [(e.device_id, e.op_name, e.kind) for e in found.origins] == [(1, "features", "unknown")]
    assert found.firsts[0].kind == "received" and found.firsts[0].senders[0].op_name == "features"


def test_an_allreduce_of_finite_inputs_that_overflows_is_the_origin(tmp_path, capsys):
    big = np.full(4, 3e38, np.float32)
    for device in (0, 1):
        write_op(tmp_path, device, 0, "Mul", "grad/Mul", 1000 + device, [FINITE], [big])
        with np.errstate(over="ignore"):
            write_op(tmp_path, device, 0, "CollectiveReduce", "HcomAllReduce", 2000 + device, [big], [big + big])
    code, out, _ = run_origin(capsys, tmp_path)
    assert code == 1
    assert "first inf/NaN: device 0, step 0 of model" in out and "[CollectiveReduce] HcomAllReduce" in out
    assert "reduction: its inputs are finite on every rank: the collective itself overflowed" in out


def test_overflow_records_alone_lead_to_the_rank_that_made_the_value(tmp_path, capsys):
    # enable_dump_debug without enable_dump: a record and a dump of inputs and outputs per overflowing op
    task = write_op(tmp_path, 1, 4, "Log", "features", 5000, [np.float32([-1.0])], [np.float32([np.nan])])
    write_record(tmp_path, 1, 4, task, 5001, 0x1)
    task = write_op(tmp_path, 0, 4, "CollectiveReduce", "HcomAllReduce", 5100, [FINITE], [NAN])
    write_record(tmp_path, 0, 4, task, 5101, 0x1)
    write_op(tmp_path, 1, 4, "CollectiveReduce", "HcomAllReduce", 5101, [NAN], [NAN])
    code, out, _ = run_origin(capsys, tmp_path)
    assert code == 1
    assert "first inf/NaN: device 1, step 4 of model" in out and "[Log] features" in out
    assert "overflow record status 0x1" in out
    assert main(["overflow", str(tmp_path)]) == 1  # lists both ranks' records, and points here
    assert "the overflows of 2 ranks are listed together; `npu-dump origin " in capsys.readouterr().err


def test_finite_dumps_find_nothing(tmp_path, capsys):
    for device in (0, 1):
        write_op(tmp_path, device, 0, "CollectiveReduce", "HcomAllReduce", 1000, [FINITE], [FINITE * 2])
    code, out, _ = run_origin(capsys, tmp_path)
    assert code == 0 and "no inf/NaN in any dumped tensor and no overflow record on the 2 ranks" in out


def test_an_op_whose_input_was_already_nan_is_named_with_that_input(tmp_path, capsys):
    write_op(tmp_path, 0, 0, "Mul", "scaled", 1000, [NAN, FINITE], [NAN * FINITE])
    code, out, _ = run_origin(capsys, tmp_path / "20260101120000" / "0")
    assert code == 1
    assert "input: input 0: NaN 1, inf 0 of 4 values already held inf/NaN" in out


def test_names_from_files_are_shown_inert(tmp_path, capsys):
    step_dir = os.path.join(tmp_path, "20260101120000", "0", MODEL, "0")
    os.makedirs(step_dir)
    dump_file.write_dump_file(os.path.join(step_dir, "Log.evil.1.0.1000"), "evil\x1b]0;owned\x07", [FINITE], [NAN])
    code, out, _ = run_origin(capsys, tmp_path)
    assert code == 1 and "evil\\x1b]0;owned\\x07" in out and "\x1b" not in out


def test_dumps_of_two_jobs_under_one_path_are_refused_naming_them(tmp_path, capsys):
    write_op(tmp_path, 0, 0, "Mul", "a", 1000, [FINITE], [FINITE])
    write_op(tmp_path, 0, 0, "Mul", "a", 1000, [FINITE], [FINITE], time_dir="20260101130000")
    code, _, err = run_origin(capsys, tmp_path)
    assert code == 2
    assert "device 0 has two dump trees" in err and "20260101130000" in err and "20260101120000" in err
    # the device directories of one job are accepted
    code, _, _ = run_origin(capsys, tmp_path / "20260101120000" / "0")
    assert code == 0


def test_ranks_of_different_jobs_are_refused(tmp_path):
    for device, port in ((0, "60000"), (1, "61000")):
        write_op(tmp_path, device, 0, "Mul", "a", 1000, [FINITE], [FINITE])
        write_side_file(tmp_path, device, "run_config.json", {"environment": {rank_trees.JOB_VARIABLE: port}})
    with pytest.raises(DumpTreeError, match="come from different jobs .*60000.*61000"):
        rank_trees.find([tmp_path])


@pytest.mark.parametrize("make", ["empty", "loose files", "inside a rank"])
def test_a_path_without_rank_trees_is_refused_naming_it(tmp_path, capsys, make):
    path = tmp_path / "dump"
    path.mkdir()
    if make == "loose files":
        dump_file.write_dump_file(path / "Mul.a.1.0.1000", "a", [FINITE], [FINITE])
    if make == "inside a rank":
        write_op(path, 0, 0, "Mul", "a", 1000, [FINITE], [FINITE])
        path = path / "20260101120000" / "0" / MODEL
    code, _, err = run_origin(capsys, path)
    assert code == 2 and str(path) in err
    assert ("lies inside the rank tree" if make == "inside a rank" else "holds no rank trees") in err


# Files below a dump root that hold no tensor data (0644; every other file is the dump files' 0600)
REPORT_FILES = {dump_status.STATUS_FILE, overflow_records.REPORT_FILE, overflow_records.SOURCES_FILE}


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("who", ["root", "unprivileged user"])
def test_a_2_rank_job_names_rank_1s_log_not_rank_0s_allreduce(who):
    user = helpers.unprivileged_users.chosen(who)
    with user.directory() as tmp_path:
        dump = tmp_path / "dump"  # dump_path must exist: the user makes it
        dump.mkdir()
        os.chown(dump, user.uid, user.gid)
        worker = os.path.join(WORKERS, "dump_origin_worker.py")
        launcher = ["-m", "npu_bridge.core.launch", "-n", "2", "--stop-timeout", "5", "--", sys.executable, worker]
        result = helpers.unprivileged_users.run_python(
            user, tmp_path, [*launcher, str(dump)], env={"HCCL_CONNECT_TIMEOUT": "120"}, timeout=200
        )
        assert result.returncode == 0, result.stdout + result.stderr
        values = helpers.collectives.parse_results(result.stdout)
        assert np.isfinite(values[0]["losses"][:2]).all() and np.isnan(values[1]["losses"][2])
        assert helpers.unprivileged_users.not_owned_by(user, dump) == {}
        _assert_owner_only(dump)
        origin = helpers.unprivileged_users.run_python(
            user, tmp_path, ["-m", "npu_bridge.core.dump.cli", "origin", str(dump)], timeout=60
        )
    code, out = origin.returncode, origin.stdout
    print(out)
    assert code == 1, origin.stderr
    with open(worker, encoding="utf-8") as f:
        line = next(number for number, text in enumerate(f, 1) if 'name="features"' in text)
    first = out.splitlines()[1]
    assert first.startswith("first inf/NaN: device 1, step 2 of model ") and "[Log] features" in first
    assert first.endswith(f"created at {worker}:{line} in <module>")
    assert "made: its inputs are finite: this op made the value" in out
    device_0 = next(text for text in out.splitlines() if text.startswith("  device 0:"))
    assert " step 2 " in device_0 and "HcomAllReduce" in device_0 and ": received: " in device_0
    assert "further origins" not in out


def _assert_owner_only(top):
    """Directories below ``top`` are 0700, tensor data 0600, the reports without tensor data 0644 (umask 022)."""
    modes = {}
    for parent, dir_names, file_names in os.walk(top):
        for name in dir_names + file_names:
            path = os.path.join(parent, name)
            info = os.lstat(path)
            expected = 0o700 if stat.S_ISDIR(info.st_mode) else 0o644 if name in REPORT_FILES else 0o600
            modes[path] = (stat.S_IMODE(info.st_mode), expected)
    assert any(name.startswith("Log.features.") for name in map(os.path.basename, modes)), sorted(modes)
    wrong = {path: (oct(mode), oct(expected)) for path, (mode, expected) in modes.items() if mode != expected}
    assert wrong == {}


def two_rank_run(root, rank_1_scale):
    """Two ranks of two ops each; rank 1's second op scaled by ``rank_1_scale``."""
    for device in (0, 1):
        scale = rank_1_scale if device == 1 else 1.0
        write_op(root, device, 0, "Mul", "first", 1000 + device, [FINITE], [FINITE * 2])
        write_op(root, device, 0, "Sub", "second", 2000 + device, [FINITE * 2], [FINITE * 2 * scale - 1])
    return root


def test_compare_of_two_multi_rank_dumps_goes_rank_by_rank(tmp_path, capsys):
    mine, truth = two_rank_run(tmp_path / "mine", -1.0), two_rank_run(tmp_path / "truth", 1.0)
    output = tmp_path / "result.csv"
    assert main(["compare", str(mine), str(truth), "-o", str(output)]) == 1
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("rank by rank: 2 devices; my dump ")
    assert lines[1].startswith("  device 0: 4 tensors at step 0: identical 4, differ 0, diverged 0; no op diverges")
    assert lines[2].startswith(
        "  device 1: 4 tensors at step 0: identical 3, differ 1, diverged 1; first diverging op:"
    )
    assert "first divergence: device 1: #2 second output 0" in out
    assert "largest divergence: device 1: #2 second output 0" in out
    assert (tmp_path / "result_device0.csv").exists() and (tmp_path / "result_device1.csv").exists()


def test_compare_names_a_rank_only_one_dump_holds(tmp_path, capsys):
    mine = two_rank_run(tmp_path / "mine", 1.0)
    truth = tmp_path / "truth"
    write_op(truth, 0, 0, "Mul", "first", 1000, [FINITE], [FINITE * 2])
    write_op(truth, 0, 0, "Sub", "second", 2000, [FINITE * 2], [FINITE * 2 - 1])
    assert main(["compare", str(mine), str(truth), "-o", str(tmp_path / "r.csv")]) == 0
    out = capsys.readouterr().out
    assert "  device 1: only in my dump (" in out and "no rank diverges" in out


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_compare_of_two_2_rank_jobs_names_the_rank_that_diverges_first(tmp_path, capsys):
    planted, clean = tmp_path / "planted", tmp_path / "clean"
    for path, args in ((planted, []), (clean, ["clean"])):
        path.mkdir()
        result, _ = helpers.collectives.launch("dump_origin_worker.py", 2, args=[str(path), *args], timeout=240)
        assert result.returncode == 0, result.stdout + result.stderr
    output = tmp_path / "result.csv"
    assert main(["compare", str(planted), str(clean), "--step", "2", "-o", str(output)]) == 1
    out = capsys.readouterr().out
    print(out)
    device_0 = next(text for text in out.splitlines() if text.startswith("  device 0:"))
    assert "first diverging op: #" in device_0 and "HcomAllReduce output 0" in device_0
    first = next(text for text in out.splitlines() if text.startswith("first divergence: "))
    assert first.startswith("first divergence: device 1: #") and " features " in first  # its fed input or output
    assert (tmp_path / "result_device0.csv").exists() and (tmp_path / "result_device1.csv").exists()
