"""tools/zoo_harness runs model directories of an Ascend/ModelZoo-TensorFlow checkout unchanged and classifies
each: here on tests/data/zoo, five zoo-style entries written for this test (a TF1 MNIST trainer, and a TF2 Keras
trainer that imports tf.keras before npu_device and downloads MNIST, which pass; a TF1 trainer whose fp16 0/0 trains
only under Ascend's saturation mode, which passes on the simulated backend its error advises; a Python 2 script; a
restore of pretrained weights that cannot be made)."""

import importlib.util
import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest
from helpers.paths import REPO_ROOT, TESTS_DIR

HARNESS = os.path.join(REPO_ROOT, "tools", "zoo_harness")
ZOO = os.path.join(TESTS_DIR, "data", "zoo")


def _harness(*args, timeout=400):
    env = dict(os.environ, PYTHONPATH=REPO_ROOT)
    env.pop("NPU_BRIDGE_TF1", None)
    return subprocess.run(
        [sys.executable, HARNESS, *args], env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def test_the_draw_is_seeded_and_lists_tf1_and_tf2_entries():
    first = _harness("--zoo", ZOO, "--seed", "5", "--tf1", "2", "--tf2", "1", "--list")
    again = _harness("--zoo", ZOO, "--seed", "5", "--tf1", "2", "--tf2", "1", "--list")
    assert first.returncode == 0, first.stderr
    assert first.stdout == again.stdout
    kinds = [line.split()[0] for line in first.stdout.splitlines()]
    assert sorted(kinds) == ["tf1", "tf1", "tf2"]
    assert all(line.endswith("train_performance_1p.sh") for line in first.stdout.splitlines())


@pytest.mark.parametrize(
    "args, told",
    [
        (["--zoo", "/nonexistent/zoo"], "--zoo '/nonexistent/zoo' is not a folder"),
        (["--zoo", ZOO, "--tf1", "-1"], "--tf1 -1 is out of range"),
        (["--zoo", ZOO, "--steps", "0"], "--steps 0 is out of range"),
        (["--zoo", ZOO, "--timeout", "0"], "--timeout 0.0 is not a positive number of seconds"),
        (["--zoo", TESTS_DIR, "--list"], "has no TensorFlow/ folder"),
    ],
)
def test_bad_arguments_are_named(args, told):
    result = _harness(*args)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert told in result.stderr


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_draw_trains_the_runnable_entries_and_says_why_the_others_stop(tmp_path):
    out = tmp_path / "run"
    result = _harness("--zoo", ZOO, "--tf1", "4", "--tf2", "1", "--out", str(out), "--timeout", "200")
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads((out / "report.json").read_text())
    outcomes = {os.path.basename(r["dir"]): (r["outcome"], r["kit"]) for r in report["results"]}
    assert outcomes == {
        "SoftmaxMnist_ID0001_for_TensorFlow": ("pass", "mnist"),
        "DenseMnist_ID0002_for_TensorFlow2.X": ("pass", "mnist"),
        "Python2Tagger_ID0003_for_TensorFlow": ("script", None),
        "Pretrained_ID0004_for_TensorFlow": ("data", None),
        "BoxIou_ID0005_for_TensorFlow": ("pass", "mnist"),
    }, [(r["dir"], r["cause"]) for r in report["results"]]
    steps = {os.path.basename(r["dir"]): r["steps"] for r in report["results"]}
    assert steps["SoftmaxMnist_ID0001_for_TensorFlow"] == 3  # ended at the step limit, not after its 1000 steps
    assert report["summary"]["tf1"] == {
        "entries": 4,
        "outcomes": {"pass": 2, "script": 1, "data": 1},
        "runnable": 2,
        "passed": 2,
        "passed_as_advised": 1,
    }
    assert "tf1: passed 2 of 2 runnable, 1 of them as an error advised (4 drawn)" in result.stdout
    # The saturating entry failed on the default backend with the advice, and passed where it pointed.
    advised = next(r for r in report["results"] if r["dir"].endswith("BoxIou_ID0005_for_TensorFlow"))
    assert advised["backend"] == "ascend" and advised["first_run"]["outcome"] == "ours"
    assert advised["cause"].startswith("on the ascend backend (NPU_BRIDGE_DEVICE_TARGET=ascend), as the first run")
    first = next((out / "entries").glob("*_BoxIou_ID0005_for_TensorFlow.default-backend"))
    first_log = (first / "model" / "test" / "output" / "0" / "train_0.log").read_text()
    assert "Nan in summary histogram for: iou" in first_log and "(NPU_BRIDGE_DEVICE_TARGET=ascend)" in first_log
    assert "step 1 loss" in (out / "entries" / first.name.split(".")[0] / "model/test/output/0/train_0.log").read_text()
    assert (
        "| TensorFlow/contrib/nlp/Python2Tagger_ID0003_for_TensorFlow | tf1 | - | script |"
        in (out / "report.md").read_text()
    )
    # The copies ran, not the checkout: nothing was written into tests/data/zoo.
    assert not [name for _, _, files in os.walk(ZOO) for name in files if name.endswith(".log")]
    # A second run resumes: every entry is already measured, nothing runs again.
    again = _harness("--zoo", ZOO, "--tf1", "4", "--tf2", "1", "--out", str(out), "--timeout", "200", timeout=120)
    assert again.returncode == 0 and json.loads((out / "report.json").read_text())["results"] == report["results"]
    # Classified again, the entry run as advised keeps its first run and its backend.
    judged = _harness("--zoo", ZOO, "--tf1", "4", "--tf2", "1", "--out", str(out), "--reclassify", timeout=120)
    assert judged.returncode == 0 and json.loads((out / "report.json").read_text())["results"] == report["results"]


def _processes_running(marker):
    """The ids of the processes whose command line holds ``marker``."""
    found = []
    for name in os.listdir("/proc"):
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    found.append(int(name))
        except (OSError, ValueError):
            continue
    return found


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_sigterm_ends_the_running_entrys_processes_and_the_same_command_resumes(tmp_path):
    marker = "287.4321"  # the entry's sleep, found by its command line
    model = tmp_path / "zoo" / "TensorFlow" / "contrib" / "cv" / "Sleeper_ID0009_for_TensorFlow"
    (model / "test").mkdir(parents=True)
    (model / "test" / "train_performance_1p.sh").write_text(f"#!/bin/bash\nsleep {marker} &\nwait\n")
    out = tmp_path / "out"
    command = [sys.executable, HARNESS, "--zoo", str(tmp_path / "zoo"), "--tf1", "1", "--tf2", "0", "--out", str(out)]
    env = dict(os.environ, PYTHONPATH=REPO_ROOT)
    harness = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not _processes_running(marker) and time.monotonic() < deadline and harness.poll() is None:
            time.sleep(0.2)
        assert _processes_running(marker), "the entry never started"
        harness.send_signal(signal.SIGTERM)
        stdout, stderr = harness.communicate(timeout=60)
        assert harness.returncode == 143, stdout + stderr
        assert "stopped by SIGTERM during [1/1] TensorFlow/contrib/cv/Sleeper_ID0009_for_TensorFlow" in stderr
        assert "keeps the 0 entries measured, and the same command resumes" in stderr
        deadline = time.monotonic() + 30
        while _processes_running(marker) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _processes_running(marker) == [], "the entry's processes outlived the harness"
    finally:
        if harness.poll() is None:
            harness.kill()
            harness.communicate(timeout=30)
        for pid in _processes_running(marker):
            os.kill(pid, signal.SIGKILL)


def _tool_module(name):
    sys.path.insert(0, HARNESS)
    try:
        return __import__(name)
    finally:
        sys.path.remove(HARNESS)


def test_the_paths_a_training_script_names_under_its_data_path_lead_to_the_kit(tmp_path):
    data_paths = _tool_module("data_paths")
    data = tmp_path / "data"
    kit = tmp_path / "kit"
    kit.mkdir()
    data.mkdir()
    for name in ("part-00000-of-00002.tfrecord", "part-00001-of-00002.tfrecord"):
        (kit / name).write_bytes(b"records")
        os.symlink(kit / name, data / name)
    os.symlink(".", data / "data")  # a kit's alias
    os.symlink(kit / "part-00000-of-00002.tfrecord", data / "part.tfrecord")  # a second name of one file
    script = (
        "python3 run.py --input_files_dir=${data_path}/wikipedia_128 --eval_dir=$data_path/a/b\n"
        "  --input_file=${data_path}/data/news_1.tfrecord --init_checkpoint=${data_path}/model/bert_model.ckpt\n"
        '  --escape="${data_path}/../../etc" --glob=${data_path}/x/*.json --var=${data_path}/${task}\n'
        "  --train_dir=${data_path}/../corpus --kit=${data_path}/../kit/more\n"
    )
    assert data_paths.referenced(script) == [
        "wikipedia_128",
        "a/b",
        "data/news_1.tfrecord",
        "model/bert_model.ckpt",
        "../corpus",
        "../kit/more",
    ]
    made = data_paths.link(script, str(data))
    assert made == ["wikipedia_128", "a", "a/b", "data/news_1.tfrecord", "model", "../corpus"]
    # one level up is the entry's own folder: made there, next to the data folder, unless the name is taken
    assert sorted(os.listdir(tmp_path / "corpus")) == sorted(os.listdir(data / "wikipedia_128"))
    assert not (kit / "more").exists()
    # a folder a loader reads every file of holds the kit's files only
    assert sorted(os.listdir(data / "wikipedia_128")) == [
        "part-00000-of-00002.tfrecord",
        "part-00001-of-00002.tfrecord",
        "part.tfrecord",
    ]
    assert (data / "a" / "b" / "part-00001-of-00002.tfrecord").read_bytes() == b"records"
    assert os.path.realpath(data / "news_1.tfrecord") == str(kit / "part-00000-of-00002.tfrecord")
    assert not (data / "model" / "bert_model.ckpt").exists()  # weights are not made up
    assert not (tmp_path / "etc").exists()


def test_a_process_killed_without_a_word_is_an_entry_out_of_resources():
    classify = _tool_module("classify")
    killed = {"argv": ["/usr/bin/python3", "-m", "albert.run_pretraining"], "pid": 7, "steps": 0}
    records = [{**killed, "ended": "killed", "exit_code": None, "exception": None}]
    outcome, cause = classify.classify(records, "/m", "/d", "bert-pretraining", False)
    assert outcome == "resources"
    assert "-m albert.run_pretraining was killed by a signal" in cause


def test_a_tensor_missing_from_the_graph_is_not_missing_data():
    classify = _tool_module("classify")
    message = "The name 'apply_grads/overflow_status_reduce_all:0' refers to a Tensor which does not exist."
    frame = {
        "file": "/venv/lib/python3.11/site-packages/tensorflow/python/client/session.py",
        "line": 1,
        "function": "f",
    }
    error = {"type": "builtins.ValueError", "message": message + " ... in the graph.", "frames": [frame]}
    records = [{"argv": ["x"], "pid": 1, "steps": 0, "ended": "exception", "exit_code": None, "exception": error}]
    assert classify.classify(records, "/m", "/d", "bert-pretraining", False)[0] == "ours"


def test_a_wrapper_that_wants_another_path_stops_for_data_even_after_the_launcher_recorded_its_exit():
    classify = _tool_module("classify")
    launcher = {"argv": ["npu-run"], "pid": 3, "steps": 0, "ended": "exit", "exit_code": 1, "exception": None}
    output = '[rank 0] [Error] para "model_path" must be config\nnpu-run: rank 0 exited with code 1\n'
    assert classify.classify([launcher], "/m", "/d", None, False, output) == (
        "data",
        "the shell wrapper wants --model_path, which the harness cannot make",
    )


def test_an_ascend_feature_that_needs_npu_silicon_is_reported_apart_and_not_counted_as_runnable():
    classify = _tool_module("classify")
    frame = {"file": "/m/host_cache.py", "line": 314, "function": "swap"}
    message = "npu_bridge.npu_cpu.npu_cpu_ops.embeddingrankid is not supported off the NPU: Ascend AI CPU ops"
    error = {"type": "npu_bridge.core.runtime.errors.NotSupportedOffNpuError", "message": message, "frames": [frame]}
    records = [{"argv": ["x"], "pid": 1, "steps": 0, "ended": "exception", "exit_code": None, "exception": error}]
    outcome, cause = classify.classify(records, "/m", "/d", None, False)
    assert outcome == "npu-only" and cause.endswith("at /m/host_cache.py:314 (swap)")
    summary = classify.summarize([{"kind": "tf1", "outcome": "npu-only"}, {"kind": "tf1", "outcome": "pass"}])
    assert summary["tf1"]["runnable"] == 1


def test_a_file_our_reader_finds_missing_is_data_not_ours():
    classify = _tool_module("classify")
    frames = [
        {"file": "/m/imageloader.py", "line": 17, "function": "load_datasets"},
        {"file": "/work/main/npu_bridge/core/tf1/mnist.py", "line": 129, "function": "read_data_sets"},
    ]
    message = "MNIST file /d/MNIST_data/train-images-idx3-ubyte.gz not found: put the four MNIST .gz files in /d"
    error = {"type": "builtins.FileNotFoundError", "message": message, "frames": frames}
    records = [{"argv": ["x"], "pid": 1, "steps": 0, "ended": "exception", "exit_code": None, "exception": error}]
    outcome, cause = classify.classify(records, "/m", "/d", "cifar10", False)
    assert outcome == "data" and cause.endswith("(the cifar10 kit's files did not fit)")


def test_tensorflow_reading_a_folder_of_the_data_as_a_file_or_a_file_as_a_folder_is_data():
    # a RoBERTa pretraining loader takes every name in its data folder as a TFRecord file, and meets a folder
    classify = _tool_module("classify")
    kind = "tensorflow.python.framework.errors_impl.FailedPreconditionError"
    session = "/v/site-packages/tensorflow/python/client/session.py"
    message = "Graph execution error:\n\n/d/Data/BookCorpus/pretraining_data/val2014; Is a directory"
    outcome, cause = classify.classify(_failed(kind, message, session), "/m", "/d", "parsed-tfrecord", False)
    assert outcome == "data" and "a loader took a folder of the data path for a file" in cause
    elsewhere = _failed(kind, "/elsewhere/val2014; Is a directory", session)  # not the data path: as before
    assert classify.classify(elsewhere, "/m", "/d", "parsed-tfrecord", False)[0] == "ours"
    # a folder next to the data path that the wrapper names (--input_files_dir=${data_path}/../wikipedia_128) and
    # the harness fills too; the model's own folder is not one
    traceback = 'File "/e/1/model/test/../src/run_pretraining.py", line 749\n'  # the model's folder named first
    beside = _failed(kind, traceback + "/e/1/wikipedia_128/val2017; Is a directory", session)
    assert classify.classify(beside, "/e/1/model", "/e/1/data", "coco", False)[0] == "data"
    in_model = _failed(kind, "/e/1/model/val2017/x; Is a directory", session)
    assert classify.classify(in_model, "/e/1/model", "/e/1/data", "coco", False)[0] == "ours"
    # a GeoNet loader reads <image>/0_cam.txt from a kit's file list, which names the kits' folder, not the data path
    message = "Graph execution error:\n\n/k/image-lists-1/images/image_0000.jpg/0_cam.txt; Not a directory"
    records = _failed(kind, message, session)
    assert classify.classify(records, "/m", "/d", "image-lists", False, "", "/k")[0] == "data"
    assert classify.classify(records, "/m", "/d", "image-lists", False)[0] == "ours"  # no kit folder given


def test_a_wrapper_that_cannot_copy_weights_from_the_data_path_and_never_trains_is_data():
    # DenseDepth's wrapper copies densenet169 weights out of the data path; the script then ends without a step
    classify = _tool_module("classify")
    records = [{"argv": ["train.py"], "pid": 1, "steps": 0, "ended": "exit", "exit_code": None, "exception": None}]
    output = "[rank 0] cp: cannot stat '/d/dataset/densenet169_notop.h5': No such file or directory\n"
    outcome, cause = classify.classify(records, "/m", "/d", "image-globs", False, output)
    assert outcome == "data" and "could not copy /d/dataset/densenet169_notop.h5" in cause
    elsewhere = output.replace("/d/", "/elsewhere/")  # not the data path: the script's own business, as before
    assert classify.classify(records, "/m", "/d", "image-globs", False, elsewhere)[0] == "script"


def test_a_step_count_derived_from_imagenet_sized_data_is_a_data_mismatch():
    classify = _tool_module("classify")
    frames = [
        {"file": "/m/vgg19/trainer.py", "line": 66, "function": "train"},
        {"file": "/work/main/npu_bridge/core/tf_estimator/estimator.py", "line": 207, "function": "_train"},
    ]
    error = {"type": "NpuArgumentError", "message": "Must specify max_steps > 0, given: -4496", "frames": frames}
    records = [{"argv": ["x"], "pid": 1, "steps": 0, "ended": "exception", "exit_code": None, "exception": error}]
    outcome, cause = classify.classify(records, "/m", "/d", "imagenet-tfrecord", False)
    assert outcome == "data" and "smaller than the script assumes" in cause


def _fake_model(tmp_path, files):
    model = tmp_path / "model"
    for name, text in files.items():
        (model / name).parent.mkdir(parents=True, exist_ok=True)
        (model / name).write_text(text)
    return model


def _kit_data(tmp_path, model):
    """The kit data_kits picks for ``model`` and the data folder it makes."""
    data_kits = _tool_module("data_kits")
    kits = data_kits.choose_all(str(model))
    data = tmp_path / "data"
    data_kits.make_all(kits, str(data), str(tmp_path / "kits"), seed=3, model_dir=str(model))
    return (kits[0] if kits else None), data


_MAT_LOADER = """
import scipy.io as sio
def getData(filename):
    load_data = sio.loadmat(filename)
    y = load_data['y']
    X = load_data['X'].transpose(3, 0, 1, 2)
    return X, y
file = ("%s/train_32x32.mat" % (args.data_path))
sio.savemat('./coef.mat', dict(ACC=acc))
datapath = args.data_path + args.mat + '.mat'
data = sio.loadmat(datapath)
count = data['num_modalities'][0][0]
img = data['modality_' + str(i)]
"""


def test_a_mat_file_the_loader_names_holds_the_keys_it_reads(tmp_path):
    model = _fake_model(tmp_path, {"read_data.py": _MAT_LOADER, "test/train_full_1p.sh": "python3 x.py --mat USPS\n"})
    kit, data = _kit_data(tmp_path, model)
    assert kit == "named-arrays"
    import scipy.io

    svhn = scipy.io.loadmat(str(data / "train_32x32.mat"))
    samples = svhn["y"].shape[0]
    assert svhn["X"].transpose(3, 0, 1, 2).shape == (samples, 32, 32, 3)  # stored so the loader's transpose fits
    assert svhn["y"].shape == (samples, 1) and 1 <= svhn["y"].min() and svhn["y"].max() <= 9 and samples >= 64
    usps = scipy.io.loadmat(str(data / "USPS.mat"))  # args.mat + '.mat', --mat from the wrapper
    assert usps["num_modalities"][0][0] == 2 and usps["modality_1"].shape[0] >= 64
    assert not (data / "coef.mat").exists()  # written by the script, not read


def test_an_npz_file_gets_keys_a_placeholder_shape_and_valid_sparse_matrices(tmp_path):
    loader = """
import numpy as np
mnist_cluttered = np.load(os.path.join(args.data_path, 'mnist_sequence_5x5.npz'))
X_train, y_train = mnist_cluttered['X_train'], mnist_cluttered['y_train']
with np.load(os.path.join(data_path, 'cora_full.npz')) as f:
    features = sp.csr_matrix((f['attr_data'], f['attr_indices'], f['attr_indptr']), shape=f['attr_shape'])
x = tf.placeholder(tf.float32, [None, 1600])
"""
    model = _fake_model(tmp_path, {"train.py": loader})
    kit, data = _kit_data(tmp_path, model)
    assert kit == "named-arrays"
    import numpy as np
    import scipy.sparse

    with np.load(data / "mnist_sequence_5x5.npz") as f:
        samples = f["y_train"].shape[0]
        assert f["X_train"].shape == (samples, 1600) and f["y_train"].shape == (samples,) and samples >= 64
    with np.load(data / "cora_full.npz") as f:
        matrix = scipy.sparse.csr_matrix((f["attr_data"], f["attr_indices"], f["attr_indptr"]), shape=f["attr_shape"])
    assert matrix.shape == (samples, 32) and matrix.nnz >= samples


def test_a_data_file_the_model_ships_is_used_instead_of_the_kits_guess(tmp_path):
    import numpy as np

    loader = """
import numpy as np
moon_data = np.load(opts.data_path)
x_s, y_s = moon_data['x_s'], moon_data['y_s']
parser.add_argument('--data_path', type=str, default='./moon_data.npz')
Y = tf.placeholder(tf.float32, shape=[None, 1])
"""
    model = _fake_model(tmp_path, {"swd.py": loader})
    np.savez(model / "moon_data.npz", x_s=np.zeros((300, 2), np.float32), y_s=np.ones((300, 1), np.float32))
    kit, data = _kit_data(tmp_path, model)
    assert kit == "named-arrays"
    assert os.path.realpath(data / "moon_data.npz") == os.path.realpath(model / "moon_data.npz")
    with np.load(data / "moon_data.npz") as f:
        assert f["y_s"].shape == (300, 1)


def test_an_h5_file_named_in_a_flag_default_holds_the_datasets_read(tmp_path):
    loader = """
flags.DEFINE_string('train_data', 'training3d.h5', 'Training data')
flags.DEFINE_string('model_file', 'model_weights.h5', 'weights are never made up')
data_file = h5py.File(data_path, 'r')
self.images, self.labels = data_file['X'], data_file['Y']
with h5py.File(args.data_path + '/Training_Dataset.h5', 'r') as f:
    sources = f['data'][:]
sources = np.transpose(sources, (0, 3, 2, 1))
model_path = file_path + "resunetplusplus.h5"
"""
    model = _fake_model(tmp_path, {"main.py": loader})
    kit, data = _kit_data(tmp_path, model)
    assert kit == "named-arrays"
    import h5py

    with h5py.File(data / "training3d.h5", "r") as f:
        assert f["X"].shape[1:] == (32, 32, 3) and f["Y"].shape == f["X"].shape[:1]
    with h5py.File(data / "Training_Dataset.h5", "r") as f:
        assert f["data"][:].transpose(0, 3, 2, 1).shape[1:] == (32, 32, 3)  # the variable's transpose, followed
    assert not (data / "model_weights.h5").exists()
    assert not (data / "resunetplusplus.h5").exists()  # a model's path


def test_imagenet_shards_are_there_under_the_names_official_resnet_lists_by_number(tmp_path):
    loader = """
def get_filenames(is_training, data_dir):
  if is_training:
    return [os.path.join(data_dir, 'train-%05d-of-01024' % i) for i in range(_NUM_TRAIN_FILES)]
  return [os.path.join(data_dir, 'validation-%05d-of-00128' % i) for i in range(128)]
features = {'image/encoded': tf.FixedLenFeature([], tf.string), 'image/class/label': tf.FixedLenFeature([], tf.int64)}
"""
    kit, data = _kit_data(tmp_path, _fake_model(tmp_path, {"imagenet_main.py": loader}))
    assert kit == "imagenet-tfrecord"
    import tensorflow as tf

    for names in (
        [data / f"train-{i:05d}-of-01024" for i in range(1024)],
        [data / "data" / f"validation-{i:05d}-of-00128" for i in range(128)],
    ):
        assert all(path.is_file() for path in names), [path for path in names if not path.is_file()][:3]
        for path in (names[0], names[-1]):
            record = next(tf.compat.v1.io.tf_record_iterator(str(path)))
            example = tf.train.Example.FromString(record).features.feature
            assert example["image/encoded"].bytes_list.value[0][:2] == b"\xff\xd8"
            assert 1 <= example["image/class/label"].int64_list.value[0] <= 10


def test_pascal_voc_is_at_the_top_and_under_vocdevkit(tmp_path):
    loader = """
txtname = os.path.join(self.data_path, 'ImageSets', 'Main', 'trainval.txt')
imname = os.path.join(self.data_path, 'JPEGImages', index + '.jpg')
filename = os.path.join(self.data_path, 'Annotations', index + '.xml')
"""
    kit, data = _kit_data(tmp_path, _fake_model(tmp_path, {"pascal_voc.py": loader}))
    assert kit == "voc"
    import xml.etree.ElementTree as ET

    for root in (data, data / "VOCdevkit" / "VOC2007", data / "VOC2012"):
        names = (root / "ImageSets" / "Main" / "trainval.txt").read_text().split()
        assert len(names) == 16
        assert (root / "JPEGImages" / f"{names[0]}.jpg").read_bytes()[:2] == b"\xff\xd8"
        objects = ET.parse(root / "Annotations" / f"{names[0]}.xml").findall("object")
        assert objects and int(objects[0].find("bndbox/xmax").text) <= 96


def test_coco_annotations_name_images_that_exist(tmp_path):
    loader = "coco = COCO(os.path.join(root, 'annotations', 'person_keypoints_train2017.json'))\n"
    kit, data = _kit_data(tmp_path, _fake_model(tmp_path, {"dataset.py": loader}))
    assert kit == "coco"
    for kind in ("instances", "person_keypoints"):
        content = json.loads((data / "annotations" / f"{kind}_train2017.json").read_text())
        image = content["images"][0]
        assert (data / "train2017" / image["file_name"]).is_file()
        assert len(content["annotations"][0]["keypoints"]) == 17 * 3


def test_a_text_list_of_image_paths_and_labels_names_images_that_exist(tmp_path):
    loader = """
with open(os.path.join(data_dir, 'train_data.txt')) as f:
    for line in f:
        path, label = line.strip().split(' ')
        image = cv2.imread(os.path.join(data_dir, path))
"""
    kit, data = _kit_data(tmp_path, _fake_model(tmp_path, {"dataset.py": loader}))
    assert kit == "image-lists"
    from PIL import Image

    lines = (data / "train_data.txt").read_text().splitlines()
    path, label = lines[0].split(" ")
    assert os.path.isabs(path) and int(label) in range(10)
    assert Image.open(os.path.join(str(data), path)).size == (96, 96)


def test_code_that_reads_no_known_format_gets_no_kit(tmp_path):
    model = _fake_model(tmp_path, {"train.py": "rows = open('ratings.dat').read().split('::')\n"})
    assert _tool_module("data_kits").choose_all(str(model)) == []


def _failed(kind, message, raised_file):
    frame = {"file": raised_file, "line": 1, "function": "f"}
    error = {"type": kind, "message": message, "frames": [frame]}
    return [{"argv": ["x"], "pid": 1, "steps": 0, "ended": "exception", "exit_code": None, "exception": error}]


def test_an_image_decoder_given_a_file_of_the_data_that_is_no_image_is_data():
    classify = _tool_module("classify")
    tf_file = "/venv/lib/python3.11/site-packages/tensorflow/python/client/session.py"
    message = "Graph execution error:\n\nUnknown image file format. One of JPEG, PNG required.\n[[{{node DecodeJpeg}}]]"
    outcome, cause = classify.classify(_failed("InvalidArgumentError", message, tf_file), "/m", "/d", "mnist", False)
    assert (
        outcome == "data" and "decoded a file of the data that is no image; the mnist kit's files did not fit" in cause
    )


@pytest.mark.parametrize("kit, told", [(None, "no data kit recognizes its loader"), ("image-lists", "image-lists kit")])
def test_opencv_given_an_image_imread_did_not_find_is_data(kit, told):
    classify = _tool_module("classify")
    message = "OpenCV(5.0.0) resize.cpp:4217: error: (-215:Assertion failed) !ssize.empty() in function 'resize'"
    outcome, cause = classify.classify(_failed("cv2.error", message, "/m/train.py"), "/m", "/d", kit, False)
    assert outcome == "data" and cause.endswith("; an image was not read)") and told in cause


def test_tensorflow_datasets_without_its_prepared_data_is_data():
    classify = _tool_module("classify")
    tfds_file = "/site/tensorflow_datasets/core/dataset_builder.py"
    message = (
        "Dataset mnist: could not find data in /d. Please make sure to call dataset_builder.download_and_prepare()"
    )
    outcome, cause = classify.classify(_failed("builtins.AssertionError", message, tfds_file), "/m", "/d", None, False)
    assert outcome == "data" and "no data found: could not find data in" in cause


def test_shuffling_a_dataset_of_no_files_is_data():
    classify = _tool_module("classify")
    tf_file = "/venv/lib/python3.11/site-packages/tensorflow/python/framework/ops.py"
    message = (
        "{{function_node __wrapped__ShuffleDatasetV3_device_/job:localhost/replica:0/task:0/device:CPU:0}} "
        "buffer_size must be greater than zero or UNKNOWN_CARDINALITY [Op:ShuffleDatasetV3] name: "
    )
    outcome, cause = classify.classify(_failed("InvalidArgumentError", message, tf_file), "/m", "/d", None, False)
    assert outcome == "data" and "buffer_size must be greater than zero" in cause


def test_a_download_that_cannot_connect_is_data_and_other_connection_errors_are_not():
    classify = _tool_module("classify")
    message = (
        "HTTPSConnectionPool(host='dl.fbaipublicfiles.com', port=443): Max retries exceeded with url: "
        "/clevr/CLEVR_v1.0.zip (Caused by NameResolutionError(\"Failed to resolve 'dl.fbaipublicfiles.com'\"))"
    )
    records = _failed("requests.exceptions.ConnectionError", message, "/m/code/data.py")
    outcome, cause = classify.classify(records, "/m", "/d", None, False)
    assert outcome == "data" and "a download: the harness has no network" in cause
    refused = _failed("builtins.ConnectionError", "the parameter server went away", "/m/train.py")
    assert classify.classify(refused, "/m", "/d", None, False)[0] != "data"


def test_an_hdf5_file_of_a_kit_without_the_dataset_the_loader_opens_is_the_kits_guess():
    classify = _tool_module("classify")
    message = "\"Unable to synchronously open object (object 'p_train' doesn't exist)\""
    records = _failed("builtins.KeyError", message, "/m/fun_network.py")
    outcome, cause = classify.classify(records, "/m", "/d", "named-arrays", False)
    assert outcome == "data" and "the named-arrays kit's files did not fit" in cause, cause


def test_an_assertion_that_a_file_of_the_data_path_exists_is_data_and_other_assertions_are_not():
    classify = _tool_module("classify")
    missing = _failed("builtins.AssertionError", "File does not exist: /d/dataset/ImageSet/train.txt", "/m/imdb.py")
    outcome, cause = classify.classify(missing, "/m", "/d", None, False)
    assert outcome == "data" and "File does not exist" in cause
    own = _failed("builtins.AssertionError", "File does not exist: /m/config.yaml", "/m/train.py")
    assert classify.classify(own, "/m", "/d", None, False)[0] != "data"


def test_a_loop_variable_of_a_loop_over_no_data_is_missing_data_without_a_kit():
    classify = _tool_module("classify")
    records = _failed("builtins.NameError", "name 'step' is not defined", "/m/VDSR.py")
    outcome, cause = classify.classify(records, "/m", "/d", None, False)
    assert outcome == "data" and "a loop over its data never ran" in cause
    assert classify.classify(records, "/m", "/d", "cifar10", False)[0] == "script"  # the kit's data was there


def test_a_library_refusing_the_scripts_own_python_code_inside_tf_data_is_the_scripts():
    classify = _tool_module("classify")
    message = (
        "Error in user-defined function passed to ParallelMapDatasetV2:10 transformation: TypeError: arrays to stack "
        'must be passed as a "sequence" type\nTraceback (most recent call last):\n  File "/venv/site-packages/'
        'tensorflow/python/ops/script_ops.py", line 269, in __call__\n  File "/m/code/utils.py", line 168, in aug\n'
        '  File "/venv/site-packages/numpy/_core/shape_base.py", line 208, in _arrays_for_stack_dispatcher\n'
    )
    tf_file = "/venv/lib/python3.11/site-packages/tensorflow/python/client/session.py"
    records = _failed("tensorflow.python.framework.errors_impl.InvalidArgumentError", message, tf_file)
    outcome, cause = classify.classify(records, "/m", "/d", "cifar10", False)
    assert outcome == "script" and "a library refused the script's own Python code, run by tf.data" in cause
    inside_tf = message.replace("/m/code/utils.py", "/venv/site-packages/tensorflow/python/x.py")
    assert (
        classify.classify(_failed("x.InvalidArgumentError", inside_tf, tf_file), "/m", "/d", None, False)[0] == "ours"
    )


def test_a_shape_the_model_refuses_is_the_guessed_arrays_fault_and_tensorflows_otherwise():
    classify = _tool_module("classify")
    tf_file = "/venv/lib/python3.11/site-packages/tensorflow/python/framework/ops.py"
    records = _failed("builtins.ValueError", "Dimensions must be equal, but are 512 and 524288 for AddV2", tf_file)
    outcome, cause = classify.classify(records, "/m", "/d", "named-arrays", False)
    assert outcome == "data" and "the named-arrays kit's array shapes are guesses" in cause
    assert classify.classify(records, "/m", "/d", "mnist", False)[0] == "ours"  # a kit of exact shapes
    # SWD: the mnist kit came first, and the named-arrays kit wrote the .npz whose labels the placeholder refused
    outcome, cause = classify.classify(records, "/m", "/d", "mnist", False, kits=["mnist", "named-arrays"])
    assert outcome == "data" and "the named-arrays kit's array shapes are guesses" in cause


def test_an_error_of_the_scripts_input_code_inside_tf_data_is_the_kits():
    classify = _tool_module("classify")
    message = (
        "{{function_node __wrapped__IteratorGetNext_output_types_4}} IndexError: index 2 is out of bounds\n"
        'Traceback (most recent call last):\n  File "/venv/site-packages/tensorflow/python/ops/script_ops.py", line '
        '269, in __call__\n  File "/m/yolo/dataset/read_data.py", line 85, in __getitem__\n'
    )
    tf_file = "/venv/lib/python3.11/site-packages/tensorflow/python/eager/executor.py"
    records = _failed("tensorflow.python.framework.errors_impl.UnknownError", message, tf_file)
    outcome, cause = classify.classify(records, "/m", "/d", "image-lists", False)
    assert outcome == "data" and "the script's input code failed on the image-lists kit's files" in cause
    inside_tf = message.replace("/m/yolo/dataset/read_data.py", "/venv/site-packages/tensorflow/python/x.py")
    assert (
        classify.classify(_failed("x.UnknownError", inside_tf, tf_file), "/m", "/d", "image-lists", False)[0] == "ours"
    )


_RECORD_LOADER = """
flags.DEFINE_integer('seq_length', 12, 'tokens a record holds')
def _parse(example_proto):
    features = {"image": tf.FixedLenFeature([], tf.string, default_value=""),
                "label": tf.io.FixedLenFeature([1], tf.int64),
                "mask": tf.FixedLenFeature([], tf.string),
                "input_ids": tf.FixedLenFeature([FLAGS.seq_length], tf.int64),
                "segment_ids": tf.FixedLenFeature([FLAGS.seq_length], tf.int64),
                "bbox_xmin": tf.VarLenFeature(tf.float32),
                "height": tf.FixedLenFeature(shape=[], dtype=tf.int64)}
    parsed = tf.parse_single_example(example_proto, features)
    image = tf.image.decode_jpeg(parsed["image"])
    mask = tf.decode_raw(parsed['mask'], tf.uint8)
    mask = tf.reshape(mask, [24, 24, 1])
    return image, parsed["label"]
dataset = tf.data.TFRecordDataset(os.path.join(FLAGS.data_dir, 'train_%s.tfrecords' % split))
"""


def test_tfrecords_hold_the_features_the_loaders_parsing_dict_names(tmp_path):
    kit, data = _kit_data(tmp_path, _fake_model(tmp_path, {"input.py": _RECORD_LOADER}))
    assert kit == "parsed-tfrecord"
    import io

    import tensorflow as tf
    from PIL import Image

    for name in ("train_train.tfrecords", "train_val.tfrecords", "train.tfrecord", "train-00000-of-00001"):
        records = list(tf.compat.v1.io.tf_record_iterator(str(data / name)))
        assert len(records) == 512, name
    feature = tf.train.Example.FromString(records[0]).features.feature
    assert Image.open(io.BytesIO(feature["image"].bytes_list.value[0])).size == (96, 96)
    assert feature["height"].int64_list.value == [96] and feature["label"].int64_list.value == [1]
    mask = feature["mask"].bytes_list.value[0]
    assert len(mask) == 24 * 24 and set(mask) <= {0, 1}  # what the reshape after decode_raw wants; class ids
    ids = feature["input_ids"].int64_list.value
    assert len(ids) == 12 and all(1 <= i < 100 for i in ids)  # the flag's default; inside every vocabulary
    assert set(feature["segment_ids"].int64_list.value) <= {0, 1}  # BERT's token type table has 2 rows
    assert feature["bbox_xmin"].float_list.value and all(0 < v < 1 for v in feature["bbox_xmin"].float_list.value)


def test_the_planetoid_citation_graphs_load_as_gcn_loaders_read_them(tmp_path):
    loader = """
names = ['x', 'y', 'tx', 'ty', 'allx', 'ally', 'graph']
for i in range(len(names)):
    with open("{}/ind.{}.{}".format(local_dir, dataset_str, names[i]), 'rb') as f:
        objects.append(pkl.load(f, encoding='latin1'))
test_idx_reorder = parse_index_file("{}/ind.{}.test.index".format(local_dir, dataset_str))
"""
    kit, data = _kit_data(tmp_path, _fake_model(tmp_path, {"utils/process.py": loader}))
    assert kit == "planetoid"
    import pickle

    for name, features, classes in (("cora", 1433, 7), ("citeseer", 3703, 6), ("pubmed", 500, 3)):
        loaded = {}
        for part in ("x", "y", "tx", "ty", "allx", "ally", "graph"):
            with open(data / f"ind.{name}.{part}", "rb") as f:
                loaded[part] = pickle.load(f, encoding="latin1")
        assert loaded["x"].shape == (140, features) and loaded["y"].shape == (140, classes)
        assert loaded["allx"].shape[0] + loaded["tx"].shape[0] == len(loaded["graph"]) == 2708
        test_index = [int(line) for line in (data / f"ind.{name}.test.index").read_text().split()]
        assert sorted(test_index) == list(range(1708, 2708))
        assert all(0 <= j < 2708 for neighbours in loaded["graph"].values() for j in neighbours)


def test_the_data_sets_a_loader_gives_tensorflow_datasets_are_named_by_literal_variable_or_flag_default(tmp_path):
    tfds_sets = _tool_module("tfds_sets")
    code = """
dataset_name = "horses_or_humans"
(train, test), info = tfds.load(
    name=dataset_name, split=["train", "test"], with_info=True)
flags.DEFINE_string("dataset", "cifar10", "the data set")
tfds.load(FLAGS.dataset, split="train")
parser.add_argument("--ds", type=str, default="svhn_cropped")
tfds.builder(args.ds)
tfds.load('voc/2007', data_dir=FLAGS.data_dir)
tfds.load(name_from_somewhere_else)
"""
    assert tfds_sets.names(code) == ("cifar10", "horses_or_humans", "svhn_cropped", "voc/2007")
    assert tfds_sets.names("import tensorflow_datasets as tfds\nprint(tfds.__version__)") == ()

    data_kits = _tool_module("data_kits")
    chosen = data_kits.choose_all  # the kit is chosen only where tensorflow_datasets can write its data sets
    model = tmp_path / "model"
    model.mkdir()
    (model / "train.py").write_text(code)
    assert ("tfds" in chosen(str(model))) == (importlib.util.find_spec("tensorflow_datasets") is not None)


def test_tensorflow_datasets_finds_the_kits_prepared_data_sets_without_a_download(tmp_path):
    tfds = pytest.importorskip("tensorflow_datasets", reason="tensorflow_datasets is the zoo's package, not ours")
    loader = """import tensorflow_datasets as tfds
train = tfds.load("mnist", split="train[:80%]", data_dir=FLAGS.data_dir, as_supervised=True)
voc = tfds.load(name="voc/2007", split="validation", data_dir=FLAGS.data_dir)
"""
    kit, data = _kit_data(tmp_path, _fake_model(tmp_path, {"train.py": loader}))
    assert kit == "tfds"

    def read(name, split):  # as NumPy: the test process may be in graph mode
        return list(tfds.as_numpy(tfds.load(name, split=split, data_dir=str(data), download=False)))

    assert len(read("mnist", "train[:80%]")) == 256
    example = read("mnist", "test")[0]
    assert example["image"].shape == (28, 28, 1) and 0 <= example["label"] < 10
    for example in read("voc/2007", "validation")[:8]:
        boxes = example["objects"]["bbox"]
        assert example["image"].shape[2] == 3 and 48 <= example["image"].shape[0] <= 96
        assert len(boxes) == len(example["objects"]["label"]) >= 1
        assert (boxes[:, :2] <= boxes[:, 2:]).all()


def test_the_folders_an_image_glob_searches_hold_images(tmp_path):
    loader = """
MAX_TRAIN_IMAGES = 400
train_low_light_images = sorted(glob(args.data_path + "/our485/low/*"))[:MAX_TRAIN_IMAGES]
val_low_light_images = sorted(glob(args.data_path + "/our485/low/*"))[MAX_TRAIN_IMAGES:]
image = tf.image.decode_png(image, channels=3)
self.trainA_dataset = glob('{}/*.*'.format(self.dataset_dir + '/trainA'))
masks = glob(os.path.join(path, 'masks', '*.jpg'))
everything = glob(os.path.join(path, '*'))
runs = glob.glob(os.path.join(root_dir, '*', 'work_dir'))
datapath = ('%s/train/*.jpg' %(args.data_path))
data = glob(datapath.format(self.dataset_name))
originals = glob(os.path.join(root, 'imagenet', '*.JPEG'))
parser.add_argument('--style_dir', dest='style_dir', default='avatar_data', help='the dataset under --data_dir')
styles = glob('{}/{}/*.*'.format(self.data_dir, self.style_dir + '/trainC'))
"""
    kit, data = _kit_data(tmp_path, _fake_model(tmp_path, {"train.py": loader}))
    assert kit == "image-globs"
    from PIL import Image

    low = sorted(os.listdir(data / "our485" / "low"))
    assert len(low) > 400 and low[0].endswith(".png")  # more than the training slice, in the format decoded
    assert Image.open(data / "our485" / "low" / low[0]).size == (96, 96)
    assert len(os.listdir(data / "trainA")) == 16
    assert all(name.endswith(".jpg") for name in os.listdir(data / "masks"))
    assert len(os.listdir(data / "train")) == 16  # the pattern a name holds, from its assignment
    assert not (data / "work_dir").exists()  # a folder of any name under the data path is not an image glob
    imagenet = os.listdir(data / "imagenet")
    assert len(imagenet) == 16 and all(name.endswith(".JPEG") for name in imagenet)  # glob's match is case-sensitive
    assert not [name for name in os.listdir(data) if name.endswith((".jpg", ".png"))]  # a bare * is not followed
    # an argument with a bare folder name as its default, joined in front: the folder with and without it
    assert len(os.listdir(data / "avatar_data" / "trainC")) == len(os.listdir(data / "trainC")) == 16


def test_a_missing_checkpoint_is_data_for_want_of_weights():
    classify = _tool_module("classify")
    message = "The passed save_path is not a valid checkpoint: /d/model/inception_v3.ckpt"
    records = _failed("builtins.ValueError", message, "/venv/site-packages/tensorflow/python/training/saver.py")
    outcome, cause = classify.classify(records, "/m", "/d", "parsed-tfrecord", False)
    assert outcome == "data" and cause.endswith("(weights: the harness never makes pretrained weights up)")


def test_an_id_out_of_the_models_range_is_the_guessed_records_fault():
    classify = _tool_module("classify")
    message = "Graph execution error:\n\nindices[0] = -21309 is not in [0, 163623)\n\t [[{{node GatherV2_1}}]]"
    tf_file = "/venv/lib/python3.11/site-packages/tensorflow/python/client/session.py"
    records = _failed("tensorflow.python.framework.errors_impl.InvalidArgumentError", message, tf_file)
    outcome, cause = classify.classify(records, "/m", "/d", "parsed-tfrecord", False)
    assert outcome == "data" and "values are guesses" in cause
    message = "Input to reshape is a tensor with 3538944 values, but the requested shape has 785536"
    records = _failed("tensorflow.python.framework.errors_impl.InvalidArgumentError", message, tf_file)
    outcome, cause = classify.classify(records, "/m", "/d", "parsed-tfrecord", False)
    assert outcome == "data" and "array shapes are guesses" in cause


def test_celeba_lists_its_attributes_in_order_and_every_image_it_names_exists(tmp_path):
    loader = """
image_root = os.path.join(data_path, 'CelebA/Img/img_align_celeba')
lines = open(os.path.join(data_path, 'CelebA/Anno/list_attr_celeba.txt'), 'r').readlines()
names = np.loadtxt(os.path.join(data_dir, 'list_attr_celeba.txt'), skiprows=2, usecols=[0], dtype=str)
"""
    kit, data = _kit_data(
        tmp_path, _fake_model(tmp_path, {"data_loader.py": loader, "cifar.py": "files = ['data_batch_1']\n"})
    )
    assert kit == "celeba"  # before cifar10, whose marker a CelebA model may hold too
    from PIL import Image

    lines = (data / "CelebA" / "Anno" / "list_attr_celeba.txt").read_text().splitlines()
    attributes = lines[1].split()
    assert int(lines[0]) == len(lines) - 2 == 202599  # CelebA's count: loaders slice at its own offsets
    assert len(attributes) == 40 and attributes[0] == "5_o_Clock_Shadow" and attributes[-1] == "Young"
    assert attributes.index("Black_Hair") == 8 and attributes.index("Male") == 20
    name, *values = lines[182001].split()
    assert name == "182000.jpg" and len(values) == 40 and set(values) == {"1", "-1"}
    images = data / "CelebA" / "Img" / "img_align_celeba"
    assert len(os.listdir(images)) == 202599 and os.path.islink(data / "img_align_celeba")  # one link, not 202,599
    assert Image.open(images / name).size == (178, 218) and Image.open(images / "000001.jpg").format == "JPEG"
    partition = (data / "list_eval_partition.txt").read_text().splitlines()
    assert partition[162769] == "162770.jpg 0" and partition[162770] == "162771.jpg 1" and partition[-1].endswith(" 2")
    assert (data / "identity_CelebA.txt").read_text().split("\n", 1)[0].startswith("000001.jpg ")


def test_a_library_that_cannot_open_a_file_the_wrapper_named_stops_for_data():
    """XLNet's wrapper names ``$ckpt_path/spiece.model`` with no checkpoint path: sentencepiece's RuntimeError."""
    classify = _tool_module("classify")
    message = 'NOT_FOUND: "/spiece.model": No such file or directory'
    records = _failed("RuntimeError", message, "/site/sentencepiece.py")
    assert classify.classify(records, "/m", "/d", None, False)[0] == "data"
    records = _failed("RuntimeError", "the model diverged", "/m/train.py")  # no file named: not data
    assert classify.classify(records, "/m", "/d", None, False)[0] != "data"


HAND_WRITTEN_SGD = """
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()
w = tf.Variable([1.0, 2.0])
loss = tf.reduce_sum(tf.square(w))
(grad,) = tf.gradients(loss, [w])
step = tf.group(tf.assign_sub(w, 0.1 * grad))  # an update written by hand: no Apply* op
ema = tf.Variable(0.0)
track = tf.assign(ema, 0.9 * ema + 0.1 * loss)  # assigns, but no gradient: not a step
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for _ in range(5):
        sess.run([loss, track])
    for i in range(10):
        print("STEP", i, flush=True)
        sess.run(step)
"""


def _run_with_the_hook(results, argv, steps=None, path=(), timeout=100):
    """Runs ``argv`` (after this interpreter) with the harness' hook and records in ``results``; returns the run."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(HARNESS, "hook"), *path]))
    env["ZOO_HARNESS_RESULTS"] = str(results)
    if steps is not None:
        env["ZOO_HARNESS_STEPS"] = str(steps)
    done = subprocess.run(
        [sys.executable, *argv], env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_hand_written_update_from_tf_gradients_counts_as_a_training_step(tmp_path):
    done = _run_with_the_hook(tmp_path, ["-c", HAND_WRITTEN_SGD], steps=3)
    (record,) = [json.loads(p.read_text()) for p in tmp_path.glob("*.json")]
    assert (record["ended"], record["steps"]) == ("steps_reached", 3)
    assert done.stdout.count("STEP") == 3  # the fourth update never ran


def _run_under_the_hook(tmp_path, model_source):
    """Runs ``model/train.py`` with the harness' hook (no TensorFlow: a module named like Keras' stands in) and
    returns the process' record."""
    library = tmp_path / "site" / "tf_keras"
    library.mkdir(parents=True)
    (library / "__init__.py").write_text("class Conv2D:\n    def convolution_op(self, x):\n        return x\n")
    model = tmp_path / "model"
    model.mkdir()
    (model / "train.py").write_text(model_source)
    results = tmp_path / "results"
    results.mkdir()
    env = dict(os.environ, ZOO_HARNESS_RESULTS=str(results))
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(HARNESS, "hook"), str(tmp_path / "site")])
    subprocess.run([sys.executable, str(model / "train.py")], env=env, capture_output=True, timeout=60, check=False)
    (record,) = [json.loads(p.read_text()) for p in results.glob("*.json")]
    return record, str(model)


