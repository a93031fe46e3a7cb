"""The stall report in one process: NPU_BRIDGE_STALL_SECONDS, the ranks' status files, the report's words, the
watchdog thread's part and npu-run's summary (the jobs are in test_collectives_stall.py)."""

import json
import os
import stat

import pytest
import tensorflow as tf
from helpers.config import npu_config

from npu_bridge.core.collectives import settings, stall_report, stall_watch, status_files
from npu_bridge.core.collectives import watchdog as watchdog_lib
from npu_bridge.core.launch import stall_summary
from npu_bridge.core.runtime.errors import EnvironmentVariableError

ALLREDUCE = {
    "op": "HcomAllReduce_1",
    "kind": "allreduce",
    "group": "hccl_world_group",
    "key": 7,
    "ranks": [0, 1, 2],
    "shape": "[6]",
    "dtype": "float32",
    "site": "train.py:20 in main",
}
GATHER = dict(ALLREDUCE, op="HcomAllGather", kind="allgather", key=8, shape="[3]", dtype="int32", site=None)


# NPU_BRIDGE_STALL_SECONDS


@pytest.mark.parametrize(("text", "seconds"), [(None, 60), ("", 60), ("0", 0), (" 5 ", 5), ("2147483647", 2**31 - 1)])
def test_stall_seconds(text, seconds):
    environ = {} if text is None else {"NPU_BRIDGE_STALL_SECONDS": text}
    assert settings.stall_seconds(environ) == seconds


@pytest.mark.parametrize("text", ["soon", "-1", "1_0", "2.5", "٣", "2147483648"])
def test_a_bad_stall_seconds_names_the_variable_the_value_and_what_is_allowed(text):
    with pytest.raises(EnvironmentVariableError) as raised:
        settings.stall_seconds({"NPU_BRIDGE_STALL_SECONDS": text})
    assert str(raised.value).startswith(
        f"NPU_BRIDGE_STALL_SECONDS has invalid value {text!r}: must be a whole number of seconds >= 0 and <= "
        "2147483647 (0 turns the stall report off; default 60)"
    )


def test_a_bad_stall_seconds_fails_when_a_session_is_created(monkeypatch):
    monkeypatch.setenv("NPU_BRIDGE_STALL_SECONDS", "a minute")
    with tf.Graph().as_default(), pytest.raises(EnvironmentVariableError, match="NPU_BRIDGE_STALL_SECONDS"):
        tf.compat.v1.Session(config=npu_config())


# the status directory


def test_status_files_are_private_and_read_back(tmp_path):
    path, fd = status_files.make(str(tmp_path))
    try:
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o700
        status_files.publish(fd, 3, {"rank": 3, "waiting": []})
        assert stat.S_IMODE(os.stat(os.path.join(path, "rank3.json")).st_mode) == 0o600
        (tmp_path / "status" / "rank4.json").write_text('{"rank": 5}')  # a record under another rank's name
        (tmp_path / "status" / "rank6.json").write_text("not json")
        (tmp_path / "status" / "rank7.json").write_text(json.dumps({"rank": 7, "pad": "x" * 70000}))
        (tmp_path / "elsewhere.json").write_text('{"rank": 8}')
        os.symlink(tmp_path / "elsewhere.json", tmp_path / "status" / "rank8.json")
        assert status_files.read_all(fd) == {3: {"rank": 3, "waiting": []}}
    finally:
        os.close(fd)


@pytest.mark.parametrize("problem", ["shared", "symlink"])
def test_a_status_directory_others_could_use_is_refused(tmp_path, problem, caplog):
    target = tmp_path / "status"
    target.mkdir(mode=0o700)
    path = target
    if problem == "shared":
        os.chmod(target, 0o755)
    else:
        path = tmp_path / "link"
        os.symlink(target, path)
    with pytest.raises(OSError):
        status_files.open_directory(str(path))
    assert stall_watch.open_status_directory({"NPU_RUN_STATUS_DIR": str(path)}) is None
    assert "NPU_RUN_STATUS_DIR cannot be used" in caplog.text


# the words


