"""The generated table of ``tensorflow.python.*`` modules and names TensorFlow 1.15 / 2.6 had and 2.21 moved
(``npu_bridge/core/runtime/legacy_paths_table.tsv``, written by ``tools/derive_legacy_paths.py``): it is what the
checked-in sources give, ordered by the zoo's use, never shadows what TensorFlow 2.21 has, and its most-used
entries resolve for user code in the TF1 mode and in the TF2 adapter."""

import csv
import importlib
import importlib.util
import json
import os
import subprocess
import sys

import pytest
from helpers.paths import REPO_ROOT

from npu_bridge.core.runtime import legacy_modules, legacy_paths

TOOL = os.path.join(REPO_ROOT, "tools", "derive_legacy_paths.py")
SERVED = ("moved", "hand")


def _rows():
    with open(legacy_paths.TABLE, encoding="utf-8") as f:
        return list(csv.DictReader((line for line in f if not line.startswith("#")), delimiter="\t"))


def _exists(path):
    try:
        return importlib.util.find_spec(path) is not None
    except ModuleNotFoundError:  # a parent is missing too
        return False


def _most_used(kinds, count, tf1_only_ok):
    """The most-used served rows that are not Keras rows, as (path, kind, target)."""
    picked = []
    for row in _rows():
        if row["status"] not in SERVED or row["kind"] not in kinds or row["path"].startswith("tensorflow.python.keras"):
            continue
        if not tf1_only_ok and "(the TF1 mode)" in row["note"]:
            continue
        if row["kind"] == "module" and row["status"] == "hand" and row["path"] not in legacy_paths.TF_MOVED:
            if not tf1_only_ok:
                continue
        picked.append((row["path"], row["kind"], row["target"]))
        if len(picked) == count:
            break
    return picked


def test_the_table_is_ordered_by_the_zoo_s_use_then_by_path_and_every_path_is_below_tensorflow_python():
    rows = _rows()
    keys = [(-int(row["zoo_dirs"]), row["path"]) for row in rows]
    assert keys == sorted(keys)
    assert len({row["path"] for row in rows}) == len(rows)
    assert all(row["path"].startswith("tensorflow.python") for row in rows)
    assert {row["status"] for row in rows} <= {"moved", "hand", "keras", "missing", "package"}
    assert all(row["note"] for row in rows if row["status"] == "missing")  # each unmappable path says why
    # the most-used moved TensorFlow internals lead the table
    assert int(rows[0]["zoo_dirs"]) >= int(rows[-1]["zoo_dirs"]) and int(rows[0]["zoo_dirs"]) > 10


def test_the_hand_overrides_of_legacy_paths_are_rows_of_the_table():
    rows = {row["path"]: row for row in _rows()}
    for old in legacy_paths.TF_MOVED_BY_HAND:
        assert rows[old]["status"] == "hand" and rows[old]["target"] == ",".join(legacy_paths.TF_MOVED[old])


def test_no_served_module_is_one_tensorflow_2_21_or_tf_keras_has():
    for row in _rows():
        if row["kind"] != "module" or row["status"] not in SERVED:
            continue
        rest = legacy_paths.keras_rest(row["path"])
        if rest is None:
            assert not _exists(row["path"]), f"{row['path']} exists in TensorFlow 2.21: the table must not shadow it"
        else:  # user code's tensorflow.python.keras is tf_keras (the Keras rule): tf_keras must lack the module
            assert not any(_exists(f"{base}.{rest}") for base in legacy_paths.KERAS_BASES), row["path"]


def test_every_generated_module_home_exists():
    for row in _rows():
        if row["kind"] == "module" and row["status"] == "moved":
            for target in row["target"].split(","):
                assert _exists(target), (row["path"], target)


def test_a_module_that_lost_names_answers_them_and_keeps_every_name_it_has():
    from tensorflow.python.framework import ops

    view = legacy_modules.module("tensorflow.python.framework.ops")
    assert isinstance(view, legacy_modules.ModuleView)
    assert view.Graph is ops.Graph and view.convert_to_tensor is ops.convert_to_tensor  # TensorFlow's own first
    registry = importlib.import_module("tensorflow.python.framework.tensor_conversion_registry")
    assert view.register_tensor_conversion_function is registry.register_tensor_conversion_function
    assert "register_tensor_conversion_function" in dir(view)
    for module, names in sorted(legacy_paths.MOVED_NAMES.items()):
        if module != "tensorflow.python.framework.ops":
            continue
        for name in names:
            if hasattr(ops, name):  # present in 2.21 (or added by npu_bridge): the real one is what user code gets
                assert getattr(view, name) is getattr(ops, name)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_regenerating_the_table_from_the_checked_in_sources_gives_the_same_file():
    result = subprocess.run(
        [sys.executable, TOOL, "table", "--check"], capture_output=True, text=True, timeout=280, check=False
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    assert "up to date" in result.stdout


SCRIPT = """
import importlib
import json
{prelude}
seen = {{}}
for path, kind, target in {entries!r}:
    module, _, name = path.rpartition(".")
    home, _, home_name = target.split(",")[0].partition(":")
    try:
        if kind == "module":  # the real module of its home, or a view named as the script names it
            value = __import__(path, globals(), None, ["*"])
            seen[path] = value.__name__ in (path, home)
        else:  # the very object at its new home
            value = getattr(__import__(module, globals(), None, [name]), name)
            expected = importlib.import_module(home)
            expected = getattr(expected, home_name) if home_name else expected
            seen[path] = value is expected or getattr(value, "__name__", 1) == getattr(expected, "__name__", 2)
    except Exception as error:
        seen[path] = "ERROR " + type(error).__name__ + ": " + str(error)
print("RESULT " + json.dumps(seen))
"""


def _run(tmp_path, launcher, prelude, entries):
    (tmp_path / "script.py").write_text(SCRIPT.format(prelude=prelude, entries=entries))
    env = dict(os.environ, PYTHONPATH=REPO_ROOT, TF_CPP_MIN_LOG_LEVEL="2", NPU_BRIDGE_TF1_QUIET="1")
    result = subprocess.run(
        [sys.executable, *launcher, "script.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    line = next(line for line in result.stdout.splitlines() if line.startswith("RESULT "))
    return json.loads(line[len("RESULT ") :])


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("mode", ["tf1", "tf2"])
def test_the_most_used_moved_paths_resolve_for_user_code(tmp_path, mode):
    entries = _most_used(("module",), 6, mode == "tf1") + _most_used(("name",), 10, mode == "tf1")
    assert len(entries) == 16
    launcher = ["-m", "npu_bridge.tf1"] if mode == "tf1" else []
    prelude = "" if mode == "tf1" else "import npu_device"
    seen = _run(tmp_path, launcher, prelude, entries)
    assert {path: seen[path] for path, _, _ in entries} == {path: True for path, _, _ in entries}