def test_a_private_name_a_keras_subclass_lacks_is_ours_and_the_scripts_own_typo_is_not(tmp_path):
    classify = _tool_module("classify")
    era = "import tf_keras\nclass WSConv(tf_keras.Conv2D):\n    pass\nWSConv()._convolution_op(1)\n"
    record, model = _run_under_the_hook(tmp_path / "era", era)
    assert record["exception"]["attribute"] == {
        "name": "_convolution_op",
        "classes": ["__main__.WSConv", "tf_keras.Conv2D", "builtins.object"],
    }
    outcome, cause = classify.classify([record], model, "/d", None, False)
    assert outcome == "ours" and "a name tf_keras.Conv2D lacks here" in cause and cause.startswith("AttributeError")
    typo = "import tf_keras\nclass Net(tf_keras.Conv2D):\n    def build(self):\n        self._encoder = 1\n"
    typo += "net = Net()\nnet.build()\nnet._encodr\n"
    record, model = _run_under_the_hook(tmp_path / "typo", typo.replace("_encodr", "_encoder.x"))
    assert classify.classify([record], model, "/d", None, False)[0] == "script"  # an int lacks .x: not Keras'
    record, model = _run_under_the_hook(tmp_path / "own", typo.replace("_encodr", "_encoder_typo_defined"))
    (tmp_path / "own" / "model" / "more.py").write_text("def _encoder_typo_defined():\n    pass\n")
    assert classify.classify([record], model, "/d", None, False)[0] == "script"  # the model defines that name


