"""Synthetic training data in the formats the zoo's loaders read, chosen by what a model's code reads.

A kit is chosen when the model's Python or shell files contain all of its markers (or, for a kit whose markers
are a function, when that function of the code says so); the first kit that matches wins. The kits of annotated
images (Pascal VOC, COCO, text lists of images) are in ``image_sets.py``, the kit of named ``.npz`` / ``.mat`` /
``.h5`` files, whose names and keys are derived from the loader's code, in ``array_files.py``; the kit of TFRecords
holding the features a loader's parsing dict names in ``tfrecord_files.py``, of folders of images its ``glob``
patterns search in ``image_globs.py``, of the Planetoid citation graphs in ``planetoid.py``, of CelebA in
``celeba.py``, of tensorflow_datasets' prepared data sets in ``tfds_sets.py``.

Each kit writes small, valid files at the top of the data path (random pixels, labels in a small range) and makes
the sub-folder names the zoo's scripts commonly append (``data/``, ``MNIST_data/``, ...) symbolic links to it, so
most loaders find the files wherever they look. A model whose loader no kit recognizes gets an empty data folder:
if it then fails reading data, the harness says the data could not be made.
"""

import gzip
import inspect
import os
import pickle
import re
import shutil
import struct

import array_files
import celeba
import image_globs
import image_sets
import numpy as np
import planetoid
import tfds_sets
import tfrecord_files

_ALIASES = ("data",)


class KitError(Exception):
    """A kit could not write its files (a full disk, ...); what it had written is removed."""


def _aliases(root, names=_ALIASES):
    """Makes each name under root a symbolic link to root itself (``data/x`` is ``x``)."""
    for name in names:
        path = os.path.join(root, name)
        if not os.path.lexists(path):
            os.symlink(".", path)


_jpeg = image_sets.jpeg


def _imagenet_tfrecords(root, rng):
    import tensorflow as tf

    def feature(value):
        if isinstance(value, bytes):
            return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))
        if isinstance(value, float):
            return tf.train.Feature(float_list=tf.train.FloatList(value=[value]))
        return tf.train.Feature(int64_list=tf.train.Int64List(value=[value]))

    def example(index):
        label = int(rng.integers(1, 11))
        fields = {
            "image/encoded": _jpeg(rng),
            "image/format": b"JPEG",
            "image/filename": f"synthetic_{index}.JPEG".encode(),
            "image/height": 96,
            "image/width": 96,
            "image/channels": 3,
            "image/colorspace": b"RGB",
            "image/class/label": label,
            "image/class/synset": b"n01440764",
            "image/class/text": b"synthetic",
        }
        features = {key: feature(value) for key, value in fields.items()}
        for key in ("xmin", "ymin"):
            features[f"image/object/bbox/{key}"] = tf.train.Feature(float_list=tf.train.FloatList(value=[0.1]))
        for key in ("xmax", "ymax"):
            features[f"image/object/bbox/{key}"] = tf.train.Feature(float_list=tf.train.FloatList(value=[0.9]))
        features["image/object/bbox/label"] = feature(label)
        return tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString()

    records = [example(i) for i in range(64)]
    # 512 records a shard: scripts derive steps per epoch as records // batch size, with batches of up to 256
    written = ("train-00000-of-00002", "train-00001-of-00002", "validation-00000-of-00001")
    for name in written:
        with tf.io.TFRecordWriter(os.path.join(root, name)) as writer:
            for record in records * 8:
                writer.write(record)
    # The shard names of the ImageNet conversion script, which the official ResNet input functions list by number
    # rather than by searching the folder: links to the shards written above
    for prefix, count, targets in (("train", 1024, written[:2]), ("validation", 128, written[2:])):
        for index in range(count):
            os.symlink(targets[index % len(targets)], os.path.join(root, f"{prefix}-{index:05d}-of-{count:05d}"))
    _aliases(root, _ALIASES + ("train", "tfrecord", "imagenet_TF", "ILSVRC2012", "imagenet", "tf_records"))


class _Python2Pickler(pickle._Pickler):
    """Pickles bytes as Python 2's ``str`` (protocol 2), as CIFAR-10's files were written: loading them with
    ``encoding="bytes"`` gives bytes keys, with ``encoding="latin1"`` str keys, as with the real files."""

    dispatch = dict(pickle._Pickler.dispatch)

    def save_bytes(self, obj):
        if len(obj) < 256:
            self.write(pickle.SHORT_BINSTRING + bytes([len(obj)]) + obj)
        else:
            self.write(pickle.BINSTRING + struct.pack("<i", len(obj)) + obj)
        self.memoize(obj)

    dispatch[bytes] = save_bytes


