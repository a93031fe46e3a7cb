"""TensorFlow's request ids come from well-seeded generators in a rank (``collectives/request_ids.py``): with
TensorFlow's 32-bit seeds a long job on its gRPC runtime fails a step as a duplicate request."""

import pytest
from helpers.processes import run_python


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_request_ids_are_reseeded_and_fresh_threads_draw_distinct_ids():
    result = run_python(
        """
        import ctypes, os, threading
        import tensorflow as tf
        from npu_bridge.core.collectives import request_ids

        assert request_ids.use_well_seeded() and request_ids.use_well_seeded()  # again: the slot already points there
        library = ctypes.CDLL(os.path.join(os.path.dirname(tf.__file__), "libtensorflow_cc.so.2"))
        unique_id = library._ZN10tensorflow18GetUniqueRequestIdEv
        unique_id.restype = ctypes.c_int64
        ids = []
        for _ in range(3000):  # a new thread each, as TensorFlow's master runs each step
            thread = threading.Thread(target=lambda: ids.append(unique_id()))
            thread.start()
            thread.join()
        print("IDS", len(ids), len(set(ids)), 0 in ids)
        """,
        timeout=110,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "IDS 3000 3000 False" in result.stdout
    assert "could not reseed" not in result.stderr
