"""npu-prof on damaged, partial and hostile input: a failed export keeps the previous one, a partial export is not
summarized, damaged raw data is exported up to the damage and reported, special files are refused at once."""

import errno
import os
import shutil
import struct
import subprocess

import pytest
from helpers.profiling import end_profiles, profiled_config, the_profile, train

from npu_bridge.core.profiling import export, layout, raw_trace, timeline
from npu_bridge.core.profiling.cli import main

_HEADER = raw_trace._HEADER


@pytest.fixture(autouse=True)
def _no_profile_left():
    yield
    end_profiles()


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """One exported profile of 4 training steps, recorded once for the module."""
    output = tmp_path_factory.mktemp("recorded") / "out"
    train(profiled_config(output, training_trace="on", task_trace="on"), steps=4)
    end_profiles()
    return the_profile(output)


@pytest.fixture
def profile(recorded, tmp_path):
    """A copy of the recorded profile the test may damage."""
    copy = str(tmp_path / os.path.basename(recorded))
    shutil.copytree(recorded, copy)
    return copy


def export_dir_contents(profile_dir):
    """{name: bytes} of everything in the export directory (hidden temporary entries included)."""
    directory = os.path.join(profile_dir, layout.EXPORT_DIR)
    return {name: open(os.path.join(directory, name), "rb").read() for name in sorted(os.listdir(directory))}


def records(raw):
    """(offset, signature size, payload size) of each record of a raw trace file (read here, not by the reader
    under test)."""
    data = open(raw, "rb").read()
    assert data.startswith(raw_trace.MAGIC)
    found, offset = [], len(raw_trace.MAGIC)
    while offset < len(data):
        size, _, _, _, _, signature = _HEADER.unpack_from(data, offset)
        found.append((offset, signature, size))
        offset += _HEADER.size + signature + size
    assert offset == len(data)
    return found


def overwrite(path, offset, data):
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(data)


def write_runs(path, count):
    if os.path.lexists(path):
        os.remove(path)  # the writer creates a new file, never one that exists
    writer = raw_trace.RawTraceWriter(str(path))
    for run in range(count):
        assert writer.write(0, run, 100 * run, 100 * run + 50, b"s" * 20, "fetch|feed")
    writer.close()
    return [offset for offset, _, _ in records(path)]


def test_the_reader_reports_where_raw_data_is_damaged(tmp_path):
    path = tmp_path / "raw"
    offsets = write_runs(path, 4)
    assert offsets[0] == len(raw_trace.MAGIC)
    size = os.path.getsize(path)
    status = raw_trace.ReadStatus(str(path))
    assert len(list(raw_trace.read_runs(str(path), status))) == 4
    assert status.complete and status.runs == 4 and status.message() == ""

    overwrite(path, offsets[1], struct.pack("<I", 0xFFFFFFF0))  # a corrupt payload size
    status = raw_trace.ReadStatus(str(path))
    assert [run.run for run in raw_trace.read_runs(str(path), status)] == [0]
    assert (status.runs, status.damaged_at, status.bytes_skipped) == (1, offsets[1], size - offsets[1])
    assert "cut short or its header is corrupt" in status.reason
    assert status.message().startswith(f"raw profiling data {path} is damaged at byte {offsets[1]} (")
    assert f"1 runs were read before it and the remaining {size - offsets[1]} bytes are skipped" in status.message()

    write_runs(path, 4)
    overwrite(path, offsets[2] + 20, struct.pack("<q", 0))  # ends before it starts
    status = raw_trace.ReadStatus(str(path))
    assert len(list(raw_trace.read_runs(str(path), status))) == 2
    assert (status.damaged_at, status.reason) == (offsets[2], "a corrupt record header (run from 200 to 0 ns)")

    write_runs(path, 4)
    with open(path, "r+b") as f:  # the process was killed while writing the last record
        f.truncate(offsets[3] + _HEADER.size + 5)
    status = raw_trace.ReadStatus(str(path))
    assert len(list(raw_trace.read_runs(str(path), status))) == 3
    assert (status.runs, status.damaged_at, status.bytes_skipped) == (3, offsets[3], _HEADER.size + 5)
    assert status.to_json()["runs_read"] == 3


