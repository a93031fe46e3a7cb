"""examples/quickstart.py runs as a user runs it and trains."""

import os
import re

import pytest
from conftest import REPO_ROOT, run_python


@pytest.mark.slow
def test_quickstart_trains_and_exits_cleanly():
    result = run_python(os.path.join(REPO_ROOT, "examples", "quickstart.py"))
    assert result.returncode == 0, result.stderr
    assert "rank 0 of 1" in result.stdout
    match = re.search(r"first loss ([0-9.]+), final loss ([0-9.]+)", result.stdout)
    assert match, result.stdout
    first, final = float(match.group(1)), float(match.group(2))
    assert final < first / 5