def test_every_kit_that_recognizes_a_loader_adds_its_files_and_the_first_kit_keeps_its_names(tmp_path, monkeypatch):
    data_kits = _tool_module("data_kits")

    def first(root, rng):
        (pathlib.Path(root) / "train").mkdir()
        (pathlib.Path(root) / "train" / "a.rec").write_text("first")
        (pathlib.Path(root) / "shared.txt").write_text("first")
        os.symlink(".", os.path.join(root, "data"))

    def second(root, rng):
        (pathlib.Path(root) / "train").mkdir()
        (pathlib.Path(root) / "train" / "b.bin").write_text("second")
        (pathlib.Path(root) / "shared.txt").write_text("second")
        (pathlib.Path(root) / "data").mkdir()
        (pathlib.Path(root) / "data" / "c.bin").write_text("second")

    kits = (("first", ("image/encoded",), first), ("second", ("data_batch_",), second), ("third", ("nope",), first))
    monkeypatch.setattr(data_kits, "KITS", kits)
    model = _fake_model(tmp_path, {"read.py": "'data_batch_{}.bin'\n'image/encoded'\n"})
    assert data_kits.choose_all(str(model)) == ["first", "second"]  # in KITS order, whatever the code's order
    data = tmp_path / "data"
    data_kits.make_all(["first", "second"], str(data), str(tmp_path / "kits"), seed=3, model_dir=str(model))
    assert sorted(os.listdir(data / "train")) == ["a.rec", "b.bin"]  # folders merge
    assert (data / "shared.txt").read_text() == "first"  # the first kit's name stays
    assert os.path.islink(data / "data") and os.readlink(data / "data") == "."  # not written through
    assert not (data / "c.bin").exists()


