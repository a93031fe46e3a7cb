"""``call_with_room``: the call's result, arguments and exceptions are the function's own, and the function runs
from a frame large enough to start a frame-stack chunk of its own (so that deep calls inside have room)."""

import sys

import pytest

from npu_bridge.core.runtime import data_stack


def test_the_call_gives_the_functions_result_and_gets_its_arguments():
    assert data_stack.call_with_room(divmod, 17, 5) == (3, 2)
    assert data_stack.call_with_room(lambda: "no arguments") == "no arguments"


def test_an_exception_of_the_function_reaches_the_caller_as_it_is():
    def fail():
        raise KeyError("the function's own")

    with pytest.raises(KeyError, match="the function's own"):
        data_stack.call_with_room(fail)


def test_the_function_is_called_from_a_frame_of_more_than_256_kib():
    def caller_locals():
        return sys._getframe(1).f_code.co_nlocals

    slots = data_stack.call_with_room(caller_locals)
    assert slots * 8 > 256 * 1024  # 8-byte slots: past half of a 512 KiB chunk, so CPython starts a chunk for it