def _python2_pickle(value, path):
    with open(path, "wb") as f:
        _Python2Pickler(f, protocol=2).dump(value)


def _cifar10(root, rng):
    def images(count):
        return rng.integers(0, 256, size=(count, 3072), dtype=np.uint8)

    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        # 10,000 images per file as CIFAR-10 has: loaders copied from Keras fill arrays sized for 50,000
        data, labels = images(10000), rng.integers(0, 10, size=10000)
        rows = np.concatenate([labels.astype(np.uint8)[:, None], data], axis=1)
        rows.tofile(os.path.join(root, name + ".bin"))
        batch = {b"data": data, b"labels": labels.tolist(), b"batch_label": name.encode()}
        _python2_pickle(batch, os.path.join(root, name))
    meta = {b"label_names": [f"class{i}".encode() for i in range(10)], b"num_cases_per_batch": 10000}
    _python2_pickle(meta, os.path.join(root, "batches.meta"))
    with open(os.path.join(root, "batches.meta.txt"), "w") as f:
        f.write("\n".join(f"class{i}" for i in range(10)) + "\n")
    _aliases(root, _ALIASES + ("cifar-10-batches-bin", "cifar-10-batches-py", "cifar10", "cifar-10-python"))


MNIST_TRAIN, MNIST_TEST = 60000, 10000


def _mnist(root, rng):
    # mostly dark pixels, as MNIST's are; MNIST's own counts: loaders written for it reshape to (60000, 28, 28, 1)
    # (DCGAN's load_mnist)
    images = {
        part: np.where(rng.random((count, 28, 28)) < 0.8, 0, rng.integers(0, 256, (count, 28, 28))).astype(np.uint8)
        for part, count in (("train", MNIST_TRAIN), ("t10k", MNIST_TEST))
    }
    labels = {part: rng.integers(0, 10, size=len(x), dtype=np.uint8) for part, x in images.items()}
    files = {}
    for part in images:
        files[f"{part}-images-idx3-ubyte"] = (
            struct.pack(">IIII", 2051, len(images[part]), 28, 28) + images[part].tobytes()
        )
        files[f"{part}-labels-idx1-ubyte"] = struct.pack(">II", 2049, len(labels[part])) + labels[part].tobytes()
    for name, content in files.items():
        with gzip.open(os.path.join(root, name + ".gz"), "wb", compresslevel=1) as f:
            f.write(content)
        with open(os.path.join(root, name), "wb") as f:
            f.write(content)
        dotted = name.replace("-idx", ".idx")  # the name some mirrors and tutorials use
        os.symlink(name, os.path.join(root, dotted))
        os.symlink(name + ".gz", os.path.join(root, dotted + ".gz"))
    np.savez(
        os.path.join(root, "mnist.npz"),
        x_train=images["train"],
        y_train=labels["train"],
        x_test=images["t10k"],
        y_test=labels["t10k"],
    )
    _aliases(root, _ALIASES + ("MNIST_data", "mnist", "MNIST"))