_LARGE_RECORD_LOADER = """
features = {"maps": tf.FixedLenFeature([8, 256, 256], tf.float32), "label": tf.FixedLenFeature([], tf.int64)}
dataset = tf.data.TFRecordDataset("train.tfrecord").map(lambda r: tf.parse_single_example(r, features))
"""


def test_tfrecords_of_large_features_stay_within_the_kits_size(tmp_path, monkeypatch):
    # 8 x 256 x 256 floats are 2 MiB a record: 512 of them would be 1 GiB (dbresnet's made 47 GB)
    tfrecord_files = _tool_module("tfrecord_files")
    monkeypatch.setattr(tfrecord_files, "FILE_BYTES", 8 * 2**20)
    kit, data = _kit_data(tmp_path, _fake_model(tmp_path, {"input.py": _LARGE_RECORD_LOADER}))
    assert kit == "parsed-tfrecord"
    import tensorflow as tf

    records = list(tf.compat.v1.io.tf_record_iterator(str(data / "train.tfrecord")))
    assert len(records) == 3  # 8 MiB of 2 MiB records, rounded down
    maps = tf.train.Example.FromString(records[0]).features.feature["maps"].float_list.value
    assert len(maps) == 8 * 256 * 256
    assert os.path.getsize(data / "train.tfrecord") <= 8 * 2**20