def test_zeros_end_the_raw_data_at_once(tmp_path):
    # A file padded or overwritten with zeros (a sparse copy, a disk error): an all-zero header would read as an
    # empty run, and 64 MB of zeros as two million of them.
    path = tmp_path / "raw"
    offsets = write_runs(path, 3)
    size = os.path.getsize(path)
    with open(path, "r+b") as f:
        f.truncate(64 * 1024 * 1024)
    status = raw_trace.ReadStatus(str(path))
    assert [run.run for run in raw_trace.read_runs(str(path), status)] == [0, 1, 2]
    assert (status.damaged_at, status.bytes_skipped) == (size, 64 * 1024 * 1024 - size)
    assert status.reason == "a record header of zero bytes: the file is zero-filled from here"

    write_runs(path, 3)
    overwrite(path, offsets[0] + 20, struct.pack("<q", 0))  # run 0 (from 0 ns) ends at 0 too; its sizes are intact
    status = raw_trace.ReadStatus(str(path))
    assert list(raw_trace.read_runs(str(path), status)) == []
    assert (status.damaged_at, status.reason) == (offsets[0], "a corrupt record header (a run that ended at time 0)")


def test_a_zero_filled_raw_file_is_exported_up_to_the_zeros(profile, capsys):
    raw = layout.raw_path(profile, 0)
    runs = len(records(raw))
    size = os.path.getsize(raw)
    with open(raw, "r+b") as f:
        f.truncate(64 * 1024 * 1024)
    assert main(["export", profile]) == 0
    err = capsys.readouterr().err
    assert f"damaged at byte {size} (a record header of zero bytes: the file is zero-filled from here)" in err
    assert f"{runs} runs were read before it" in err
    assert layout.read_info(profile)["runs_exported"] == runs


@pytest.mark.parametrize("damage", ["header size", "header times", "payload", "killed while writing", "ends early"])
def test_damaged_raw_data_is_exported_up_to_the_damage_and_reported(damage, profile, capsys):
    raw = layout.raw_path(profile, 0)
    runs = records(raw)
    assert len(runs) >= 5
    read = len(runs) - 1 if damage in ("killed while writing", "ends early") else 2
    offset, signature, payload = runs[read]
    if damage == "header size":
        overwrite(raw, offset, struct.pack("<I", 0xFFFFFFF0))
        reason = "cut short or its header is corrupt"
    elif damage == "header times":
        overwrite(raw, offset + 20, struct.pack("<q", 1))
        reason = "a corrupt record header"
    elif damage == "payload":
        overwrite(raw, offset + _HEADER.size + signature, b"\xff" * payload)
        reason = "its step stats cannot be parsed"
    else:
        with open(raw, "r+b") as f:
            f.truncate(offset + (0 if damage == "ends early" else _HEADER.size + 3))
        reason = "runs recorded" if damage == "ends early" else "cut short"
    size = os.path.getsize(raw)

    assert main(["export", profile]) == 0
    err = capsys.readouterr().err
    assert f"npu-prof: warning: raw profiling data {raw} is damaged at byte {offset} (" in err
    assert reason in err and "Traceback" not in err
    assert f"{read} runs were read before it and the remaining {size - offset} bytes are skipped" in err
    info = layout.read_info(profile)
    assert info["runs_exported"] == read
    assert {key: info["raw_damage"][key] for key in ("file", "runs_read", "damaged_at", "bytes_skipped")} == {
        "file": raw,
        "runs_read": read,
        "damaged_at": offset,
        "bytes_skipped": size - offset,
    }
    assert main(["summary", profile]) == 0
    out = capsys.readouterr().out
    assert f"INCOMPLETE PROFILE: raw profiling data {raw} is damaged at byte {offset}" in out


@pytest.mark.parametrize("failure", ["not raw data", "disk full"])
def test_a_failed_export_keeps_the_previous_one(failure, profile, monkeypatch, capsys):
    before = export_dir_contents(profile)
    info_before = layout.read_info(profile)
    assert "raw_damage" not in info_before
    if failure == "not raw data":
        with open(layout.raw_path(profile, 0), "wb") as f:
            f.write(b"garbage")
        message = "not an npu_bridge raw profiling file"
    else:

        def full(self, *args):
            raise OSError(errno.ENOSPC, "No space left on device")

        monkeypatch.setattr(timeline.TimelineWriter, "close", full)
        message = "No space left on device"
    assert main(["export", profile]) == 2
    assert export_dir_contents(profile) == before  # same files, same bytes, no temporary left
    assert layout.read_info(profile) == info_before
    err = capsys.readouterr().err
    assert f"npu-prof: exporting {profile} failed, its previous export (if any) is unchanged: " in err
    assert message in err and "Traceback" not in err
    assert main(["summary", profile]) == 0
    assert "4 iterations of graph" in capsys.readouterr().out