def _bert_pretraining(root, rng, hints):
    """BERT/ALBERT pre-training records (masked LM and next-sentence features) of the script's lengths."""
    import tensorflow as tf

    length, predictions = hints.get("max_seq_length", 128), hints.get("max_predictions_per_seq", 20)

    def ints(values):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=[int(v) for v in values]))

    def example():
        used = int(rng.integers(length // 2, length + 1))
        ids = np.zeros(length, np.int64)
        ids[:used] = rng.integers(5, 100, size=used)  # token ids below 100: inside every vocabulary
        positions = np.sort(rng.choice(np.arange(1, used), size=min(predictions, used - 1), replace=False))
        padded = np.zeros(predictions, np.int64)
        padded[: len(positions)] = positions
        weights = np.zeros(predictions, np.float32)
        weights[: len(positions)] = 1.0
        features = {
            "input_ids": ints(ids),
            "input_mask": ints(np.arange(length) < used),
            "segment_ids": ints(np.arange(length) >= used // 2),
            "token_boundary": ints(np.ones(length)),
            "masked_lm_positions": ints(padded),
            "masked_lm_ids": ints(rng.integers(5, 100, size=predictions)),
            "masked_lm_weights": tf.train.Feature(float_list=tf.train.FloatList(value=weights.tolist())),
            "next_sentence_labels": ints([rng.integers(0, 2)]),
        }
        return tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString()

    for name in ("part-00000-of-00002.tfrecord", "part-00001-of-00002.tfrecord"):
        with tf.io.TFRecordWriter(os.path.join(root, name)) as writer:
            for _ in range(64):
                writer.write(example())


def _image_folders(root, rng):
    for split in ("train", "val", "validation", "test"):
        for label in ("class0", "class1"):
            folder = os.path.join(root, split, label)
            os.makedirs(folder, exist_ok=True)
            for i in range(8):
                with open(os.path.join(folder, f"{label}_{i}.jpg"), "wb") as f:
                    f.write(_jpeg(rng))
    _aliases(root)


_IMAGE_READERS = re.compile(r"cv2\.imread|Image\.open|imageio\.imread|misc\.imread|decode_jpeg|decode_image|load_img")
_LIST_LITERAL = re.compile(r"""['"/]({})['"]""".format("|".join(re.escape(n) for n in image_sets.LIST_NAMES)))


def _reads_image_list(code):
    """A loader that opens a text list by a common name, splits its lines and reads images."""
    return bool(_LIST_LITERAL.search(code) and ".split(" in code and _IMAGE_READERS.search(code))


def _reads_named_arrays(code):
    return array_files.spec(code) is not None


def _reads_parsed_records(code):
    return tfrecord_files.spec(code) is not None


def _globs_images(code):
    return image_globs.spec(code) is not None


# (name, markers, writer): markers are strings that must all occur in the model's code, or a function of the code
# that says whether the kit fits. The first match wins. A writer takes (root, rng) and, by name, ``hints`` (the
# sizes the training script asks for), ``spec`` (what the kit's SPECS function derives from the code) or ``home``
# (the folder its files end up in, for files that name other files by absolute path).
KITS = (
    ("bert-pretraining", ("masked_lm_positions", "next_sentence_labels"), _bert_pretraining),
    ("imagenet-tfrecord", ("image/encoded", "image/class/label"), _imagenet_tfrecords),
    ("celeba", ("list_attr_celeba", "img_align_celeba"), celeba.write),
    ("cifar10", ("data_batch_",), _cifar10),
    ("mnist", ("idx3-ubyte",), _mnist),
    ("mnist", ("read_data_sets",), _mnist),
    ("mnist", ("mnist.load_data",), _mnist),
    ("mnist", ("mnist.npz",), _mnist),
    ("image-folders", ("flow_from_directory",), _image_folders),
    ("image-folders", ("image_dataset_from_directory",), _image_folders),
    ("voc", ("ImageSets", "JPEGImages", "Annotations"), image_sets.voc),
    ("coco", ("annotations", "instances_"), image_sets.coco),
    ("coco", ("person_keypoints",), image_sets.coco),
    ("named-arrays", _reads_named_arrays, array_files.write),
    ("planetoid", ("ind.", "test.index", "allx"), planetoid.write),
    ("tfds", tfds_sets.chosen, tfds_sets.write),
    ("image-lists", _reads_image_list, image_sets.image_lists),
    ("parsed-tfrecord", _reads_parsed_records, tfrecord_files.write),
    ("image-globs", _globs_images, image_globs.write),
)
# Kits whose files depend on the model's code: the function that derives what they write (a JSON-able value)
SPECS = {
    "named-arrays": array_files.spec,
    "parsed-tfrecord": tfrecord_files.spec,
    "image-globs": image_globs.spec,
    "tfds": tfds_sets.names,
}
# Folders of a kit's files linked whole into each data folder, not file by file (they hold too many files)
WHOLE_FOLDERS = {"celeba": celeba.WHOLE_FOLDERS}


def model_code(model_dir):
    """The text of a model's .py and .sh files (what the kits' markers are looked up in)."""
    parts = []
    for directory, subdirs, files in os.walk(model_dir):
        subdirs[:] = [d for d in subdirs if not d.startswith(".")]
        for name in files:
            if name.endswith((".py", ".sh")):
                with open(os.path.join(directory, name), encoding="utf-8", errors="replace") as f:
                    parts.append(f.read())
    return "\n".join(parts)


def _fits(markers, code):
    return markers(code) if callable(markers) else all(marker in code for marker in markers)


def choose_all(model_dir):
    """Every kit that recognizes a loader of the model, in ``KITS`` order (a model may carry loaders for several
    datasets and pick one by a flag: Meta Pseudo Labels reads CIFAR-10's binary batches and has ImageNet's parser)."""
    code = model_code(model_dir)
    names = []
    for name, markers, _ in KITS:
        if name not in names and _fits(markers, code):
            names.append(name)
    return names


_HINT = re.compile(r"--(max_seq_length|max_predictions_per_seq)[= ]+(\d+)")


def hints(script_text):
    """The sizes a training script asks its data to have (``--max_seq_length=128`` ...), first of each."""
    found = {}
    for name, value in _HINT.findall(script_text):
        found.setdefault(name, int(value))
    return found


def make_all(kits, data_dir, cache_dir, seed=0, sizes=None, model_dir=None):
    """Gives data_dir the data of every kit of ``kits`` (``choose_all``'s list), the first one's files first: a
    later kit adds only the names the earlier ones did not make. No kit leaves it empty."""
    for index, kit in enumerate(kits or [None]):
        make(kit, data_dir, cache_dir, seed=seed, sizes=sizes, model_dir=model_dir, add=index > 0)
    if model_dir is not None:
        use_shipped(data_dir, model_dir)


# Data files a model may ship next to its code (SWD_ID1211 carries its moon_data.npz): real data of the layout its
# loader wants, so they replace a kit's guess of the same name
SHIPPED_SUFFIXES = (".npz", ".npy", ".mat", ".h5", ".hdf5", ".pkl", ".pickle")


def use_shipped(data_dir, model_dir):
    """Replaces each kit file in data_dir that the model's own tree ships a file of the same name of
    (``SHIPPED_SUFFIXES``) by a link to the model's file."""
    shipped = {}
    for directory, subdirs, files in os.walk(model_dir):
        subdirs[:] = sorted(d for d in subdirs if not d.startswith("."))
        for name in sorted(files):
            path = os.path.join(directory, name)
            if name.endswith(SHIPPED_SUFFIXES) and os.path.isfile(path) and not os.path.islink(path):
                shipped.setdefault(name, os.path.abspath(path))
    for directory, _, files in os.walk(data_dir):
        for name in files:
            link = os.path.join(directory, name)
            if name in shipped and os.path.islink(link):
                os.unlink(link)
                os.symlink(shipped[name], link)


def make(kit, data_dir, cache_dir, seed=0, sizes=None, model_dir=None, add=False):
    """Gives data_dir (created) kit's data; kit None leaves it empty. With ``add``, the kit's files join what
    another kit put there: a name that exists already (a file or a link) stays as it is, folders merge.

    The kit is written once into ``cache_dir/<kit>-<seed>[-<sizes>|-<spec id>]``; data_dir gets folders of its own
    holding symbolic links to the cached files, so what one entry writes there does not reach the next. ``sizes``
    (from ``hints``) reaches the kits that take it; a kit in ``SPECS`` gets what its function derives from the code
    of ``model_dir``. A folder in ``WHOLE_FOLDERS`` is one link to the cached folder (shared by the entries).

    Raises:
      KitError: the kit could not write its files.
    """
    if kit is None:
        os.makedirs(data_dir, exist_ok=True)
        return
    writer = next(write for name, _, write in KITS if name == kit)
    parameters = inspect.signature(writer).parameters
    extra, suffix = {}, ""
    if "hints" in parameters:
        extra["hints"] = sizes or {}
        suffix = "".join(f"-{value}" for _, value in sorted((sizes or {}).items()))
    if "spec" in parameters:
        extra["spec"] = SPECS[kit](model_code(model_dir))
        suffix = "-" + array_files.spec_id(extra["spec"])
    cached = os.path.join(cache_dir, f"{kit}-{seed}{suffix}")
    if "home" in parameters:
        extra["home"] = cached
    if not os.path.isdir(cached):
        partial = cached + ".partial"
        shutil.rmtree(partial, ignore_errors=True)
        os.makedirs(partial)
        try:
            writer(partial, np.random.default_rng(seed), **extra)
        except Exception as e:  # a full disk, or a kit's own defect: this entry's data, not the whole draw
            shutil.rmtree(partial, ignore_errors=True)
            raise KitError(f"the {kit} kit could not write its files: {type(e).__name__}: {e}") from e
        os.replace(partial, cached)
    whole = WHOLE_FOLDERS.get(kit, ())

    def taken(path):
        return add and os.path.lexists(path) and (os.path.islink(path) or not os.path.isdir(path))

    def skipped(folder, names):
        target = os.path.join(data_dir, os.path.relpath(folder, cached))
        return [n for n in names if (folder == cached and n in whole) or taken(os.path.join(target, n))]

    shutil.copytree(cached, data_dir, symlinks=True, copy_function=os.symlink, dirs_exist_ok=True, ignore=skipped)
    for name in whole:
        if not (add and os.path.lexists(os.path.join(data_dir, name))):
            os.symlink(os.path.abspath(os.path.join(cached, name)), os.path.join(data_dir, name))