def test_a_kit_that_cannot_write_its_files_leaves_nothing_and_says_so(tmp_path, monkeypatch):
    data_kits = _tool_module("data_kits")

    def full_disk(root, rng):
        (pathlib.Path(root) / "half.bin").write_text("written before the disk filled")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(data_kits, "KITS", (("full", ("data_batch_",), full_disk),))
    cache = tmp_path / "kits"
    with pytest.raises(data_kits.KitError, match="the full kit could not write its files: OSError: .*No space left"):
        data_kits.make_all(["full"], str(tmp_path / "data"), str(cache), seed=3)
    assert os.listdir(cache) == []  # neither the partial folder nor a cached kit stays


def test_an_entry_whose_kit_cannot_write_stops_for_data_and_the_draw_goes_on(tmp_path, monkeypatch):
    import types

    data_kits = _tool_module("data_kits")
    draw = _tool_module("draw")
    sys.path.insert(0, HARNESS)
    try:
        spec = importlib.util.spec_from_file_location("zoo_harness_main", os.path.join(HARNESS, "__main__.py"))
        harness = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(harness)
    finally:
        sys.path.remove(HARNESS)

    def full_disk(root, rng):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(data_kits, "KITS", (("full", lambda code: True, full_disk),))
    entry = next(e for e in draw.model_dirs(ZOO, "tf1") if "mnist" in e.relative_dir.lower())
    args = types.SimpleNamespace(zoo=ZOO, seed=3)
    folder = tmp_path / "out" / "entries" / "001_x"
    result = harness._run_entry(args, entry, str(folder), str(tmp_path / "bin"))
    assert (result["outcome"], result["kit"], result["steps"]) == ("data", "full", 0)
    assert result["cause"].startswith("the full kit could not write its files: OSError")
    assert not os.path.exists(folder / "output.log")  # nothing was started


