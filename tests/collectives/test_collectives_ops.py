"""Every hccl_ops operation across 2 and 4 real rank processes, on both collective paths (the job's shared memory
and TensorFlow's gRPC collectives): values for float32, float16 and int32, other HCCL dtypes, groups made with
create_group, and gradients (tests/workers/ops_worker.py)."""

import numpy as np
import pytest
from helpers.collectives import job_failure, launch, vector, weights

DTYPES = ("float32", "float16", "int32")
REDUCE = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min}


def _all(size, dtype="float32"):
    return np.stack([vector(k, dtype).astype(np.float64) for k in range(size)])


def _alltoall_expected(rank, size, count, data):
    """What ``rank`` receives when rank k sends count(k, j) elements of data(k) to rank j, contiguously."""
    parts = []
    for k in range(size):
        start = sum(count(k, j) for j in range(rank))
        parts.append(data(k)[start : start + count(k, rank)])
    return np.concatenate(parts)


def _expected(rank, size):
    x = _all(size)
    w = np.stack([weights(k) for k in range(size)]).astype(np.float64)
    out = {}
    for dtype in DTYPES:
        xs = _all(size, dtype)
        for name, fn in REDUCE.items():
            out[f"allreduce_{name}_{dtype}"] = fn(xs, axis=0)
        out[f"allgather_{dtype}"] = xs
        out[f"reduce_scatter_{dtype}"] = xs.sum(axis=0) + 10 * rank * size
    big = np.arange(300_001) % 1000
    factors = np.arange(1, size + 1)
    out["big_sum"] = int(big.sum() * factors.sum())
    out["big_max"] = int(big.sum() * size)
    out["big_float16"] = sum(big[-1001:] * f % 7 for f in factors)
    out["big_reduce_scatter"] = int(big.sum() * factors.sum() + size * rank * big.size)
    spread = np.arange(655_363, dtype=np.int64)
    out["big_allgather"] = [int(((spread * 7 + 13 * k) % 100003 * (spread % 5 + 1)).sum()) for k in range(size)]
    out["reduce_scatter_max"] = x.max(axis=0)
    out["allreduce_int8"] = np.array([100 * size, 3 * size]).astype(np.int8)
    out["allgather_uint8"] = np.array([[k, 255] for k in range(size)])
    out["broadcast"] = [vector(size - 1), [[size - 1] * 3], vector(size - 1, "float16")]
    out["reduce"] = x.sum(axis=0)
    out["broadcast_of_a_sum"] = x.sum(axis=0) * size
    out["receive"] = vector((rank - 1) % size)
    for n in (1, 5):
        out[f"all_to_all_v_{n}"] = _alltoall_expected(
            rank, size, lambda k, j, n=n: k + j + n, lambda k: np.arange(100) + 1000 * k
        )
    matrix = [[(i + j) % 3 + 1 for j in range(size)] for i in range(size)]
    out["all_to_all_v_c"] = _alltoall_expected(rank, size, lambda k, j: matrix[k][j], lambda k: np.arange(20) + 100 * k)
    holds = x == x.max(axis=0)
    out["grad_allreduce_sum"] = w.sum(axis=0)
    out["grad_allreduce_max"] = w.sum(axis=0) * holds[rank] / holds.sum(axis=0)
    out["grad_allreduce_prod"] = w.sum(axis=0) * np.prod(np.delete(x, rank, axis=0), axis=0)
    out["grad_broadcast"] = w.sum(axis=0) if rank == 0 else np.zeros(6)
    out["grad_allgather"] = w.sum(axis=0) * (rank + 1)
    out["grad_reduce_scatter"] = w.sum(axis=0)
    half = size // 2
    mine = list(range(half)) if rank < half else list(range(half, size))
    out["group_allreduce"] = x[mine].sum(axis=0)
    out["group_allgather"] = [[float(k)] for k in mine]
    out["group_rank"] = mine.index(rank)
    out["parity_and_world"] = [x[rank % 2 :: 2].sum(axis=0), [float(size)]]
    return out


def _check(results, size):
    assert sorted(results) == list(range(size))
    for rank in range(size):
        expected = _expected(rank, size)
        assert set(expected) <= set(results[rank]), sorted(set(expected) - set(results[rank]))
        for name, want in expected.items():
            got = results[rank][name]
            if name in ("broadcast", "parity_and_world"):  # parts of different shapes
                for g, e in zip(got, want):
                    np.testing.assert_allclose(
                        np.array(g, dtype=np.float64), np.array(e, dtype=np.float64), err_msg=f"rank {rank} {name}"
                    )
                continue
            tolerance = 2e-3 if "float16" in name else 1e-6
            np.testing.assert_allclose(
                np.array(got, dtype=np.float64),
                np.array(want, dtype=np.float64),
                rtol=tolerance,
                atol=tolerance,
                err_msg=f"rank {rank} {name}",
            )


SHM_TYPES = {
    "HcomShmAllReduce",
    "HcomShmAllGather",
    "HcomShmBroadcastSend",
    "HcomShmBroadcastRecv",
    "HcomShmReduceScatter",
    "HcomShmAllToAll",
}


@pytest.mark.slow
@pytest.mark.timeout(240)
@pytest.mark.parametrize("path", ["shm", "tf"])
@pytest.mark.parametrize("size", [2, 4])
def test_every_operation_on_every_rank(size, path):
    result, results = launch("ops_worker.py", size, env={"NPU_BRIDGE_COLLECTIVES": path}, timeout=220)
    assert result.returncode == 0, job_failure(result)
    _check(results, size)
    for rank in range(size):
        types = set(results[rank].pop("collective_types"))
        if path == "shm":  # every operation, send / receive included, runs on the segment
            assert SHM_TYPES <= types, types
            assert not {t for t in types if t.startswith("Collective")}, types
        else:
            assert not types & SHM_TYPES, types
