"""Ascend dump artifacts read and written in Python: both binary versions, names, device layouts, damage."""

import struct

import ml_dtypes
import numpy as np
import pytest

from npu_bridge.core.dump import dump_file, dump_layouts, dump_names, dump_proto
from npu_bridge.core.runtime.errors import DumpFormatError

ARRAYS = [
    np.arange(6, dtype=np.float32).reshape(2, 3),
    np.array([1.5, -2.0], np.float16),
    np.array([[True, False]]),
    np.array(7, np.int64),
    np.array([1, 2], ml_dtypes.bfloat16),
    np.zeros((0, 4), np.int32),
]


@pytest.mark.parametrize("version", [1, 2])
def test_files_round_trip_in_both_versions(tmp_path, version):
    path = tmp_path / "Add.scope_add.3.0.1700000000000001"
    dump_file.write_dump_file(path, "scope/add", inputs=ARRAYS[:3], outputs=ARRAYS[3:], version=version)
    loaded = dump_file.load(path)
    assert loaded.version == version and loaded.op_name == "scope/add" and loaded.dump_time > 0
    assert loaded.name == dump_names.DumpName("dump", "Add", "scope_add", 3, 0, 1700000000000001)
    assert [(t.io, t.index) for t in loaded.tensors] == [
        ("input", 0),
        ("input", 1),
        ("input", 2),
        ("output", 0),
        ("output", 1),
        ("output", 2),
    ]
    for tensor, expected in zip(loaded.tensors, ARRAYS):
        assert tensor.array().dtype == expected.dtype
        np.testing.assert_array_equal(tensor.array(), expected)
    assert [t.dtype_name for t in loaded.tensors] == [
        "DT_FLOAT",
        "DT_FLOAT16",
        "DT_BOOL",
        "DT_INT64",
        "DT_BF16",
        "DT_INT32",
    ]
    assert [t.shape for t in loaded.tensors] == [a.shape for a in ARRAYS]


def test_damaged_files_are_named_and_explained(tmp_path):
    path = tmp_path / "Mul.m.1.0.1700000000000000"
    dump_file.write_dump_file(path, "m", outputs=[np.ones(100, np.float32)])
    content = path.read_bytes()
    path.write_bytes(content[:-10])
    with pytest.raises(
        DumpFormatError,
        match=r"Mul\.m\.1\.0\.1700000000000000: damaged Ascend dump file.*"
        r"lists 400 data bytes, the file holds 390",
    ):
        dump_file.load(path)
    path.write_bytes(b"this is not a dump")
    with pytest.raises(DumpFormatError, match="not an Ascend dump file: as version 2, the header length"):
        dump_file.load(path)
    path.write_bytes(b"")
    with pytest.raises(DumpFormatError, match="not an Ascend dump file"):
        dump_file.load(path)
    with pytest.raises(FileNotFoundError, match="no such dump file"):
        dump_file.load(tmp_path / "missing")
    (tmp_path / "bad.npy").write_bytes(b"\x93NUMPY garbage")
    with pytest.raises(DumpFormatError, match=r"bad\.npy: not a readable \.npy file"):
        dump_file.load(tmp_path / "bad.npy")


@pytest.mark.parametrize(
    "name, expected",
    [
        (
            "Conv2D.net_conv.12.3.1700000000000123",
            dump_names.DumpName("dump", "Conv2D", "net_conv", 12, 3, 1700000000000123),
        ),
        (
            "Conv2D.net_conv.12.1700000000000123",
            dump_names.DumpName("dump", "Conv2D", "net_conv", 12, None, 1700000000000123),
        ),
        (
            "Conv2D.net_conv.3.12.1700000000000123.1.0.5.0",  # newer runtimes: stream id first, four more fields
            dump_names.DumpName("dump", "Conv2D", "net_conv", 12, 3, 1700000000000123),
        ),
        (
            "Opdebug.Node_OpDebug.12.3.1700000000000123",
            dump_names.DumpName("opdebug", "Opdebug", "Node_OpDebug", 12, 3, 1700000000000123),
        ),
        (
            "net_conv.0.1700000000000123.npy",
            dump_names.DumpName("golden", "", "net_conv", timestamp=1700000000000123, io="output", index=0),
        ),
        (
            "Conv2D.net_conv.12.3.1700000000000123.input.1.npy",
            dump_names.DumpName("converted", "Conv2D", "net_conv", 12, 3, 1700000000000123, "input", 1),
        ),
        ("mapping.csv", None),
        ("notes.txt", None),
        ("a.b.c", None),
    ],
)
def test_file_names(name, expected):
    assert dump_names.parse(name) == expected


def test_sanitize_and_mapping(tmp_path):
    assert dump_names.sanitize("a/b.c\\d e") == "a_b_c_d_e"
    (tmp_path / "mapping.csv").write_text("00000000000000000001,Mul.long_name.1.0.1700000000000000\n")
    assert dump_names.read_mapping(tmp_path) == {"00000000000000000001": "Mul.long_name.1.0.1700000000000000"}
    (tmp_path / "mapping.csv").write_text("only-one-column\n")
    with pytest.raises(ValueError, match="mapping.csv line 1: expected 'file name,original name'"):
        dump_names.read_mapping(tmp_path)


def test_device_layouts_are_undone():
    nchw = np.random.RandomState(0).normal(size=(2, 20, 3, 4)).astype(np.float16)
    padded = np.zeros((2, 32, 3, 4), np.float16)
    padded[:, :20] = nchw
    nc1hwc0 = padded.reshape(2, 2, 16, 3, 4).transpose(0, 1, 3, 4, 2)  # (N, C1, H, W, C0)
    logical, converted = dump_layouts.to_logical(nc1hwc0, dump_proto.FORMAT_NC1HWC0, nchw.shape)
    assert converted and np.array_equal(logical, nchw)
    logical, converted = dump_layouts.to_logical(nc1hwc0, dump_proto.FORMAT_NC1HWC0, (2, 3, 4, 20))
    assert converted and np.array_equal(logical, nchw.transpose(0, 2, 3, 1))  # NHWC original

    matrix = np.random.RandomState(1).normal(size=(5, 20, 40)).astype(np.float16)
    padded = np.zeros((5, 32, 48), np.float16)
    padded[:, :20, :40] = matrix
    nz = padded.reshape(5, 2, 16, 3, 16).transpose(0, 3, 1, 2, 4)  # (..., N1, M1, M0, N0)
    logical, converted = dump_layouts.to_logical(nz, dump_proto.FORMAT_FRACTAL_NZ, matrix.shape)
    assert converted and np.array_equal(logical, matrix)
    same, converted = dump_layouts.to_logical(matrix, dump_proto.FORMAT_ND, matrix.shape)
    assert not converted and same is matrix


def test_opdebug_payload_decoding():
    payload = bytearray(dump_file.OVERFLOW_PAYLOAD_SIZE)
    struct.pack_into("<6Q", payload, 256, 7, 1, 42, 0, 0, 0)
    struct.pack_into("<3Q", payload, 1024, 0, 0, 2)
    decoded = dump_file.decode_overflow(bytes(payload))
    assert decoded["AI Core"] == {
        "model_id": 7,
        "stream_id": 1,
        "task_id": 42,
        "task_type": 0,
        "pc_start": 0,
        "para_base": 0,
        "kernel_code": 0,
        "block_idx": 0,
        "status": 2,
    }
    assert decoded["DHA Atomic Add"]["status"] == 0
    assert dump_file.decode_overflow(b"\0" * 100) == {"raw": {"size": 100}}