KERAS_DOWNLOAD_OF_ITS_OWN_PATH = """
import os, pickle, sys
from tf_keras.src.utils.data_utils import get_file
path = get_file(os.path.join(sys.argv[1], "cifar-10-batches-py"), origin="https://example.invalid/c.tar.gz", untar=True)
with open(os.path.join(path, "data_batch_1"), "rb") as f:
    print("ROWS", pickle.load(f, encoding="bytes")[b"data"].shape[0])
"""


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_keras_download_named_by_a_path_of_the_loaders_own_gets_the_synthetic_dataset(tmp_path):
    """A loader that copied Keras' cifar10.load_data passes its own folder as get_file's fname; the harness has no
    network, so it answers with the synthetic dataset of that folder's name."""
    done = _run_with_the_hook(tmp_path, ["-c", KERAS_DOWNLOAD_OF_ITS_OWN_PATH, str(tmp_path / "data")])
    assert "ROWS 10000" in done.stdout


def test_the_harness_refuses_an_interpreter_without_tensorflow_before_running_an_entry(tmp_path, monkeypatch):
    """Every entry runs under the harness' own interpreter: one without TensorFlow would turn each entry into an
    import error, so the harness stops first and says which interpreter and what it lacks."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("zoo_harness_main", os.path.join(HARNESS, "__main__.py"))
    harness = importlib.util.module_from_spec(spec)
    monkeypatch.syspath_prepend(HARNESS)
    spec.loader.exec_module(harness)
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "tensorflow" else real(name, *a))
    with pytest.raises(SystemExit) as stopped:
        harness.main(["--zoo", str(tmp_path), "--tf1", "1", "--tf2", "0", "--out", str(tmp_path / "out")])
    assert f"{sys.executable} cannot import tensorflow" in str(stopped.value)
    assert not (tmp_path / "out").exists()


ITERATIONS_LOOP_SCRIPT = """
from npu_bridge.npu_init import *

