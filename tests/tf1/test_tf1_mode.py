"""The TF1 mode: Ascend TF1 scripts run as written (``python -m npu_bridge.tf1``, ``NPU_BRIDGE_TF1=1``,
``npu-run --tf1``), user code gets TensorFlow 1.x while installed packages keep TensorFlow 2, ``tf.contrib`` and
the MNIST reader work, and every TensorFlow name the model zoo uses resolves except a listed, reasoned set.

The mode wraps ``__import__`` for the whole process, so everything that installs it runs in a child process.
"""

import csv
import gzip
import os
import struct
import subprocess
import sys

import numpy as np
import pytest
from helpers.collectives import parse_results
from helpers.paths import REPO_ROOT, TESTS_DIR, WORKERS
from helpers.tf1 import run_tf1_script

from npu_bridge.core.runtime import user_code
from npu_bridge.core.runtime.errors import NotProvidedError, NpuArgumentError
from npu_bridge.core.tf1 import contrib, environment, facade, mnist, scope

DATA = os.path.join(TESTS_DIR, "data", "tf1")

# A training script written the way the zoo writes them: npu_init first, then `import tensorflow as tf`, flags,
# tf.app.run, a local module with a slim network (arg_scope, conv2d, batch_norm, fully_connected), contrib.layers
# and contrib.rnn names, UPDATE_OPS, an NpuOptimizer session.
NETWORK = """
import tensorflow as tf
import tensorflow.contrib.slim as slim
from tensorflow.contrib.layers.python.layers import initializers


def net(images, is_training):
    with slim.arg_scope([slim.conv2d, slim.fully_connected], weights_initializer=initializers.xavier_initializer()):
        net = slim.conv2d(images, 4, [3, 3], scope="conv1")
        net = slim.batch_norm(net, is_training=is_training, scope="bn1")
        net = slim.flatten(net)
        return slim.fully_connected(net, 10, activation_fn=None, scope="logits")
"""
SCRIPT = """
from npu_bridge.npu_init import *
import tensorflow as tf
import numpy as np
import network

flags = tf.app.flags
flags.DEFINE_integer("steps", 5, "training steps")
FLAGS = flags.FLAGS


def main(_):
    tf.set_random_seed(1)
    images = tf.placeholder(tf.float32, [None, 8, 8, 1])
    labels = tf.placeholder(tf.int64, [None])
    logits = network.net(images, True)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train_op = tf.train.MomentumOptimizer(0.05, 0.9).minimize(loss)
    cell = tf.contrib.rnn.MultiRNNCell([tf.contrib.rnn.BasicLSTMCell(4) for _ in range(2)])
    outputs, _ = tf.nn.dynamic_rnn(cell, tf.zeros([2, 3, 5]), dtype=tf.float32)
    config = tf.ConfigProto()
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    rng = np.random.RandomState(0)
    feed = {images: rng.rand(16, 8, 8, 1), labels: rng.randint(0, 10, 16)}
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        losses = [float(sess.run([loss, train_op], feed)[0]) for _ in range(FLAGS.steps)]
        rnn_shape = list(sess.run(outputs).shape)
    print("RESULT " + json.dumps({"name": "run", "value": {
        "losses": losses, "eager": tf.executing_eagerly(), "rnn": rnn_shape,
        "tf": type(tf).__name__, "slim_is_tf_slim": network.slim.conv2d.__module__.startswith("tf_slim")}}))


if __name__ == "__main__":
    import json
    tf.app.run()
"""


def _run(argv, tmp_path, env=None, timeout=240):
    full = dict(os.environ, PYTHONPATH=os.pathsep.join([REPO_ROOT, TESTS_DIR]), TF_CPP_MIN_LOG_LEVEL="2")
    full.pop(environment.MODE_VARIABLE, None)
    full.update(env or {})
    return subprocess.run(argv, cwd=tmp_path, env=full, capture_output=True, text=True, timeout=timeout, check=False)


@pytest.fixture
def zoo_script(tmp_path):
    (tmp_path / "network.py").write_text(NETWORK)
    (tmp_path / "train.py").write_text(SCRIPT)
    return tmp_path


