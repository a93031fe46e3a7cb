"""Exception dump (enable_exception_dump=1): when an op fails at run time its inputs are dumped, and the error
says where."""

import os

import numpy as np
import pytest
import tensorflow as tf
from helpers.config import npu_config

from npu_bridge.core import dump
from npu_bridge.core.dump import exception_directory
from npu_bridge.core.runtime.errors import NpuOptionError

v1 = tf.compat.v1


def lookup_graph():
    graph = tf.Graph()
    with graph.as_default():
        params = v1.placeholder(tf.float32, [3, 2], name="params")
        indices = v1.placeholder(tf.int32, [2], name="indices")
        looked_up = tf.gather(tf.sin(params, name="features"), indices, name="lookup")
        total = tf.reduce_sum(looked_up, name="total")
    return graph, params, indices, total


def test_a_failing_op_has_its_inputs_dumped_and_the_error_says_where(tmp_path, monkeypatch):
    monkeypatch.setenv("ASCEND_WORK_PATH", str(tmp_path))
    graph, params, indices, total = lookup_graph()
    values = np.arange(6, dtype=np.float32).reshape(3, 2)
    with v1.Session(graph=graph, config=npu_config(enable_exception_dump=1)) as sess:
        features = sess.run("features:0", {params: values})
        with pytest.raises(tf.errors.InvalidArgumentError) as raised:
            sess.run(total, {params: values, indices: [0, 5]})
    message = str(raised.value)
    assert "indices[1] = 5 is not in [0, 3)" in message  # TensorFlow's own message is kept
    directory = os.path.join(tmp_path, "extra-info", "data-dump", "0")
    (name,) = os.listdir(directory)
    path = os.path.join(directory, name)
    assert name.startswith("GatherV2.lookup.") and f"were written to {path}" in message
    assert "the 3 inputs of GatherV2 lookup (the op that failed, created at " in message
    assert f"{__file__}:{lookup_graph.__code__.co_firstlineno + 5} in lookup_graph)" in message
    inputs = [tensor.array() for tensor in dump.load(path).inputs]
    np.testing.assert_array_equal(inputs[0], features)
    assert inputs[1].tolist() == [0, 5] and inputs[2].tolist() == 0  # params, indices, axis


def test_the_default_lite_mode_leaves_the_error_as_tensorflow_raises_it(tmp_path, monkeypatch):
    monkeypatch.setenv("ASCEND_WORK_PATH", str(tmp_path))
    graph, params, indices, total = lookup_graph()
    with v1.Session(graph=graph, config=npu_config()) as sess:
        assert "close" not in vars(sess)  # nothing is instrumented or hooked
        with pytest.raises(tf.errors.InvalidArgumentError) as raised:
            sess.run(total, {params: np.zeros((3, 2), np.float32), indices: [7, 0]})
    assert "exception dump" not in str(raised.value) and not os.path.exists(tmp_path / "extra-info")


def _hostile_base(kind, tmp_path):
    if kind == "file":
        (tmp_path / "plain").write_text("x")
        return str(tmp_path / "plain"), "is not a directory (a file)"
    if kind == "below a file":
        (tmp_path / "plain").write_text("x")
        return str(tmp_path / "plain" / "sub"), "is not a directory (a file)"
    if kind == "FIFO":
        os.mkfifo(tmp_path / "pipe")
        return str(tmp_path / "pipe"), "is not a directory (a FIFO)"
    if kind == "device":
        return "/dev/zero", "is not a directory (a device)"
    if kind == "symlink loop":
        os.symlink(tmp_path / "loop", tmp_path / "loop")
        return str(tmp_path / "loop"), "Too many levels of symbolic links"
    if kind == "past PATH_MAX":
        return str(tmp_path.joinpath(*["a" * 200] * 21)), "too long for the system (at most 4095)"
    if kind == "past NAME_MAX":
        return str(tmp_path / ("b" * 256)), "longer than 255 bytes"
    assert kind == "not UTF-8"
    return os.fsdecode(os.fsencode(str(tmp_path)) + b"/bad\xff"), "not valid UTF-8"


@pytest.mark.parametrize(
    "kind", ["file", "below a file", "FIFO", "device", "symlink loop", "past PATH_MAX", "past NAME_MAX", "not UTF-8"]
)
@pytest.mark.parametrize("variable", ["NPU_COLLECT_PATH", "ASCEND_WORK_PATH"])
def test_an_unusable_exception_dump_directory_is_reported_when_the_session_is_created(
    variable, kind, tmp_path, monkeypatch
):
    base, problem = _hostile_base(kind, tmp_path)
    monkeypatch.delenv("NPU_COLLECT_PATH", raising=False)
    monkeypatch.setenv(variable, base)
    with pytest.raises(NpuOptionError) as raised:
        v1.Session(graph=tf.Graph(), config=npu_config(enable_exception_dump=1))
    message = str(raised.value)
    assert raised.value.key == variable and problem in message, message
    assert repr(base)[:100] in message and "Allowed: a writable directory" in message and len(message) < 1024


def test_the_exception_dump_directory_may_be_created_later(tmp_path, monkeypatch):
    monkeypatch.setenv("NPU_COLLECT_PATH", "")  # empty counts as unset
    monkeypatch.setenv("ASCEND_WORK_PATH", str(tmp_path / "new" / "work"))
    expected = str(tmp_path / "new" / "work" / "extra-info" / "data-dump" / "3")
    assert exception_directory.exception_dir(3) == expected
    with v1.Session(graph=tf.Graph(), config=npu_config(enable_exception_dump=1)):
        pass
    assert not os.path.exists(tmp_path / "new")  # made only when an op fails
    monkeypatch.setenv("NPU_COLLECT_PATH", str(tmp_path))
    assert exception_directory.exception_dir(0) == str(tmp_path / "extra-info" / "data-dump" / "0")
