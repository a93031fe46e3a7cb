"""The tests mirror npu_bridge/core: one folder per domain (plus repository/, tools/ and fuzz/), shared helpers in
the ``helpers`` package, and file names that are unique and spell their domain as its folder does."""

import collections
import pathlib

from helpers.paths import REPO_ROOT

ROOT = pathlib.Path(REPO_ROOT)
TESTS = ROOT / "tests"
DOMAINS = {p.parent.name for p in (ROOT / "npu_bridge" / "core").glob("*/__init__.py")}
OTHER_FOLDERS = {"repository", "tools", "fuzz"}  # the repository as a whole, tools/, the fuzz test and its cases
NOT_TESTS = {"helpers", "workers", "data", "__pycache__"}


def _test_folders():
    return sorted(p for p in TESTS.iterdir() if p.is_dir() and p.name not in NOT_TESTS)


def test_test_folders_mirror_the_domains_of_core():
    assert not sorted(p.name for p in TESTS.glob("*.py") if p.name != "conftest.py"), "tests go in tests/<domain>/"
    unknown = [p.name for p in _test_folders() if p.name not in DOMAINS | OTHER_FOLDERS]
    assert not unknown, f"tests/ folders that are no domain of npu_bridge/core: {unknown}"


def test_test_file_names_are_unique_and_spell_their_domain_as_its_folder():
    # pytest imports a test file of a folder without __init__.py under its basename: two equal names would clash.
    files = [p for folder in _test_folders() for p in folder.rglob("test_*.py")]
    counts = collections.Counter(p.name for p in files)
    assert not [name for name, n in counts.items() if n > 1], counts.most_common(3)
    packages = [p for p in TESTS.rglob("__init__.py") if p.relative_to(TESTS).parts[0] not in ("helpers", "data")]
    assert not packages, f"only tests/helpers/ is a package (test modules are imported by basename): {packages}"
    singular = {d[:-1]: d for d in DOMAINS | OTHER_FOLDERS if d.endswith("s")}  # test_collective_x -> collectives
    wrong = [p.name for p in files for s, d in singular.items() if p.name.startswith(f"test_{s}_")]
    assert not wrong, f"name these test_<domain>_... with the folder's spelling: {wrong}"
