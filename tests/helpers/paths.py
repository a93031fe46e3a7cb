"""Where things are: the checkout, tests/ and the scripts tests start as rank processes (tests/workers/).

Imports no TensorFlow (rank workers import it through ``helpers.collectives``).
"""

import os
import pathlib

TESTS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO_ROOT = os.path.dirname(TESTS_DIR)
WORKERS = os.path.join(TESTS_DIR, "workers")


def python_files(*tops):
    """The project's .py files below the repository folders ``tops`` (e.g. "npu_bridge", "hccl"), sorted."""
    return sorted(p for top in tops for p in pathlib.Path(REPO_ROOT, top).rglob("*.py"))
