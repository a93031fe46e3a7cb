"""ASCEND_GLOBAL_LOG_LEVEL and ASCEND_SLOG_PRINT_TO_STDOUT drive the npu_bridge logger."""

import logging

import pytest
from helpers.processes import run_python

from npu_bridge.core.runtime import log


@pytest.mark.parametrize(
    "value,level",
    [("0", logging.DEBUG), ("1", logging.INFO), ("2", logging.WARNING), ("3", logging.ERROR), ("", logging.WARNING)],
)
def test_levels(value, level):
    log.configure({"ASCEND_GLOBAL_LOG_LEVEL": value})
    try:
        assert log.logger.level == level
    finally:
        log.configure({})


def test_level_4_is_off():
    log.configure({"ASCEND_GLOBAL_LOG_LEVEL": "4"})
    try:
        assert not log.logger.isEnabledFor(logging.CRITICAL)
    finally:
        log.configure({})


def test_bad_level_is_rejected():
    with pytest.raises(ValueError, match="ASCEND_GLOBAL_LOG_LEVEL has invalid value 'loud'"):
        log.configure({"ASCEND_GLOBAL_LOG_LEVEL": "loud"})


@pytest.mark.parametrize("value", ["yes", "true", "٣", "2"])
def test_bad_print_to_stdout_value_is_rejected(value):
    with pytest.raises(ValueError, match=f"ASCEND_SLOG_PRINT_TO_STDOUT has invalid value '{value}'. Allowed: 0"):
        log.configure({"ASCEND_SLOG_PRINT_TO_STDOUT": value})
    for good in ("0", " 1 ", ""):
        log.configure({"ASCEND_SLOG_PRINT_TO_STDOUT": good})
    log.configure({})


def test_a_huge_level_is_quoted_shortened():
    with pytest.raises(ValueError) as raised:
        log.configure({"ASCEND_GLOBAL_LOG_LEVEL": "9" * 100000})
    assert len(str(raised.value)) < 400 and "... (100002 characters)" in str(raised.value)


@pytest.mark.slow
def test_print_to_stdout():
    result = run_python(
        """
        from npu_bridge.core.runtime import log
        log.warn_once("k", "hello %s", "there")
        log.warn_once("k", "hello %s", "again")
    """,
        env={"ASCEND_SLOG_PRINT_TO_STDOUT": "1"},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("hello") == 1 and "hello there" in result.stdout
    assert "hello" not in result.stderr
