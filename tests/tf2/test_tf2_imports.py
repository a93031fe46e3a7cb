"""Ascend TF2 scripts written for TF 2.4 / 2.6 with Keras 2.6 run here unchanged: after ``import npu_device`` user
code's ``import keras...`` (Keras 2.6 layout) and ``tensorflow.python.keras...`` get tf_keras 2.21, the
TensorFlow-internal modules that moved or vanished are found, and installed packages keep what they imported
before. The scripts run in fresh interpreters (the mapping wraps ``__import__`` for the whole process); the
path table is checked here against the installed tf_keras and TensorFlow."""

import importlib
import json
import os
import subprocess
import sys

import pytest
from helpers.paths import REPO_ROOT
from helpers.tf2 import SCRIPTS
from helpers.tf2 import run_script as _run

from npu_bridge.core.runtime import legacy_paths, user_code

KERAS_LIBRARY = """
import importlib
import keras

SEEN = {"keras": keras.__version__}
try:
    import keras.layers.core
    SEEN["keras.layers.core"] = "imported"
except ImportError as error:
    SEEN["keras.layers.core"] = type(error).__name__
from tensorflow.python.keras import layers

SEEN["tensorflow.python.keras.layers.Dense"] = layers.Dense.__module__
try:
    importlib.import_module("keras.layers.core")
    SEEN["import_module keras.layers.core"] = "imported"
except ImportError as error:
    SEEN["import_module keras.layers.core"] = type(error).__name__
"""


def _installed_keras_library(tmp_path):
    """A site-packages directory holding ``keras_library`` (KERAS_LIBRARY), an installed package that imports Keras."""
    site = tmp_path / "venv" / "lib" / "site-packages"
    site.mkdir(parents=True)
    (site / "keras_library.py").write_text(KERAS_LIBRARY)
    return site


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_copied_npu_convert_dropout_with_keras_2_6_imports_patches_tf_keras_dropout_and_trains(tmp_path):
    result, _ = _run("keras26_dropout_fit.py", tmp_path)
    assert result["same_class"] and result["patched"]  # keras.layers.core.Dropout is tf.keras.layers.Dropout
    assert result["training_calls"] >= 1  # the patched call built the training function's dropout
    assert result["seeds"] and all(seed > 0 for seed in result["seeds"])  # Graph._last_id under a global seed
    assert result["losses"][-1] < result["losses"][0] / 2 and result["accuracy"] > 0.8
    assert result["inference_repeats"]  # predict runs without dropout


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_tensorflow_python_keras_and_moved_tensorflow_internals_resolve_and_an_lstm_trains(tmp_path):
    result, _ = _run("tf_internal_imports.py", tmp_path, str(tmp_path / "profile"))
    assert result["lstm"] and result["loss_scale_optimizer"] and result["strategy"] and result["tensor_in_function"]
    assert result["backend"] == "float32"
    assert result["optimizer_v2"] == "tf_keras.src.optimizers.legacy.adam"  # Keras 2.6's optimizer generation
    assert result["keras_tensor"] == "tf_keras.src.engine.keras_tensor"
    assert result["generic_utils"] == [True, True, [3]]
    assert result["losses"][-1] < result["losses"][0] / 10
    assert result["variable"] == [0.5, 1.5]  # training_ops.resource_apply_gradient_descent: v -= 0.5 * 1
    assert result["last_id"] == [0, 3]  # two constants and an add
    assert result["profile"] and result["profiler_names"]
    assert list((tmp_path / "profile").glob("*.profile-empty"))  # TensorBoard's marker next to plugins/profile


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_an_installed_library_importing_keras_keeps_keras_3_while_the_script_gets_tf_keras(tmp_path):
    site = _installed_keras_library(tmp_path)
    result, _ = _run("installed_library_keeps_keras.py", tmp_path, pythonpath=[str(site)])
    library, user = result["library"], result["user"]
    assert library["keras"].startswith("3.") and result["sys.modules['keras']"] == library["keras"]
    assert library["keras.layers.core"] == "ModuleNotFoundError"  # Keras 3 has no such module, as before
    assert library["import_module keras.layers.core"] == "ModuleNotFoundError"
    assert library["tensorflow.python.keras.layers.Dense"].startswith("tensorflow.python.keras.")  # TensorFlow's copy
    assert user == {
        "keras": "2.21.0",
        "keras.layers.core.Dropout": "tf_keras.src.layers.regularization.dropout",
        "tensorflow.python.keras.layers.Dense": "tf_keras.src.layers.core.dense",
        "import_module keras.layers.core": "tf_keras.src.layers.core.dense",
    }


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_keras_2_6_imports_before_npu_device_need_python_m_npu_bridge_tf2(tmp_path):
    plain = _run("keras_before_npu_device.py", tmp_path, expect_ok=False)
    assert plain.returncode == 1 and "No module named 'keras.layers.core'" in plain.stderr
    result, _ = _run("keras_before_npu_device.py", tmp_path, "--epochs", "2", launcher=("-m", "npu_bridge.tf2"))
    assert result == {"same_class": True, "argv": ["--epochs", "2"]}


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_keras_optimizer_imported_before_npu_device_is_keras_2_6_s_under_python_m_npu_bridge_tf2(tmp_path):
    result, _ = _run("optimizer_before_npu_device.py", tmp_path, launcher=("-m", "npu_bridge.tf2"))
    assert result == {"adam": "tf_keras.src.optimizers.legacy.adam", "epochs": 2}


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_keras_3_imported_before_npu_device_stays_and_npu_device_says_so(tmp_path):
    result, stderr = _run("keras3_before_npu_device.py", tmp_path)
    assert result["early"].startswith("3.") and result["later"] == "tf_keras.src.layers.core.dense"
    assert "__main__ imported Keras 3 (`keras`) before npu_device was imported" in stderr