def test_exports_in_the_same_second_do_not_overwrite_each_other(profile, monkeypatch, capsys):
    monkeypatch.setattr(export.time, "time", lambda: 1_800_000_000.0)
    for _ in range(2):
        before = set(export_dir_contents(profile))
        assert main(["export", profile]) == 0
        after = export_dir_contents(profile)
        assert not before & set(after)  # a new timestamp: no file of the previous export is overwritten or left
        assert set(after) == {os.path.basename(path) for path in layout.read_info(profile)["exported"].values()}
    assert "4 iterations of graph" in capsys.readouterr().out


def test_summary_refuses_an_incomplete_export_and_ignores_files_it_does_not_name(profile, capsys):
    exported = layout.read_info(profile)["exported"]
    stray = layout.export_path(profile, "step_trace", "99991231235959", "csv")  # a newer export that failed
    with open(stray, "w", encoding="utf-8") as f:
        f.write("Device_id,Iteration ID\n")
    assert main(["summary", profile]) == 0
    assert "4 iterations of graph" in capsys.readouterr().out

    os.remove(os.path.join(profile, exported["op_statistic"]))
    assert main(["summary", profile]) == 2
    err = capsys.readouterr().err
    assert f"npu-prof: the export of {profile} is incomplete: {exported['op_statistic']} is missing" in err
    assert f"redo it with `npu-prof export {profile}`" in err


def test_a_step_trace_cut_short_is_a_clear_error_for_summary_and_report(profile, capsys):
    step_trace = os.path.join(profile, layout.read_info(profile)["exported"]["step_trace"])
    with open(step_trace, encoding="utf-8") as f:
        lines = f.read().splitlines()
    with open(step_trace, "w", encoding="utf-8") as f:  # the last row cut before its Iteration ID
        f.write("\n".join(lines[:-1] + [lines[-1].split(",")[0]]) + "\n")
    for command in (["summary", profile], ["report", profile, "-o", os.path.join(profile, "r.html")]):
        assert main(command) == 2
        assert f"npu-prof: {step_trace}: a row has no 'Iteration ID' (the file is cut short" in capsys.readouterr().err


@pytest.mark.timeout(60)
@pytest.mark.parametrize("special", ["fifo", "/dev/zero"])
def test_special_files_are_refused_without_blocking(special, profile, capsys):
    def replace(path):
        os.remove(path)
        if special == "fifo":
            os.mkfifo(path)  # nobody writes: opening or reading it would block forever
        else:
            os.symlink(special, path)
        return "a FIFO" if special == "fifo" else "a character device"

    exported = layout.read_info(profile)["exported"]
    kind = replace(os.path.join(profile, exported["step_trace"]))
    assert main(["summary", profile]) == 2
    if special == "fifo":
        assert f"cannot be read: it is {kind}, not a regular file" in capsys.readouterr().err
    else:  # a file info.json names is read only inside the profile (tests/runtime/test_artifact_attacks.py)
        assert f"leads out of the tree {profile} through a symlink (to {special})" in capsys.readouterr().err

    raw = layout.raw_path(profile, 0)
    replace(raw)
    assert main(["export", profile]) == 2
    assert f"raw profiling data {raw} cannot be read: it is {kind}, not a regular file" in capsys.readouterr().err

    info = os.path.join(profile, layout.INFO_FILE)
    replace(info)
    assert main(["summary", profile]) == 2
    assert f"{info} cannot be read: it is {kind}, not a regular file" in capsys.readouterr().err


def test_an_export_cleans_up_after_one_that_was_killed(profile):
    directory = os.path.join(profile, layout.EXPORT_DIR)
    dead = subprocess.Popen(["true"])
    dead.wait()  # a pid that no longer exists, as after an export killed with SIGKILL
    abandoned = os.path.join(directory, f".export-{dead.pid}-abc123")
    live = os.path.join(directory, f".export-{os.getpid()}-def456")  # an export still running
    for path in (abandoned, live):
        os.makedirs(path)
        open(os.path.join(path, "op_summary_1.csv"), "w").close()
    assert main(["export", profile]) == 0
    assert not os.path.exists(abandoned) and os.path.exists(live)
    shutil.rmtree(live)
