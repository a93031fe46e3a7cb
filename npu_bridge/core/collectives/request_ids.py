"""Request ids of TensorFlow's distributed runtime that do not repeat in a long job.

TensorFlow 2.21 draws each request id of its gRPC runtime from a per-thread generator seeded with 32 bits, and
its master runs every step on a new thread; a worker refuses an id it saw among its last 100000, so after tens of
thousands of steps a run fails with ``AbortedError: The same RunGraph (Worker) request was received twice`` (a
2-rank job on ``NPU_BRIDGE_COLLECTIVES=tf`` failed at step 9101; ``benchmarks/collectives.py`` in 4 of 12 runs).
Before a rank starts its server, ``use_well_seeded()`` has the library give those ids a generator seeded with
256 bits (``ops/runtime/request_ids.cc``).
"""

from npu_bridge.core.runtime import log, native_library


def use_well_seeded():
    """Makes TensorFlow's request ids come from well-seeded generators in this process (repeating it changes
    nothing); warns once when the library cannot.

    Returns:
      True when they do.
    """
    if native_library.c_api().npu_bridge_unique_request_ids() == 1:
        return True
    log.warn_once(
        ("request-ids-not-reseeded",),
        "npu_bridge could not reseed TensorFlow's request ids (libtensorflow_cc's ThreadLocalNew64 import not found "
        "or not writable): runs through the rank's gRPC runtime may fail after tens of thousands of steps with "
        "'The same RunGraph (Worker) request was received twice'",
    )
    return False