def _python_m_npu_bridge_tf2(argv, cwd, timeout=60):
    """``python -m npu_bridge.tf2 ARGV`` in ``cwd``, its output captured."""
    return subprocess.run(
        [sys.executable, "-m", "npu_bridge.tf2", *argv],
        cwd=cwd,
        env=dict(os.environ, PYTHONPATH=REPO_ROOT),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_python_m_npu_bridge_tf2_without_a_script_prints_its_usage(tmp_path):
    for argv, code in (([], 2), (["-m"], 2), (["missing.py"], 2), (["--help"], 0)):
        result = _python_m_npu_bridge_tf2(argv, tmp_path)
        assert result.returncode == code and "usage: python -m npu_bridge.tf2" in result.stderr, (argv, result.stderr)


NUMPY_1_SCRIPT = """
import json, subprocess, sys
import numpy as np
import npu_device

values = {"int": np.int is int, "sctypes": np.float32 in np.sctypes["float"], "nan": bool(np.isnan(np.NaN))}
child = "import numpy as np; print(np.asscalar(np.array([7])))"  # a Python the script starts gets it too
values["child"] = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True).stdout.strip()
print("RESULT " + json.dumps(values))
"""


@pytest.mark.slow
def test_py_compat_of_the_tf2_adapter_gives_back_numpy_1_names_here_and_in_child_pythons(tmp_path):
    (tmp_path / "numpy1.py").write_text(NUMPY_1_SCRIPT)

    plain = _python_m_npu_bridge_tf2(["numpy1.py"], tmp_path, timeout=120)
    assert plain.returncode != 0 and "module 'numpy' has no attribute 'int'" in plain.stderr
    result = _python_m_npu_bridge_tf2(["--py-compat", "numpy1.py"], tmp_path, timeout=120)
    assert result.returncode == 0, result.stderr
    line = next(line for line in result.stdout.splitlines() if line.startswith("RESULT "))
    assert json.loads(line[len("RESULT ") :]) == {"int": True, "sctypes": True, "nan": True, "child": "7"}
    assert result.stderr.count("numpy.int no longer exists; --py-compat provides it (write int instead)") == 1


@pytest.mark.parametrize(
    "path, first",
    [
        ("keras", "tf_keras.src"),
        ("keras.layers.core", "tf_keras.src.layers.core"),
        ("keras.utils.control_flow_util", "tf_keras.src.utils.control_flow_util"),
        ("tensorflow.python.keras.engine.keras_tensor", "tf_keras.src.engine.keras_tensor"),
        ("keras.optimizer_v2.adam", "tf_keras.src.optimizers.legacy.adam"),
        ("keras.optimizer_v2.learning_rate_schedule", "tf_keras.src.optimizers.schedules.learning_rate_schedule"),
        ("tensorflow.python.keras.layers.recurrent_v2", "tf_keras.src.layers.rnn"),
        ("tensorflow.python.training.training_ops", "tensorflow.python.training.training_ops"),  # when it exists
    ],
)
def test_paths_map_to_tf_keras_with_the_rename_table_first(path, first):
    assert legacy_paths.candidates(path)[0] == first


def test_other_paths_are_not_mapped_and_keras_roots_parents_and_combined_modules_are_views():
    assert legacy_paths.candidates("tensorflow.python.framework.ops") is None
    assert legacy_paths.candidates("tensorflow.keras.layers") is None  # tf.keras: TensorFlow's own choice
    assert legacy_paths.candidates("keras_cv") is None
    views = ["keras", "keras.layers", "tensorflow", "tensorflow.python.training", "keras.layers.merge"]
    views.append("keras.backend")  # a module, and the parent of Keras 2.2's keras.backend.tensorflow_backend
    assert all(legacy_paths.needs_view(p) for p in views)
    # (a Keras package is a view as well, decided once it is imported: legacy_modules.module)
    assert not any(legacy_paths.needs_view(p) for p in ["keras.layers.core", "keras.activations", "keras.optimizer_v1"])
    assert legacy_paths.in_keras("tensorflow.python.keras.layers") and not legacy_paths.in_keras("tensorflow.python")


@pytest.mark.parametrize("target", sorted({t for ts in legacy_paths.KERAS_MOVED.values() for t in ts}))
def test_every_keras_rename_target_exists_in_the_installed_tf_keras(target):
    # A tf_keras upgrade that moves a module again fails here, not in a user's script.
    assert importlib.import_module(target).__name__ == target


@pytest.mark.parametrize("old", sorted(legacy_paths.TF_MOVED))
def test_every_moved_tensorflow_module_is_missing_from_tensorflow_and_its_new_home_exists(old):
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(old)  # when TensorFlow has it again, the entry can go
    for target in legacy_paths.TF_MOVED[old]:
        assert importlib.import_module(target).__name__ == target


def test_user_code_is_the_script_and_its_files_not_installed_packages_or_npu_bridge(tmp_path):
    user = user_code.UserCode()
    site = str(tmp_path / "venv" / "lib" / "python3.11" / "site-packages" / "library.py")
    assert user.contains({"__name__": "__main__"})
    assert user.contains({"__name__": "models.resnet", "__file__": str(tmp_path / "models" / "resnet.py")})
    assert not user.contains({"__name__": "library", "__file__": site})
    assert not user.contains({"__name__": "json", "__file__": json.__file__})
    assert not user.contains({"__name__": "npu_device", "__file__": os.path.join(REPO_ROOT, "npu_device", "x.py")})
    assert not user.contains({"__name__": "frozen"})  # no file: not user code


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_tf1_mode_and_npu_device_imports_hold_together_and_libraries_keep_tensorflow_2(tmp_path):
    site = _installed_keras_library(tmp_path)
    result, _ = _run("tf1_mode_with_npu_device.py", tmp_path, launcher=("-m", "npu_bridge.tf1"), pythonpath=[str(site)])
    assert result["same_tensorflow"] and result["v1"] and result["doubled"] == [[2.0, 4.0]]
    assert result["dropout"] == "tf_keras.src.layers.regularization.dropout"
    assert result["dense"] == "tf_keras.src.layers.core.dense"
    assert result["library"]["keras"].startswith("3.")
    assert result["library"]["tensorflow.python.keras.layers.Dense"].startswith("tensorflow.python.keras.")


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_npu_run_tf2_maps_the_imports_of_every_python_a_shell_wrapper_starts(tmp_path):
    # A zoo wrapper runs `python3 train.py` in the background into a log: the script cannot be given the launcher.
    wrapper = tmp_path / "train_full_1p.sh"
    wrapper.write_text('#!/bin/bash\n"$PYTHON" "$SCRIPT" --epochs 2 > train.log 2>&1 &\nwait\ncat train.log\n')
    script = os.path.join(SCRIPTS, "keras_before_npu_device.py")
    env = dict(os.environ, PYTHONPATH=REPO_ROOT, PYTHON=sys.executable, SCRIPT=script, TF_CPP_MIN_LOG_LEVEL="2")
    launch = [sys.executable, "-m", "npu_bridge.core.launch"]
    result = subprocess.run(
        [*launch, "--tf2", "-n", "1", "--", "bash", str(wrapper)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    (line,) = [line for line in result.stdout.splitlines() if "RESULT " in line]
    assert json.loads(line.split("RESULT ", 1)[1]) == {"same_class": True, "argv": ["--epochs", "2"]}

    both = subprocess.run(
        [*launch, "--tf1", "--tf2", "-n", "1", "--", "bash", str(wrapper)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert both.returncode == 2 and "--tf1 and --tf2 exclude each other" in both.stderr
