"""Device id resolution: session_device_id > ASCEND_DEVICE_ID > DEVICE_ID > 0, and its errors."""

import pytest

from npu_bridge.core.device import device_id
from npu_bridge.core.runtime.errors import DeviceIdError


@pytest.mark.parametrize(
    "session, environ, expected",
    [
        (None, {}, (0, "default")),
        (None, {"DEVICE_ID": "5"}, (5, "DEVICE_ID")),
        (None, {"ASCEND_DEVICE_ID": "3", "DEVICE_ID": "5"}, (3, "ASCEND_DEVICE_ID")),
        (7, {"ASCEND_DEVICE_ID": "3", "DEVICE_ID": "5"}, (7, "session_device_id")),
        (0, {"ASCEND_DEVICE_ID": "3"}, (0, "session_device_id")),
        (-1, {"ASCEND_DEVICE_ID": "3"}, (3, "ASCEND_DEVICE_ID")),
        (None, {"ASCEND_DEVICE_ID": "", "DEVICE_ID": "2"}, (2, "DEVICE_ID")),
        (None, {"ASCEND_DEVICE_ID": " 4 "}, (4, "ASCEND_DEVICE_ID")),
    ],
)
def test_priority(session, environ, expected):
    assert device_id.resolve_with_source(session, environ) == expected
    assert device_id.resolve(session, environ) == expected[0]


@pytest.mark.parametrize(
    "environ, message",
    [
        (
            {"ASCEND_DEVICE_ID": "abc"},
            "ASCEND_DEVICE_ID is invalid, should be int, such as 0, 1, 2. Got ASCEND_DEVICE_ID='abc'.",
        ),
        (
            {"ASCEND_DEVICE_ID": "1_0"},
            "ASCEND_DEVICE_ID is invalid, should be int, such as 0, 1, 2. Got ASCEND_DEVICE_ID='1_0'.",
        ),
        ({"ASCEND_DEVICE_ID": "-2"}, "ASCEND_DEVICE_ID should be >= 0. Got ASCEND_DEVICE_ID='-2'."),
        ({"DEVICE_ID": "1.5"}, "DEVICE_ID is invalid, should be int, such as 0, 1, 2. Got DEVICE_ID='1.5'."),
        ({"DEVICE_ID": "-1"}, "DEVICE_ID should be >= 0. Got DEVICE_ID='-1'."),
        ({"DEVICE_ID": "٣"}, "DEVICE_ID is invalid, should be int, such as 0, 1, 2. Got DEVICE_ID='٣'."),
        (
            {"DEVICE_ID": "9" * 30},
            f"DEVICE_ID should be <= 9223372036854775807 (an int64). Got DEVICE_ID='{'9' * 30}'.",
        ),
        (
            {"ASCEND_DEVICE_ID": "x" * 300},
            "ASCEND_DEVICE_ID is invalid, should be int, such as 0, 1, 2. Got ASCEND_DEVICE_ID="
            f"'{'x' * 199}... (302 characters).",
        ),
    ],
)
def test_bad_variables(environ, message):
    with pytest.raises(DeviceIdError) as info:
        device_id.resolve(None, environ)
    assert str(info.value) == message


def test_bad_lower_priority_variable_is_not_read():
    assert device_id.resolve(None, {"ASCEND_DEVICE_ID": "1", "DEVICE_ID": "oops"}) == 1


def test_errors_are_value_errors():
    with pytest.raises(ValueError):
        device_id.resolve(None, {"DEVICE_ID": "x"})


@pytest.mark.parametrize(
    "session, message",
    [
        (-2, "session_device_id must be nonnegative integer; got -2."),
        ("1", "session_device_id is invalid, should be int, such as 0, 1, 2; got '1'."),
        (True, "session_device_id is invalid, should be int, such as 0, 1, 2; got True."),
    ],
)
def test_bad_session_device_id(session, message):
    with pytest.raises(DeviceIdError) as info:
        device_id.resolve(session, {})
    assert str(info.value) == message


def test_reads_os_environ_by_default(monkeypatch):
    monkeypatch.delenv("ASCEND_DEVICE_ID", raising=False)
    monkeypatch.setenv("DEVICE_ID", "6")
    assert device_id.resolve() == 6


@pytest.mark.parametrize(
    "text, expected",
    [("12", 12), (" -3 ", -3), ("+4", 4), ("1_0", None), ("", None), ("٣", None), ("0x1", None), ("9" * 5000, None)],
)
def test_parse_int(text, expected):
    assert device_id.parse_int(text) == expected