def _record(rank, waiting=(), last=None, stall_seconds=2):
    return {"rank": rank, "stall_seconds": stall_seconds, "waiting": list(waiting), "last": last}


def _waiting(collectives, since=100.0, stalled=True, step=4):
    return {"collectives": collectives, "step": step, "since": since, "stalled": stalled, "timeout": 1836}


def test_the_rank_line_names_the_collective_the_missing_ranks_and_what_they_do():
    entry = _waiting([ALLREDUCE])
    records = {
        0: _record(0, [entry]),
        1: _record(1, [_waiting([GATHER], since=101.0)]),
        2: _record(2, last={"collectives": [ALLREDUCE], "step": 3, "ended": 99.0}),
    }
    assert stall_report.rank_line(0, entry, records, 103.0) == (
        "rank 0: stalled for 3.0 s in HcomAllReduce_1 (allreduce, group 'hccl_world_group', ranks [0, 1, 2], float32 "
        "[6]) created at train.py:20 in main, step 4; not arrived: rank 1: waiting in HcomAllGather (allgather, group "
        "'hccl_world_group', ranks [0, 1, 2], int32 [3]), step 4, for 2.0 s; rank 2: not in a collective; last "
        "finished HcomAllReduce_1 (allreduce, group 'hccl_world_group', ranks [0, 1, 2], float32 [6]) created at "
        "train.py:20 in main, step 3, 4.0 s ago. Still waiting, until the collective timeout of 1836 s "
        "(hccl_timeout / HCCL_EXEC_TIMEOUT)"
    )
    del records[2]
    assert "rank 2: " + stall_report.NO_STATUS in stall_report.rank_line(0, entry, records, 103.0)


def test_ranks_in_the_same_collective_have_arrived():
    entry = _waiting([ALLREDUCE])
    records = {r: _record(r, [_waiting([ALLREDUCE])]) for r in (0, 1)}
    assert stall_report.missing(0, entry, records) == [2]


def test_the_job_summary_is_one_block_per_collective():
    records = {
        0: _record(0, [_waiting([ALLREDUCE])]),
        1: _record(1, [_waiting([ALLREDUCE], since=100.5)]),
        2: _record(2, [_waiting([GATHER], since=101.0, stalled=False)]),
    }
    assert stall_report.job_summary(records, 104.0) == (
        "2 ranks stalled in collectives (waiting longer than NPU_BRIDGE_STALL_SECONDS=2 s); the job keeps waiting "
        "until the collective timeout (1836 s, hccl_timeout / HCCL_EXEC_TIMEOUT):\n"
        "  HcomAllReduce_1 (allreduce, group 'hccl_world_group', ranks [0, 1, 2], float32 [6]) created at train.py:20 "
        "in main, step 4\n"
        "    waiting: rank 0 (for 4.0 s), rank 1 (for 3.5 s)\n"
        "    not arrived: rank 2\n"
        "      rank 2: waiting in HcomAllGather (allgather, group 'hccl_world_group', ranks [0, 1, 2], int32 [3]), "
        "step 4, for 3.0 s"
    )
    assert stall_report.job_summary({2: records[2]}, 104.0) is None


def test_what_a_record_holds_is_shown_inert():
    hostile = dict(ALLREDUCE, op="evil\x1b[2J\nnpu-run: forged", site="a\u202eb.py:1")
    text = stall_report.job_summary({0: _record(0, [_waiting([hostile])])}, 101.0)
    assert "\x1b" not in text and "\u202e" not in text and "\nnpu-run: forged" not in text
    assert "evil\\x1b[2J\\nnpu-run: forged" in text and "a\\u202eb.py:1" in text


# the watchdog thread's part


class FakeRun:
    def __init__(self, describe="run", collectives=None):
        self.describe = lambda: describe
        self.collectives = collectives
        self.step = 5
        self.started = 0.0
        self.timeout = 60
        self.stalled = False
        self.ended = None


