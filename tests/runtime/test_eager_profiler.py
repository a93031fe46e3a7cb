"""``tensorflow.python.eager.profiler`` for user code (``npu_bridge/core/runtime/eager_profiler.py``): ``save`` puts the
trace where TensorBoard reads it, with one marker event file, and writes nothing through a link another user
planted in the log directory."""

import os
import socket
import time

import pytest
import tensorflow as tf

from npu_bridge.core.runtime import eager_profiler
from npu_bridge.core.runtime.errors import UnsafePathError


def markers(logdir):
    return sorted(p for p in os.listdir(logdir) if p.endswith(".profile-empty"))


def test_save_writes_the_trace_and_one_marker_event_file_tensorboard_reads(tmp_path):
    logdir = tmp_path / "logs"
    path = eager_profiler.save(str(logdir), b"trace bytes")
    assert open(path, "rb").read() == b"trace bytes"
    assert os.path.relpath(path, logdir).split(os.sep)[:2] == ["plugins", "profile"]
    assert os.path.basename(path) == f"{socket.gethostname()}.xplane.pb"
    (marker,) = markers(logdir)
    events = list(tf.compat.v1.train.summary_iterator(str(logdir / marker)))
    assert [event.file_version for event in events] == ["brain.Event:2"]
    time.sleep(1.1)  # the next trace gets a directory of its own, and no second marker
    assert eager_profiler.save(str(logdir), b"again") != path
    assert markers(logdir) == [marker]


def test_a_link_planted_at_the_marker_s_name_is_replaced_not_written_through(tmp_path, monkeypatch):
    logdir, victim = tmp_path / "logs", tmp_path / "victim"
    logdir.mkdir()
    victim.write_bytes(b"keep")
    now = int(time.time())
    for second in range(now - 1, now + 10):  # the names TensorFlow's writer would choose in the next seconds
        os.symlink(victim, logdir / f"events.out.tfevents.{second:010d}.{socket.gethostname()}.profile-empty")
    listdir = os.listdir
    # the links appear after the check for an existing marker (the race another user would try to win)
    monkeypatch.setattr(os, "listdir", lambda path=".": [] if os.fspath(path) == str(logdir) else listdir(path))
    eager_profiler.maybe_create_event_file(str(logdir))
    monkeypatch.undo()
    assert victim.read_bytes() == b"keep"
    written = [name for name in markers(logdir) if not os.path.islink(logdir / name)]
    assert len(written) == 1 and len(markers(logdir)) == 11


def test_a_linked_directory_below_the_log_directory_is_refused(tmp_path):
    logdir, elsewhere = tmp_path / "logs", tmp_path / "elsewhere"
    logdir.mkdir()
    elsewhere.mkdir()
    os.symlink(elsewhere, logdir / "plugins")
    with pytest.raises(UnsafePathError, match="plugins: it is a symlink"):
        eager_profiler.save(str(logdir), b"trace")
    assert os.listdir(elsewhere) == []
