"""Runs a deep, call-heavy piece of Python (TensorFlow's import) with room on CPython's frame stack
(``call_with_room``).

CPython 3.11+ keeps the frames of Python calls in chunks of a per-thread stack and gives a chunk back to the
operating system as soon as the first frame in it returns. A loop that keeps calling a function whose frame falls
just past the end of a chunk therefore maps and unmaps a fresh chunk on every call. TensorFlow's import, nested
under ``from npu_bridge.npu_init import *``, did that 7,000 to 67,000 times depending on its depth (67,000: 0.4 s of
system time in every process; benchmarks/start_and_exit.py). ``call_with_room`` calls the function from one frame
large enough to start a chunk of its own, half of which it leaves free: every frame the call nests fits after it,
and the chunk goes back once, when the call returns.
"""

import types

_SLOTS = 33_000  # 8-byte slots: a 264 KB frame, which makes CPython start a 512 KiB chunk (16 KiB doubled)


def _roomy_caller():
    def call_in_roomy_frame(function, args):
        return function(*args)

    code = call_in_roomy_frame.__code__
    names = code.co_varnames + tuple(f"_free_{i}" for i in range(_SLOTS))
    try:
        code = code.replace(co_varnames=names, co_nlocals=len(names))
    except (TypeError, ValueError):  # an interpreter whose code objects take no extra locals: call directly
        return call_in_roomy_frame
    return types.FunctionType(code, {}, call_in_roomy_frame.__name__)


_call = _roomy_caller()


def call_with_room(function, *args):
    """Returns ``function(*args)``, called from a frame that starts a frame-stack chunk with room to spare."""
    return _call(function, args)