def test_a_rank_publishes_once_it_sits_still_and_reports_a_stall_once(tmp_path):
    path, fd = status_files.make(str(tmp_path))
    reports = []
    try:
        watch = stall_watch.StallWatch(0, 2, fd, wall=lambda: 1000.0, report=reports.append)
        status_files.publish(fd, 1, _record(1, last={"collectives": [GATHER], "step": 2, "ended": 990.0}))
        run = FakeRun("HcomAllReduce (allreduce)")
        watch.tick(0.1, [run], None)
        assert not os.path.exists(os.path.join(path, "rank0.json"))  # not stable yet
        watch.tick(0.7, [run], None)
        published = status_files.read_all(fd)[0]
        assert published["waiting"][0]["collectives"] == [{"op": "HcomAllReduce (allreduce)"}]
        assert published["waiting"][0]["stalled"] is False and reports == []
        watch.tick(2.1, [run], None)
        watch.tick(3.0, [run], None)
        assert status_files.read_all(fd)[0]["waiting"][0]["stalled"] is True
        assert len(reports) == 1
        assert reports[0].startswith("rank 0: stalled for 2.1 s in HcomAllReduce (allreduce) (")
    finally:
        os.close(fd)


def test_without_a_status_directory_the_rank_still_reports():
    reports = []
    watch = stall_watch.StallWatch(1, 2, None, wall=lambda: 50.0, report=reports.append)
    watch.tick(2.5, [FakeRun("a run")], None)
    assert len(reports) == 1 and "stalled for 2.5 s in a run" in reports[0]


def test_the_watchdog_drives_the_stall_watch_with_its_runs_and_the_last_one():
    clock, seen = [0.0], []

    class Recorder:
        def tick(self, now, runs, last):
            seen.append((now, [r.step for r in runs], last and last.step))

    dog = watchdog_lib.Watchdog(["h:0", "h:1"], 0, probe=lambda a: True, abort=None, clock=lambda: clock[0])
    dog._thread = object()  # no thread: the test calls check itself
    dog.watch_stalls(Recorder())
    token = dog.enter(lambda: "run", {0, 1}, 60, None, 3)
    clock[0] = 0.5
    dog.check()
    dog.leave(token)
    clock[0] = 1.0
    dog.check()
    assert seen == [(0.5, [3], None), (1.0, [], 3)]


# npu-run's summary


def test_npu_run_prints_one_summary_per_stall(tmp_path):
    _, fd = status_files.make(str(tmp_path))
    clock = [0.0]
    try:
        summary = stall_summary.StallSummary(fd, "job-1", clock=lambda: clock[0], wall=lambda: 103.0)
        assert summary.poll() is None
        status_files.publish(fd, 0, _record(0, [_waiting([ALLREDUCE])]))
        outputs = []
        for t in (1.0, 1.6, 2.2, 2.8, 3.4):
            clock[0] = t
            outputs.append(summary.poll())
        printed = [text for text in outputs if text]
        assert len(printed) == 1 and printed[0].startswith("job job-1: 1 rank stalled in collectives")
        status_files.publish(fd, 1, _record(1, [_waiting([GATHER], since=102.0)]))
        for t in (4.0, 4.6, 5.2):
            clock[0] = t
            outputs.append(summary.poll())
        assert len([text for text in outputs if text]) == 2  # a new stall: printed again
    finally:
        os.close(fd)


def test_the_watchdog_ends_a_rank_in_an_overlong_session_run_but_not_in_a_long_tf2_function_call():
    clock, aborted = [0.0], []
    dog = watchdog_lib.Watchdog(["h:0", "h:1"], 0, probe=lambda a: True, abort=aborted.append, clock=lambda: clock[0])
    dog._thread = object()  # no thread: the test calls check itself
    call = dog.enter(lambda: "tf.function 'train'", {0, 1}, 60, None, 1, bounded=False)  # may loop over steps
    clock[0] = 2 * 60 + 31
    dog.check()
    assert aborted == []
    dog.leave(call)
    run = dog.enter(lambda: "HcomAllReduce (allreduce)", {0, 1}, 60, None, 2)
    clock[0] = 2 * (2 * 60 + 31)
    dog.check()
    assert len(aborted) == 1 and "HcomAllReduce (allreduce) has not finished after 151 s" in aborted[0], aborted
    dog.leave(run)
