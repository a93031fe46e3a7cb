"""A long job's memory does not grow with the number of collective runs, and collectives stay bounded by the
collective timeout however they run."""

import pytest
from helpers.collectives import launch

RUNS = 10_000
MAX_KB_PER_RUN = 0.5


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_ten_thousand_allreduces_retain_at_most_half_a_kilobyte_each():
    result, ranks = launch("memory_worker.py", 2, args=[str(RUNS), "500"], timeout=280)
    assert result.returncode == 0, result.stderr[-3000:]
    for rank in (0, 1):
        assert ranks[rank]["value"] == [2.0] * 4
        assert ranks[rank]["kb_per_run"] <= MAX_KB_PER_RUN, ranks


@pytest.mark.timeout(200)
def test_an_allreduce_inside_a_while_loop_still_runs_and_is_exact():
    result, ranks = launch("memory_worker.py", 2, args=["5", "2", "loop"], timeout=180)
    assert result.returncode == 0, result.stderr[-3000:]
    assert ranks[0]["value"] == ranks[1]["value"] == [8.0] * 4  # 1 -> 2 -> 4 -> 8 over three iterations
