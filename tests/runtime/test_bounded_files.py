"""Hostile inputs: files users name (option files, rank tables) never hang a process or read without bound (FIFOs and
devices are refused, large files stop at a limit); huge, out-of-range or deeply nested values give an error
naming the option, with the value shortened."""

import os
import struct
import threading

import numpy as np
import pytest
import tensorflow as tf
from helpers.config import npu_config
from helpers.processes import run_python

from npu_bridge.core.dump import dump_file, dump_proto
from npu_bridge.core.dump.cli import main as dump_cli
from npu_bridge.core.runtime import atomic_write, bounded_files
from npu_bridge.core.runtime.errors import (
    DumpFormatError,
    FileReadError,
    NpuOptionError,
    OutputFileError,
    RankTableError,
)
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


# ---- dump files: sizes checked before reading, statistics within a fixed memory budget ----------------------------

TENSOR_BYTES = 256 << 20
MEMORY_BUDGET_KB = 64 << 10  # peak RSS above the same process after its imports


def big_dump_file(path, declared, data=None, data_bytes=TENSOR_BYTES):
    """A version 2 dump file with one float32 output whose header lists ``declared`` bytes; ``data_bytes`` of data
    follow, written piece by piece from ``data`` (callable(n) -> bytes), or a hole (a sparse file) when None."""
    message = dump_proto.DumpData(version="2.0", op_name="big/op", dump_time=1)
    item = message.output.add(data_type=dump_proto.data_type_of(np.dtype(np.float32)), size=declared)
    item.shape.dim.append(declared // 4)
    header = message.SerializeToString()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header)) + header)
        for _ in range(0 if data is None else data_bytes >> 22):
            f.write(data(1 << 22))
        f.truncate(8 + len(header) + data_bytes)
    return str(path)


_PEAK_OF_INFO = """
import sys
from npu_bridge.core.dump import cli

def high_water_kb():
    return next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM"))

before = high_water_kb()
code = cli.main(["info", sys.argv[1]])
print("PEAK_KB", high_water_kb() - before, "EXIT", code)
"""


def info_in_a_fresh_process(path):
    """(stdout, stderr, peak RSS in KB above the process after its imports) of ``npu-dump info path``."""
    done = run_python(_PEAK_OF_INFO, args=(path,), timeout=600)
    words = done.stdout.split()
    return done.stdout, done.stderr, int(words[words.index("PEAK_KB") + 1])


def test_a_dump_file_smaller_than_its_header_says_is_refused_before_reading(tmp_path, capsys):
    sparse = big_dump_file(tmp_path / "sparse.Op.big.1.1.1700000000000000", 2 * TENSOR_BYTES)  # 4 KB on disk
    with pytest.raises(DumpFormatError, match="header lists 536870912 data bytes, the file holds 268435456") as e:
        dump_file.load(sparse)
    assert str(e.value).startswith(f"{sparse}: ")
    assert dump_cli(["info", sparse]) == 2
    assert f"npu-dump: {sparse}: damaged Ascend dump file" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_npu_dump_info_on_a_size_mismatch_allocates_nothing(tmp_path):
    sparse = big_dump_file(tmp_path / "sparse.Op.big.1.1.1700000000000000", 2 * TENSOR_BYTES)
    out, err, peak = info_in_a_fresh_process(sparse)
    assert "EXIT 2" in out and sparse in err
    assert peak < 16 << 10, peak


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize("kind", ["sparse", "real"])
def test_npu_dump_info_on_a_256_mib_tensor_stays_within_64_mib(kind, tmp_path):
    rng = np.random.default_rng(0)
    data = None if kind == "sparse" else lambda n: rng.standard_normal(n // 4, dtype=np.float32).tobytes()
    path = big_dump_file(tmp_path / f"{kind}.Op.big.1.1.1700000000000000", TENSOR_BYTES, data)
    out, err, peak = info_in_a_fresh_process(path)
    assert "EXIT 0" in out, err
    assert "268435456 bytes  min " in out and "nan 0 inf 0" in out
    if kind == "sparse":
        assert "min 0 max 0 mean 0" in out
    assert peak < MEMORY_BUDGET_KB, f"{peak} KB above start"