w = tf.Variable([1.0, 2.0])
loss = tf.reduce_sum(tf.square(w))
train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=tf.train.get_or_create_global_step())
config = tf.ConfigProto()
custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
custom_op.name = "NpuOptimizer"
custom_op.parameter_map["iterations_per_loop"].i = 5
with tf.Session(config=config) as sess:
    sess.run(tf.global_variables_initializer())
    loop = util.set_iteration_per_loop(sess, train, 5)
    for i in range(4):
        print("RUN", i, flush=True)
        sess.run(loop)
"""


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_a_run_of_the_iterations_loop_counts_as_its_iterations_per_loop_steps(tmp_path):
    """One run of an IterationOp trains iterations_per_loop steps (100 in ShufflenetV2's wrapper, minutes on a CPU):
    the harness counts them all, so the step limit is reached after the first run instead of the time limit."""
    (tmp_path / "train.py").write_text(ITERATIONS_LOOP_SCRIPT)
    argv = ["-m", "npu_bridge.tf1", str(tmp_path / "train.py")]
    done = _run_with_the_hook(tmp_path, argv, steps=3, path=[str(REPO_ROOT)], timeout=150)
    (record,) = [json.loads(p.read_text()) for p in tmp_path.glob("*.json")]
    assert (record["ended"], record["steps"]) == ("steps_reached", 5)
    assert done.stdout.count("RUN") == 1
