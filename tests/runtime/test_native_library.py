"""Loading the C++ library: once per process, and clear errors when it is missing or stale."""

import json
import os
import shutil

import pytest
import tensorflow as tf
from helpers.paths import REPO_ROOT
from helpers.processes import run_python

from npu_bridge.core.runtime import native_library
from npu_bridge.core.runtime.errors import NativeLibraryError


def test_library_is_loaded_once():
    assert native_library.is_loaded()
    assert native_library.load() is native_library.load()
    assert native_library.ops().npu_init is native_library.load().npu_init


def test_build_record_matches_running_tensorflow():
    path = os.path.join(os.path.dirname(native_library.library_path()), native_library.BUILD_INFO_NAME)
    with open(path, encoding="utf-8") as f:
        assert json.load(f)["tensorflow_version"] == tf.__version__


def copy_package(tmp_path):
    for package in ("npu_bridge", "hccl"):
        shutil.copytree(
            os.path.join(REPO_ROOT, package), tmp_path / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    return tmp_path


# npu_bridge switches itself on when TensorFlow is imported, before or after it.
IMPORTS = [
    "import npu_bridge; import tensorflow",
    "import tensorflow; import npu_bridge",
    "from npu_bridge.npu_init import *",
]


@pytest.mark.slow
@pytest.mark.parametrize("imports", IMPORTS)
def test_import_fails_clearly_when_library_is_missing(tmp_path, imports):
    root = copy_package(tmp_path)
    os.remove(root / "npu_bridge" / native_library.LIBRARY_NAME)
    result = run_python(imports, env={"PYTHONPATH": str(root)}, cwd=str(root))
    assert result.returncode != 0
    assert "NativeLibraryError" in result.stderr
    assert "is missing" in result.stderr and "--no-build-isolation" in result.stderr


@pytest.mark.slow
@pytest.mark.parametrize("imports", IMPORTS)
def test_import_fails_clearly_when_built_for_another_tensorflow(tmp_path, imports):
    root = copy_package(tmp_path)
    info_path = root / "npu_bridge" / native_library.BUILD_INFO_NAME
    info = json.loads(info_path.read_text())
    info["tensorflow_version"] = "2.20.0"
    info_path.write_text(json.dumps(info))
    result = run_python(imports, env={"PYTHONPATH": str(root)}, cwd=str(root))
    assert result.returncode != 0
    assert f"built against TensorFlow 2.20.0, but TensorFlow {tf.__version__} is running" in result.stderr
    assert "Rebuild" in result.stderr


def test_unreadable_build_record_is_reported(monkeypatch, tmp_path):
    monkeypatch.setattr(native_library, "library_path", lambda: str(tmp_path / native_library.LIBRARY_NAME))
    (tmp_path / native_library.LIBRARY_NAME).write_bytes(b"")
    with pytest.raises(NativeLibraryError, match="cannot read the build record"):
        native_library._check_build_info(tf.__version__)