def _check_training(result):
    assert result.returncode == 0, result.stdout + result.stderr
    run = parse_results("\n".join(f"[rank 0] {line}" for line in result.stdout.splitlines()))[0]["run"]
    assert run["eager"] is False and run["tf"] == "TensorFlow1" and run["slim_is_tf_slim"]
    assert run["rnn"] == [2, 3, 4]
    assert len(run["losses"]) == 3 and all(np.isfinite(run["losses"])) and run["losses"][-1] < run["losses"][0]


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_zoo_style_script_runs_unchanged_with_python_m_npu_bridge_tf1(zoo_script):
    result = _run([sys.executable, "-m", "npu_bridge.tf1", "train.py", "--steps", "3"], zoo_script)
    _check_training(result)
    assert result.stderr.count("npu_bridge TF1 mode: `import tensorflow` in user code gives TensorFlow 1.x") == 1
    quiet = _run(
        [sys.executable, "-m", "npu_bridge.tf1", "train.py", "--steps", "3"],
        zoo_script,
        env={environment.QUIET_VARIABLE: "1"},
    )
    _check_training(quiet)
    assert "TF1 mode" not in quiet.stderr


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_npu_bridge_tf1_variable_turns_the_mode_on_for_a_plain_python(zoo_script):
    plain = _run([sys.executable, "train.py", "--steps", "3"], zoo_script)
    assert plain.returncode != 0 and "No module named 'tensorflow.contrib'" in plain.stderr  # as written, on TF 2
    _check_training(_run([sys.executable, "train.py", "--steps", "3"], zoo_script, env={"NPU_BRIDGE_TF1": "1"}))


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_npu_run_tf1_reaches_a_grandchild_started_by_a_shell_wrapper(zoo_script):
    (zoo_script / "test").mkdir()
    wrapper = zoo_script / "test" / "train_full_1p.sh"
    wrapper.write_text(
        '#!/bin/bash\ncur_path=$(cd "$(dirname "$0")"; pwd)\npython3 ${cur_path}/../train.py --steps 3\n'
    )
    result = _run(
        [sys.executable, "-m", "npu_bridge.core.launch", "--tf1", "-n", "1", "--", "bash", str(wrapper)],
        zoo_script,
        env={"PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    run = parse_results(result.stdout)[0]["run"]
    assert run["eager"] is False and run["tf"] == "TensorFlow1"


SCOPING = """
import json, sys, multiprocessing
import tensorflow as tf
import tensorflow.compat.v1 as v1
from tensorflow.python.ops import math_ops
from tensorflow.contrib import framework
from tensorflow.examples.tutorials.mnist import input_data
import library  # installed: under a site-packages directory
import targetlib  # installed by pip install --target into a folder on PYTHONPATH
import own_helper  # the user's own module in that folder


def child(queue):
    import tensorflow as tf2
    queue.put(type(tf2).__name__)


if __name__ == "__main__":
    multiprocessing.set_start_method("spawn")
    queue = multiprocessing.Queue()
    process = multiprocessing.Process(target=child, args=(queue,))
    process.start()
    spawned = queue.get(timeout=120)
    process.join(60)
    print("RESULT " + json.dumps({"name": "scope", "value": {
        "user": type(tf).__name__, "user_placeholder": hasattr(tf, "placeholder"),
        "library": library.TF_TYPE, "library_placeholder": library.HAS_PLACEHOLDER,
        "target_library": targetlib.TF_TYPE, "own_helper": own_helper.TF_TYPE,
        "v1_contrib_slim": v1.contrib.slim.conv2d.__module__, "math_ops": math_ops.__name__,
        "arg_scope": framework.arg_scope.__module__, "mnist": input_data.read_data_sets.__module__,
        "spawned": spawned}}))
"""
LIBRARY = """
import tensorflow as tf
TF_TYPE = type(tf).__name__
HAS_PLACEHOLDER = hasattr(tf, "placeholder")
"""


HAND_MIGRATED_SLIM = """
import npu_bridge
import tensorflow.compat.v1 as tf
import tf_slim as slim

tf.disable_v2_behavior()
images = tf.placeholder(tf.float32, [None, 8, 8, 3])
with slim.arg_scope([slim.conv2d], normalizer_fn=slim.batch_norm, normalizer_params={"is_training": True}):
    net = slim.conv2d(images, 4, [3, 3], scope="conv1")
print("SHAPE", net.shape.as_list(), len(tf.get_collection(tf.GraphKeys.UPDATE_OPS)))
"""


@pytest.mark.timeout(120)
def test_a_hand_migrated_tf_slim_script_builds_batch_norm_with_npu_bridge_imported(tmp_path):
    # tf_slim 1.1.0 on TensorFlow 2.21 needs ops.Tensor and tf_keras.legacy_tf_layers: npu_bridge adds them when it
    # switches on, without the TF1 mode.
    (tmp_path / "migrated.py").write_text(HAND_MIGRATED_SLIM)
    result = _run([sys.executable, "migrated.py"], tmp_path, timeout=110)
    assert result.returncode == 0, result.stderr
    assert "SHAPE [None, 8, 8, 4] 2" in result.stdout


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_user_code_gets_tensorflow_1_and_installed_packages_keep_tensorflow_2(tmp_path):
    site = tmp_path / "venv" / "lib" / "site-packages"
    site.mkdir(parents=True)
    (site / "library.py").write_text(LIBRARY)
    target = tmp_path / "libs"  # pip install --target libs targetlib, and a module of the user's beside it
    (target / "targetlib").mkdir(parents=True)
    (target / "targetlib" / "__init__.py").write_text(LIBRARY)
    (target / "targetlib-1.0.dist-info").mkdir()
    (target / "targetlib-1.0.dist-info" / "RECORD").write_text(
        "targetlib/__init__.py,sha256=x,80\ntargetlib-1.0.dist-info/RECORD,,\n../../bin/targetlib,sha256=y,20\n"
    )
    (target / "own_helper.py").write_text(LIBRARY)
    (tmp_path / "script.py").write_text(SCOPING)
    env = {"PYTHONPATH": os.pathsep.join([REPO_ROOT, TESTS_DIR, str(site), str(target)])}
    result = _run([sys.executable, "-m", "npu_bridge.tf1", "script.py"], tmp_path, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    scope_seen = parse_results("\n".join(f"[rank 0] {line}" for line in result.stdout.splitlines()))[0]["scope"]
    assert scope_seen == {
        "user": "TensorFlow1",
        "user_placeholder": True,
        "library": "module",
        "library_placeholder": False,
        "target_library": "module",
        "own_helper": "TensorFlow1",
        "v1_contrib_slim": "tf_slim.layers.layers",
        "math_ops": "tensorflow.python.ops.math_ops",
        "arg_scope": "tf_slim.ops.arg_scope",
        "mnist": "npu_bridge.core.tf1.mnist",
        "spawned": "TensorFlow1",  # a spawned child starts in the mode too (sitecustomize)
    }


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_every_zoo_name_resolves_for_user_code_except_the_listed_gaps(tmp_path):
    names = os.path.join(DATA, "zoo_names.tsv")
    result = _run(
        [sys.executable, "-m", "npu_bridge.tf1", os.path.join(WORKERS, "tf1_names_worker.py"), names], tmp_path
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    found = parse_results("\n".join(f"[rank 0] {line}" for line in result.stdout.splitlines()))[0]["names"]
    with open(os.path.join(DATA, "known_gaps.tsv"), encoding="utf-8") as f:
        gaps = {row["name"]: row["reason"] for row in csv.DictReader(f, delimiter="\t")}
    unresolved = set(found["unresolved"])
    assert sorted(unresolved - set(gaps)) == [], "names that no longer resolve (or new gaps to explain)"
    assert sorted(set(gaps) - unresolved) == [], "names that resolve now: remove them from known_gaps.tsv"
    print(
        f"\nTF1 mode: {found['count'] - len(unresolved)} of {found['count']} zoo names resolve; weighted by the "
        f"directories using them {found['resolved_dirs']} of {found['all_dirs']}"
    )


# Closures measured on tests/data/tf1/zoo_dir_names.tsv (tools/zoo_names.py on the zoo at a2c3332a6): the model
# directories every TensorFlow name of whose training files resolves. Raise it when a change closes more.
CLOSURES_FLOOR = 422


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_zoo_closures_do_not_fall_below_the_floor(tmp_path):
    dir_names = os.path.join(DATA, "zoo_dir_names.tsv")
    result = _run(
        [sys.executable, "-m", "npu_bridge.tf1", os.path.join(WORKERS, "tf1_names_worker.py"), dir_names], tmp_path
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    found = parse_results("\n".join(f"[rank 0] {line}" for line in result.stdout.splitlines()))[0]["closures"]
    top = ", ".join(f"{name} {dirs}" for name, dirs, _ in found["blockers"][:15])
    print(
        f"\nTF1 mode: {found['closures']} of {found['dirs']} zoo model directories resolve every TensorFlow name"
        f" they use ({found['unresolved']} of {found['names']} names do not); largest stops: {top}"
    )
    with open(os.path.join(DATA, "known_gaps.tsv"), encoding="utf-8") as f:
        gaps = {row["name"] for row in csv.DictReader(f, delimiter="\t")}
    stopping = {name for name, _, _ in found["blockers"]}
    assert sorted(stopping - gaps) == [], "names that stop a directory and are not in known_gaps.tsv"
    assert found["closures"] >= CLOSURES_FLOOR, f"closures fell from {CLOSURES_FLOOR} to {found['closures']}"


def test_usage_errors_exit_with_2(tmp_path):
    for argv in ([], ["-m"], ["missing.py"], ["--py-compat"]):
        result = _run([sys.executable, "-m", "npu_bridge.tf1", *argv], tmp_path, timeout=60)
        assert result.returncode == 2, (argv, result.stderr)
        assert "usage: python -m npu_bridge.tf1 [--py-compat] SCRIPT" in result.stderr


def test_contrib_routes_lead_to_tf_slim_and_tensorflow_and_name_what_they_lack(caplog):
    import tensorflow as tf  # the real module, as the mode hands it to the shim
    import tf_slim

    root = contrib.ContribModule("", None, tf)
    assert root.slim.conv2d is tf_slim.conv2d
    assert root.layers.python.layers.utils.__name__ == "tf_slim.layers.utils"
    assert root.framework.arg_scope is tf_slim.arg_scope
    assert root.rnn.BasicLSTMCell is tf.compat.v1.nn.rnn_cell.BasicLSTMCell
    assert root.data.AUTOTUNE == tf.data.experimental.AUTOTUNE
    assert issubclass(root.lookup.HashTable, tf.compat.v1.lookup.StaticHashTable)  # with 1.15's shared_name
    assert root.rnn.LSTMBlockCell is tf.compat.v1.nn.rnn_cell.LSTMCell
    assert root.rnn.python.ops.gru_ops.GRUBlockCell is tf.compat.v1.nn.rnn_cell.GRUCell
    assert "LSTMBlockCell is tf.nn.rnn_cell.LSTMCell here" in caplog.text
    assert root.tpu.TPUEstimator is tf.compat.v1.estimator.tpu.TPUEstimator
    assert root.tpu.python.tpu.tpu_config.InputPipelineConfig.PER_HOST_V2 == 3
    assert root.tpu.python.tpu.tpu_function.get_tpu_context().number_of_shards is None
    assert root.tpu.bfloat16_scope is tf.compat.v1.tpu.bfloat16_scope  # TensorFlow's own, which works here
    assert root.learn.ModeKeys.INFER == "infer"
    assert root.learn.python.learn.datasets.mnist.read_data_sets is mnist.read_data_sets
    assert root.learn.python.learn.monitored_session.MonitoredSession is tf.compat.v1.train.MonitoredSession
    from tensorflow.python.ops import summary_ops_v2

    assert root.summary.scalar is summary_ops_v2.scalar  # TF 1.15's contrib.summary: (name, tensor, family, step)
    grid_rnn = root.grid_rnn  # importing a contrib module the mode has no route for works ...
    with pytest.raises(NotProvidedError, match=r"tf\.contrib\.grid_rnn\.Grid2LSTMCell is not provided by npu_bridge"):
        grid_rnn.Grid2LSTMCell  # noqa: B018 - ... using a name raises, naming it
    with pytest.raises(NotProvidedError, match=r"tf\.contrib\.layers\.no_such_layer is not provided"):
        root.layers.no_such_layer  # noqa: B018
    assert not hasattr(root, "no_such_module")


def test_tensorflow_2_names_compat_v1_lacks_come_from_tensorflow_2_and_say_so_once(caplog):
    import tensorflow as tf  # the real module, as the mode wraps it

    tensorflow1 = facade.TensorFlow1(tf, {})
    assert tensorflow1.summary.scalar is tf.compat.v1.summary.scalar  # compat.v1 first
    assert tensorflow1.summary.create_file_writer is tf.summary.create_file_writer  # then TensorFlow 2
    assert tensorflow1.summary.create_file_writer is tensorflow1.summary.create_file_writer
    assert tensorflow1.nn.gelu is tf.nn.gelu and tensorflow1.nn.relu is tf.compat.v1.nn.relu
    assert tensorflow1.io.gfile.exists is tf.io.gfile.exists
    assert caplog.text.count("tf.summary.create_file_writer is a TensorFlow 2 name") == 1
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        tensorflow1.nn.no_such_name  # noqa: B018


def test_user_code_is_the_script_directory_and_not_installed_packages(tmp_path, monkeypatch):
    (tmp_path / "models").mkdir()
    user = scope.tf1_user_code(str(tmp_path), environ={})
    assert user.contains_file(str(tmp_path / "train.py"))
    assert user.contains_file(str(tmp_path / "models" / "resnet.py"))
    assert not user.contains_file(str(tmp_path / ".venv" / "lib" / "site-packages" / "tf_slim" / "layers.py"))
    assert not user.contains_file(scope.__file__)  # npu_bridge itself
    assert not user.contains_file(os.__file__)  # the standard library
    assert not user.contains_file("/elsewhere/module.py")
    # a folder pip installed into (pip install --target libs): what its records list is installed; the rest is not
    libs = tmp_path / "libs"
    (libs / "old-1.0.egg-info").mkdir(parents=True)
    (libs / "old-1.0.egg-info" / "top_level.txt").write_text("oldmodule\n")
    (libs / "pkg-2.0.dist-info").mkdir()
    (libs / "pkg-2.0.dist-info" / "RECORD").write_text("pkg/__init__.py,,\n_pkg_native.cpython-311.so,,\n")
    monkeypatch.setattr(sys, "path", [*sys.path, str(libs)])
    in_libs = scope.tf1_user_code(str(tmp_path), environ={})
    assert not in_libs.contains_file(str(libs / "pkg" / "core.py"))
    assert not in_libs.contains_file(str(libs / "_pkg_native.cpython-311.so"))
    assert not in_libs.contains_file(str(libs / "oldmodule.py"))
    assert in_libs.contains_file(str(libs / "helper.py"))
    assert in_libs.contains_file(str(tmp_path / "models" / "resnet.py"))
    anywhere = user_code.UserCode()  # the TF2 adapter's rule, without roots
    assert not anywhere.contains_file(str(libs / "pkg" / "core.py")) and anywhere.contains_file(str(libs / "helper.py"))
    extra = scope.tf1_user_code(str(tmp_path), environ={environment.PATH_VARIABLE: "/elsewhere"})
    assert extra.contains_file("/elsewhere/module.py")
    children = environment.for_children({"PYTHONPATH": "/a"})
    assert children["NPU_BRIDGE_TF1"] == "1"
    assert children["PYTHONPATH"] == os.pathsep.join([environment.SITE_DIRECTORY, "/a"])
    # an empty entry (the working directory, as CANN's set_env.sh leaves one) stays; the site folder is there once
    again = environment.for_children({"PYTHONPATH": os.pathsep.join([environment.SITE_DIRECTORY, "/a", ""])})
    assert again["PYTHONPATH"] == os.pathsep.join([environment.SITE_DIRECTORY, "/a", ""])
    assert environment.for_children({})["PYTHONPATH"] == environment.SITE_DIRECTORY


def test_a_folder_the_script_puts_on_sys_path_later_holds_user_code_from_then_on(tmp_path, monkeypatch):
    (tmp_path / "main").mkdir()
    (tmp_path / "lib").mkdir()
    user = scope.tf1_user_code(str(tmp_path / "main"), environ={})
    monkeypatch.chdir(tmp_path / "main")
    assert user.contains_file(str(tmp_path / "main" / "train.py"))  # the first question: the roots are found
    assert not user.contains_file(str(tmp_path / "lib" / "base.py"))
    # PoseFix's config.py: sys.path.insert(0, osp.join(cfg.root_dir, 'lib')), after TensorFlow was imported
    monkeypatch.setattr(sys, "path", [os.path.join(str(tmp_path / "main"), "..", "lib"), *sys.path])
    assert user.contains_file(str(tmp_path / "lib" / "base.py"))
    assert user.contains_file(str(tmp_path / "main" / "train.py"))


def _idx(path, magic, array):
    with gzip.open(path, "wb") as f:
        f.write(struct.pack(">I", magic) + b"".join(struct.pack(">I", n) for n in array.shape) + array.tobytes())


@pytest.fixture
def mnist_dir(tmp_path):
    rng = np.random.RandomState(3)
    for prefix, count in (("train", 10), ("t10k", 4)):
        _idx(tmp_path / f"{prefix}-images-idx3-ubyte.gz", 2051, rng.randint(0, 256, (count, 28, 28)).astype(np.uint8))
        _idx(tmp_path / f"{prefix}-labels-idx1-ubyte.gz", 2049, (np.arange(count) % 10).astype(np.uint8))
    return tmp_path


def test_the_mnist_reader_reads_the_four_files_and_batches_across_epochs(mnist_dir):
    data = mnist.read_data_sets(str(mnist_dir), one_hot=True, validation_size=2, seed=7)
    assert (data.train.num_examples, data.validation.num_examples, data.test.num_examples) == (8, 2, 4)
    assert data.train.images.shape == (8, 784) and data.train.images.dtype == np.float32
    assert 0.0 <= data.train.images.min() and data.train.images.max() <= 1.0
    assert data.validation.labels.tolist() == np.eye(10)[[0, 1]].tolist()  # the first training images
    seen = [data.train.next_batch(3) for _ in range(3)]  # 9 of 8 images: the third batch crosses into epoch 2
    assert data.train.epochs_completed == 1
    first_epoch = np.concatenate([seen[0][1], seen[1][1], seen[2][1][:2]])
    assert sorted(first_epoch.argmax(axis=1).tolist()) == list(range(2, 10))  # every image once per epoch
    raw = mnist.read_data_sets(str(mnist_dir), dtype="uint8", reshape=False, validation_size=0)
    # TensorFlow 1.x gave unflattened images a depth axis: scripts feed them to [batch, 28, 28, 1] placeholders
    assert raw.train.images.shape == (10, 28, 28, 1) and raw.train.images.dtype == np.uint8
    assert raw.test.labels.tolist() == [0, 1, 2, 3]


def test_the_mnist_reader_never_downloads_and_names_what_is_missing(mnist_dir, tmp_path):
    (mnist_dir / "t10k-labels-idx1-ubyte.gz").unlink()
    with pytest.raises(FileNotFoundError, match="t10k-labels-idx1-ubyte.gz not found.*never downloads"):
        mnist.read_data_sets(str(mnist_dir))
    with pytest.raises(NpuArgumentError, match=r"batch_size 3: must be in \[1, 2\]"):
        mnist.DataSet(np.zeros((2, 28, 28), np.uint8), np.zeros(2)).next_batch(3)


def test_hparams_parse_and_set_keep_each_hyperparameter_s_type():
    import tensorflow as tf

    hparams_class = contrib.ContribModule("", None, tf).training.HParams
    hparams = hparams_class(learning_rate=0.1, layers=[64, 32], name="small", dropout=True, steps=10)
    assert (hparams.learning_rate, hparams.layers, hparams.name) == (0.1, [64, 32], "small")
    hparams.parse("learning_rate=3, layers=[128,64,32],name=big,dropout=false")
    assert hparams.values() == {
        "learning_rate": 3.0,
        "layers": [128, 64, 32],
        "name": "big",
        "dropout": False,
        "steps": 10,
    }
    assert isinstance(hparams.learning_rate, float)  # an int becomes a float parameter's float
    hparams.set_hparam("steps", 20)
    hparams.override_from_dict({"learning_rate": 0.5})
    hparams.add_hparam("warmup", 0.1)
    assert hparams.parse_json(hparams.to_json()).values() == hparams.values()
    assert "warmup" in hparams and hparams.get("missing", 7) == 7
    hparams.del_hparam("warmup")
    assert "warmup" not in hparams and not hasattr(hparams, "warmup")
    for action, match in (
        (lambda: hparams.parse("steps=1.5"), "Could not parse hparam 'steps' of type 'int' with value '1.5'"),
        (lambda: hparams.set_hparam("steps", 2.5), "Could not cast hparam 'steps' of type 'int' from value 2.5"),
        (lambda: hparams.set_hparam("dropout", 1), "Could not cast hparam 'dropout' of type 'bool'"),
        (lambda: hparams.parse("unknown=1"), "Unknown hyperparameter type for unknown"),
        (lambda: hparams.parse("layers=3"), "Must pass a list for multi-valued parameter: layers"),
        (lambda: hparams.add_hparam("steps", 1), "Hyperparameter name is reserved: 'steps'"),
        (lambda: hparams.add_hparam("values", 1), "Hyperparameter name is reserved: 'values'"),
    ):
        with pytest.raises(NpuArgumentError, match=match):
            action()


PY2_ERA = """
import collections, inspect, time, json
import numpy as np
import tensorflow as tf

start = time.clock()
from numpy.core.numeric import Inf, NINF
from scipy import interp  # SciPy up to 1.11 re-exported NumPy's functions
import scipy.linalg


def f(a, b=2, *rest, **kw):
    pass


spec = inspect.getargspec(f)
rows = [np.zeros(2), np.ones(2), np.ones(2)]
print("RESULT " + json.dumps({"name": "compat", "value": {
    "int": np.int is int, "float": np.float(3) == 3.0, "object": np.object is object,
    "asscalar": np.asscalar(np.array([5])), "nan": bool(np.isnan(np.NaN)), "inf": np.Inf == float("inf"),
    "product": int(np.product([2, 3])), "iterable": isinstance([], collections.Iterable),
    "argspec": [spec.args, spec.varargs, spec.keywords, list(spec.defaults)], "clock": isinstance(start, float),
    "sctypes": np.float32 in np.sctypes["float"] and np.uint8 in np.sctypes["uint"], "again": np.int is int,
    "infty": np.infty == float("inf"), "cast": str(np.cast["float32"]([1, 2]).dtype),
    "numeric": [Inf, NINF] == [float("inf"), -float("inf")],
    "scipy": [float(interp(1.5, [1, 2], [10, 20])), scipy.linalg.__name__],
    "stack": [list(np.stack(map(np.asarray, [[1, 2], [3, 4]])).shape), list(np.vstack(r for r in rows).shape),
              list(np.hstack(iter(rows)).shape), list(np.column_stack(iter(rows)).shape),
              list(np.stack(rows, axis=1).shape)]}}))
"""


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_py_compat_gives_back_removed_python_and_numpy_names_and_says_so_once(tmp_path):
    (tmp_path / "old.py").write_text(PY2_ERA)
    plain = _run([sys.executable, "-m", "npu_bridge.tf1", "old.py"], tmp_path)
    assert plain.returncode != 0 and "module 'time' has no attribute 'clock'" in plain.stderr
    result = _run([sys.executable, "-m", "npu_bridge.tf1", "--py-compat", "old.py"], tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    compat = parse_results("\n".join(f"[rank 0] {line}" for line in result.stdout.splitlines()))[0]["compat"]
    assert compat == {
        "int": True,
        "float": True,
        "object": True,
        "asscalar": 5,
        "nan": True,
        "inf": True,
        "product": 6,
        "iterable": True,
        "argspec": [["a", "b"], "rest", "kw", [2]],
        "clock": True,
        "sctypes": True,
        "again": True,
        "infty": True,
        "cast": "float32",
        "numeric": True,
        "scipy": [15.0, "scipy.linalg"],  # a submodule stays SciPy's own
        "stack": [[2, 2], [3, 2], [6], [2, 3], [2, 3]],  # iterators, as NumPy 1.16-1.23 stacked them
    }
    assert "Python-level compatibility on" in result.stderr
    assert "scipy.interp no longer exists; --py-compat provides it (write numpy.interp instead)" in result.stderr
    assert result.stderr.count("numpy.int no longer exists; --py-compat provides it (write int instead)") == 1
    assert result.stderr.count("np.stack / vstack / hstack of an iterator no longer exists") == 1
    assert "time.clock no longer exists" in result.stderr and "collections.Iterable no longer exists" in result.stderr


YAML_OF_PYYAML_5 = """
import json
import yaml

print("RESULT " + json.dumps({"name": "yaml", "value": {
    "load": yaml.load("a: [1, 2]"), "load_all": list(yaml.load_all("a: 1\\n---\\nb: 2")),
    "named": yaml.load("x: 1", Loader=yaml.SafeLoader), "positional": yaml.load("y: 2", yaml.FullLoader),
    "tuple": list(yaml.load("!!python/tuple [1, 2]"))}}))
"""


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_py_compat_reads_yaml_without_a_loader_as_pyyaml_5_did(tmp_path):
    """PyYAML 6 made load's Loader required; 38 zoo directories call yaml.load(f). With --py-compat the call reads
    with FullLoader, as PyYAML 5.1-5.4 did (Python tuples yes, arbitrary objects no), and says so once."""
    pytest.importorskip("yaml")
    (tmp_path / "config.py").write_text(YAML_OF_PYYAML_5)
    plain = _run([sys.executable, "-m", "npu_bridge.tf1", "config.py"], tmp_path)
    assert plain.returncode != 0 and "missing 1 required positional argument: 'Loader'" in plain.stderr
    result = _run([sys.executable, "-m", "npu_bridge.tf1", "--py-compat", "config.py"], tmp_path)
    assert _result(result, "yaml") == {
        "load": {"a": [1, 2]},
        "load_all": [{"a": 1}, {"b": 2}],
        "named": {"x": 1},
        "positional": {"y": 2},
        "tuple": [1, 2],
    }
    told = "yaml.load(stream) without a Loader no longer exists; --py-compat provides it"
    assert result.stderr.count(told) == 1 and "yaml.load_all(stream) without a Loader" in result.stderr
    (tmp_path / "unsafe.py").write_text("import yaml\nyaml.load('!!python/object/apply:os.getcwd []')\n")
    unsafe = _run([sys.executable, "-m", "npu_bridge.tf1", "--py-compat", "unsafe.py"], tmp_path)
    assert unsafe.returncode != 0 and "could not determine a constructor" in unsafe.stderr


def _result(result, name):
    assert result.returncode == 0, result.stdout + result.stderr
    return parse_results("\n".join(f"[rank 0] {line}" for line in result.stdout.splitlines()))[0][name]


def _with_library(tmp_path, script, library):
    """``script.py`` as user code and ``library.py`` under a site-packages directory, both on the path."""
    site = tmp_path / "venv" / "lib" / "site-packages"
    site.mkdir(parents=True)
    (site / "library.py").write_text(library)
    (tmp_path / "script.py").write_text(script)
    return {"PYTHONPATH": os.pathsep.join([REPO_ROOT, TESTS_DIR, str(site)])}


SUBMODULE_IMPORTS = """
import json
from tensorflow.nn import rnn_cell
from tensorflow.train import AdamOptimizer
from tensorflow.layers import dense
from tensorflow.nn import *
import tensorflow.train as train
import tensorflow.layers
import tensorflow as tf
import tensorflow_core
from tensorflow_core.python.ops import math_ops
import tensorflow_core.contrib.slim as core_slim
import importlib
from importlib import import_module
import library

losses_module = importlib.import_module("tensorflow.losses")  # vega's lookup of a loss by name
keras_core = import_module("keras.layers.core")

x = tf.placeholder(tf.float32, [None, 3])
loss = tf.reduce_sum(tf.square(dense(x, 2, name="d")))
step = train.GradientDescentOptimizer(0.01).minimize(loss)
outputs, _ = tf.nn.dynamic_rnn(rnn_cell.BasicLSTMCell(4), tf.zeros([2, 5, 3]), dtype=tf.float32)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    feed = {x: [[1.0, 2.0, 3.0]]}
    losses = [float(sess.run([loss, step], feed)[0]) for _ in range(3)]
    shape = list(sess.run(outputs).shape)
print("RESULT " + json.dumps({"name": "imports", "value": {
    "losses_fall": losses[2] < losses[0], "rnn": shape, "adam": AdamOptimizer is tf.train.AdamOptimizer,
    "rnn_cell": rnn_cell is tf.nn.rnn_cell, "star_relu": relu is tf.nn.relu, "layers": tensorflow.layers is tf.layers,
    "library_train_adam": library.TRAIN_HAS_ADAM, "library_nn_rnn_cell": library.NN_HAS_RNN_CELL,
    "tensorflow_core": [tensorflow_core is tf, math_ops.__name__, core_slim is tf.contrib.slim],
    "import_module": [losses_module is tf.losses, keras_core.Dense is tf.keras.layers.Dense,
                      importlib.import_module("json") is json, library.IMPORT_MODULE_LOSSES]}}))
"""
SUBMODULE_LIBRARY = """
import importlib
import tensorflow.nn
import tensorflow.train as train
NN_HAS_RNN_CELL = hasattr(tensorflow.nn, "rnn_cell")
TRAIN_HAS_ADAM = hasattr(train, "AdamOptimizer")
try:
    IMPORT_MODULE_LOSSES = importlib.import_module("tensorflow.losses").__name__
except ModuleNotFoundError as e:  # TensorFlow 2 has no module of that name
    IMPORT_MODULE_LOSSES = type(e).__name__
"""


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_submodule_imports_of_user_code_give_tensorflow_1_s_submodules_and_libraries_keep_tensorflow_2_s(tmp_path):
    env = _with_library(tmp_path, SUBMODULE_IMPORTS, SUBMODULE_LIBRARY)
    result = _run([sys.executable, "-m", "npu_bridge.tf1", "script.py"], tmp_path, env=env)
    assert _result(result, "imports") == {
        "losses_fall": True,
        "rnn": [2, 5, 4],
        "adam": True,
        "rnn_cell": True,
        "star_relu": True,
        "layers": True,
        "library_train_adam": False,  # TensorFlow 2's tensorflow.train
        "library_nn_rnn_cell": False,
        "tensorflow_core": [True, "tensorflow.python.ops.math_ops", True],  # TF 1.15's package behind tensorflow
        # importlib.import_module as an import statement at the call: user code's mapped, a library's real
        "import_module": [True, True, True, "ModuleNotFoundError"],
    }


INTEGRAL_FLOAT_SHAPES = """
import importlib, json
import numpy as np
import tensorflow as tf

w = tf.get_variable("w", [3, 3, 3, 8, 128/2])
z = tf.zeros([2, 4/2])
x = tf.placeholder(tf.float32, [None, 28*28/1])
r = tf.reshape(x, [-1, 28, 56/2])
n = tf.random_normal(shape=(2, np.float32(3)))
messages = []
for refused in (lambda: tf.reshape(x, [-1, 2.5]), lambda: tf.placeholder(tf.float32, shape=(None, 2.5))):
    try:
        refused()
    except TypeError as e:
        messages.append(str(e))
try:  # TensorFlow itself (what libraries get) is unchanged
    importlib.import_module("tensorflow").compat.v1.placeholder(tf.float32, [None, 64.0])
    real = "accepted"
except TypeError:
    real = "refused"
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    reshaped = sess.run(r, {x: np.ones((2, 784), np.float32)})
    print("RESULT " + json.dumps({"name": "shapes", "value": {
        "w": w.shape.as_list(), "zeros": sess.run(z).tolist(), "x": x.shape.as_list(), "r": list(reshaped.shape),
        "normal": list(sess.run(n).shape), "messages": messages, "real": real}}))
"""


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_integral_floats_are_shape_dimensions_and_other_floats_are_refused_naming_them(tmp_path):
    (tmp_path / "shapes.py").write_text(INTEGRAL_FLOAT_SHAPES)
    seen = _result(_run([sys.executable, "-m", "npu_bridge.tf1", "shapes.py"], tmp_path), "shapes")
    assert seen["w"] == [3, 3, 3, 8, 64] and seen["x"] == [None, 784]
    assert seen["zeros"] == [[0.0, 0.0], [0.0, 0.0]]
    assert seen["r"] == [2, 28, 28] and seen["normal"] == [2, 3]
    assert seen["messages"][0].startswith("tf.reshape: shape [-1, 2.5] holds 2.5, which is not a whole number")
    assert seen["messages"][1].startswith("tf.placeholder: shape (None, 2.5) holds 2.5")
    assert seen["real"] == "refused"


NOT_PROVIDED_IMPORTS = """
import json, sys
import tensorflow as tf
from tensorflow.contrib.grid_rnn import Grid2LSTMCell, GridRNNCell
from tensorflow.contrib.grid_rnn.python import ops as grid_ops
import tensorflow.contrib.ffmpeg.python.ffmpeg_ops as ffmpeg_ops
from tensorflow.contrib.no_such_module.python.ops import anything
from tensorflow.contrib.layers import fully_connected, no_such_layer

if sys.argv[1] == "call":
    Grid2LSTMCell(None, None)


def subclass():
    class Cell(GridRNNCell):
        pass


messages = []
for use in (lambda: grid_ops.grid_rnn_cell, lambda: ffmpeg_ops.decode_audio, lambda: anything.x,
            lambda: no_such_layer(1), subclass):
    try:
        use()
    except AttributeError as e:  # NotProvidedError is one
        messages.append(f"{type(e).__name__}: {e}")
print("RESULT " + json.dumps({"name": "contrib", "value": {
    "fully_connected": fully_connected.__module__, "messages": [m.split(" by npu_bridge")[0] for m in messages]}}))
"""


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_contrib_names_and_paths_the_mode_lacks_import_and_raise_not_provided_error_when_used(tmp_path):
    (tmp_path / "decode.py").write_text(NOT_PROVIDED_IMPORTS)
    unused = _run([sys.executable, "-m", "npu_bridge.tf1", "decode.py", "none"], tmp_path)
    assert _result(unused, "contrib") == {
        "fully_connected": "tf_slim.layers.layers",
        "messages": [
            "NotProvidedError: tf.contrib.grid_rnn.grid_rnn_cell is not provided",  # python.<x> segments are dropped
            "NotProvidedError: tf.contrib.ffmpeg.decode_audio is not provided",
            "NotProvidedError: tf.contrib.no_such_module.python.ops.anything.x is not provided",
            "NotProvidedError: tf.contrib.layers.no_such_layer is not provided",
            "NotProvidedError: tf.contrib.grid_rnn.GridRNNCell is not provided",
        ],
    }
    called = _run([sys.executable, "-m", "npu_bridge.tf1", "decode.py", "call"], tmp_path)
    assert called.returncode == 1
    assert (
        "NotProvidedError: tf.contrib.grid_rnn.Grid2LSTMCell is not provided by npu_bridge's TF1 mode (called)"
        in called.stderr
    )


VERSION_CHECK = """
import json, sys
import tensorflow as tf
from tensorflow.version import VERSION
import library

if not tf.__version__.startswith("1."):  # the check gpt-2-simple-style scripts make
    sys.exit("this script needs TensorFlow 1.x, found " + tf.__version__)
print("RESULT " + json.dumps({"name": "version", "value": {
    "seen": [tf.__version__, tf.VERSION, tf.version.VERSION, VERSION], "git": tf.GIT_VERSION,
    "library": library.VERSION}}))
"""


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_user_code_sees_tensorflow_1_15_s_version_and_libraries_the_real_one(tmp_path):
    env = _with_library(tmp_path, VERSION_CHECK, "import tensorflow\nVERSION = tensorflow.__version__\n")
    version = _result(_run([sys.executable, "-m", "npu_bridge.tf1", "script.py"], tmp_path, env=env), "version")
    assert version["seen"] == ["1.15.5"] * 4
    assert version["library"].startswith("2.")
    assert version["git"].startswith(f"v{version['library']}")  # TensorFlow's own: the real version in sight


@pytest.mark.slow
def test_a_script_importing_only_npu_init_gets_tensorflow_1_behaviour(tmp_path):
    # Many zoo scripts use only the `tf` of `from npu_bridge.npu_init import *`; their hooks fetch variables by
    # name ('global_step:0'), which gives the value only for TensorFlow 1.x reference variables.
    result = run_tf1_script(
        tmp_path,
        """
from npu_bridge.npu_init import *
import json
import tensorflow

w = tf.get_variable("w", initializer=tf.constant([1.0, 2.0]))
halved = tf.get_variable("halved", [2, 8 / 2])  # a Python 2 era dimension: an integral float
step = tf.train.get_or_create_global_step()
with tf.Session(config=npu_config_proto()) as sess:
    sess.run(tf.global_variables_initializer())
    values = sess.run(["w:0", "global_step:0"])
same = tf is tensorflow
print("RESULT " + json.dumps([type(w).__name__, values[0].tolist(), int(values[1]), halved.shape.as_list(), same]))
""",
    )
    # npu_init's tf is the mode's TensorFlow 1.x, the one `import tensorflow` gives
    assert result == ["RefVariable", [1.0, 2.0], 0, [2, 4], True]
