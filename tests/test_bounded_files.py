"""Hostile inputs: files users name (option files, rank tables) never hang a process or read without bound (FIFOs and
devices are refused, large files stop at a limit); huge, out-of-range or deeply nested values give an error
naming the option, with the value shortened."""

import os
import threading

import pytest
import tensorflow as tf
from conftest import npu_config

from npu_bridge.core.runtime import atomic_write, bounded_files
from npu_bridge.core.runtime.errors import FileReadError, NpuOptionError, OutputFileError, RankTableError
from npu_bridge.core.world import rank_table

FILE_OPTIONS = {
    "modify_mixlist": {"precision_mode": "allow_mix_precision"},
    "customize_dtypes": {"precision_mode": "force_fp16"},
    "op_precision_mode": {},
}


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "pipe"
    os.mkfifo(path)
    # A writer that never writes: a blocking open or read would wait forever (the test's timeout fails it).
    yield str(path)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("option", sorted(FILE_OPTIONS))
def test_option_files_refuse_a_fifo_at_once(option, fifo):
    with pytest.raises(NpuOptionError, match=f"{option}.*it is a FIFO, not a regular file"):
        tf.compat.v1.Session(config=npu_config(**{option: fifo}, **FILE_OPTIONS[option]))


@pytest.mark.timeout(60)
@pytest.mark.parametrize("option", sorted(FILE_OPTIONS))
def test_option_files_refuse_dev_zero_without_reading_it(option):
    with pytest.raises(NpuOptionError, match=f"{option}.*it is a character device"):
        tf.compat.v1.Session(config=npu_config(**{option: "/dev/zero"}, **FILE_OPTIONS[option]))


@pytest.mark.timeout(60)
def test_a_rank_table_that_is_a_fifo_or_a_device_is_refused(fifo):
    for path, kind in ((fifo, "a FIFO"), ("/dev/zero", "a character device"), ("/tmp", "a directory")):
        with pytest.raises(RankTableError, match=f"cannot read the file: it is {kind}"):
            rank_table.load(path)


def test_reads_stop_at_the_limit_and_name_it(tmp_path):
    big = tmp_path / "big.json"
    big.write_bytes(b" " * 5000)
    assert bounded_files.read_text(str(big), limit=5000) == " " * 5000
    with pytest.raises(FileReadError, match="larger than 4999 bytes") as raised:
        bounded_files.read_text(str(big), limit=4999)
    assert isinstance(raised.value, OSError) and raised.value.filename == str(big)


def test_missing_and_binary_files_say_why(tmp_path):
    with pytest.raises(FileReadError, match="No such file") as raised:
        bounded_files.read_text(str(tmp_path / "missing"))
    assert raised.value.strerror == "No such file or directory"
    binary = tmp_path / "table.json"
    binary.write_bytes(b'{"a": "\xff\xfe"}')
    with pytest.raises(FileReadError, match="not UTF-8 text .* at byte 7"):
        bounded_files.read_text(str(binary))


@pytest.mark.timeout(60)
def test_a_fifo_with_a_writer_is_still_refused_without_blocking(fifo):
    # Even a FIFO that would deliver data is not a file; the reader must not wait for the writer either.
    writer = threading.Thread(target=lambda: open(fifo, "w").close(), daemon=True)
    writer.start()
    with pytest.raises(FileReadError, match="FIFO"):
        bounded_files.read_text(fifo)
    try:  # release the writer, which waits for a reader
        os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
    except OSError:
        pass
    writer.join(5)


@pytest.mark.parametrize(
    "options, match",
    [
        ({"iterations_per_loop": "99999999999999999999"}, "iterations_per_loop.*outside the 64-bit integer range"),
        ({"hccl_timeout": "-9223372036854775809"}, "hccl_timeout.*outside the 64-bit integer range"),
        (
            {"profiling_mode": True, "profiling_options": "[" * 5000 + "]" * 5000},
            "profiling_options.*nested too deeply",
        ),
    ],
)
def test_hostile_option_values_name_the_option(options, match):
    with pytest.raises(NpuOptionError, match=match):
        tf.compat.v1.Session(config=npu_config(**options))


def test_a_huge_value_is_shortened_in_the_message():
    with pytest.raises(NpuOptionError, match=r"precision_mode.*\(100002 characters\)") as raised:
        tf.compat.v1.Session(config=npu_config(precision_mode="x" * 100000))
    assert len(str(raised.value)) < 2000


def test_a_deeply_nested_rank_table_is_a_json_error(tmp_path):
    path = tmp_path / "table.json"
    path.write_text("[" * 3000 + "]" * 3000)
    with pytest.raises(RankTableError, match="not valid JSON: the JSON is nested too deeply"):
        rank_table.load(str(path))


@pytest.mark.timeout(60)
def test_output_files_refuse_special_files_and_bad_names_naming_them(fifo, tmp_path):
    long_path = os.path.join(str(tmp_path), *["a" * 200] * 25)  # past PATH_MAX
    for path, reason in (
        (fifo, "it is a FIFO, not a regular file"),
        ("/dev/null", "it is a character device, not a regular file"),
        (str(tmp_path), "it is a directory, not a regular file"),
        (str(tmp_path / "gone" / "out.csv"), f"its directory {tmp_path / 'gone'} does not exist"),
        (str(tmp_path / ("b" * 300)), "File name too long"),
        (long_path, "File name too long"),
    ):
        with pytest.raises(OutputFileError) as raised:
            atomic_write.write_output(path, "text", "result CSV")
        message = str(raised.value)
        assert message.startswith("cannot write the result CSV ") and message.endswith(reason)
        assert path[:100] in message and len(message) < 400
    name = tmp_path / ("c" * 250)  # the longest names still work: the temporary file's name is bounded
    atomic_write.write_output(str(name), "text", "result CSV")
    assert name.read_text() == "text" and sorted(os.listdir(tmp_path)) == sorted([name.name, "pipe"])
