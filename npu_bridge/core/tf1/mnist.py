"""``tensorflow.examples.tutorials.mnist.input_data`` for the TF1 mode: the tutorials' MNIST reader.

``read_data_sets(train_dir)`` reads the four files of the MNIST distribution from ``train_dir``
(``train-images-idx3-ubyte.gz``, ``train-labels-idx1-ubyte.gz``, ``t10k-images-idx3-ubyte.gz``,
``t10k-labels-idx1-ubyte.gz``), as TensorFlow 1.x's reader did once it had them; it never downloads: a missing file
is an error naming it. Images are float32 in [0, 1] (``dtype=tf.uint8`` keeps 0..255), flattened to 784 values
unless ``reshape=False`` (then [N, 28, 28, 1], with the depth axis 1.x gave them); labels are class numbers, or
one-hot rows with ``one_hot=True``. The first ``validation_size`` training images form the validation set.
``DataSet.next_batch`` shuffles at the start of every epoch (``shuffle=True``) and fills a batch that crosses the
end of an epoch from the next one.
"""

import collections
import errno
import gzip
import os

import numpy as np

from npu_bridge.core.runtime.errors import FileReadError, NpuArgumentError

FILES = {
    "train_images": "train-images-idx3-ubyte.gz",
    "train_labels": "train-labels-idx1-ubyte.gz",
    "test_images": "t10k-images-idx3-ubyte.gz",
    "test_labels": "t10k-labels-idx1-ubyte.gz",
}
_IMAGES_MAGIC = 2051
_LABELS_MAGIC = 2049
_CLASSES = 10

Datasets = collections.namedtuple("Datasets", ["train", "validation", "test"])


def _read_idx(path, magic, dimensions):
    with gzip.open(path, "rb") as f:
        data = f.read()
    header = np.frombuffer(data[: 4 * (1 + dimensions)], dtype=">u4")
    if header.size != 1 + dimensions or header[0] != magic:
        raise FileReadError(
            errno.EINVAL, f"it is not an MNIST file (magic number {header[:1].tolist()}, not {magic})", path
        )
    shape = tuple(int(n) for n in header[1:])
    values = np.frombuffer(data, dtype=np.uint8, offset=4 * (1 + dimensions))
    if values.size != int(np.prod(shape)):
        raise FileReadError(errno.EINVAL, f"it holds {values.size} values, its header says {shape}", path)
    return values.reshape(shape)


class DataSet:
    """Images and labels of one split, with ``next_batch``.

    Args:
      images: uint8 [N, 28, 28, 1].
      labels: [N] class numbers, or [N, 10] one-hot rows.
      dtype: ``tf.float32`` / "float32" (scaled to [0, 1]) or ``tf.uint8`` / "uint8".
      reshape: flatten images to [N, rows * columns].
      seed: seed of the shuffling.
    """

    def __init__(self, images, labels, dtype="float32", reshape=True, seed=None):
        kind = getattr(dtype, "name", dtype)
        if kind not in ("float32", "uint8"):
            raise NpuArgumentError(f"read_data_sets dtype {dtype!r}: must be float32 or uint8")
        if len(images) != len(labels):
            raise NpuArgumentError(f"{len(images)} images but {len(labels)} labels")
        if reshape:
            images = images.reshape(images.shape[0], -1)
        self._images = images.astype(np.float32) / 255.0 if kind == "float32" else images
        self._labels = labels
        self._rng = np.random.RandomState(seed)
        self._epochs_completed = 0
        self._index_in_epoch = 0

    images = property(lambda self: self._images)
    labels = property(lambda self: self._labels)
    num_examples = property(lambda self: len(self._images))
    epochs_completed = property(lambda self: self._epochs_completed)

    def next_batch(self, batch_size, fake_data=False, shuffle=True):
        """Returns the next ``batch_size`` (images, labels).

        Raises:
          NpuArgumentError: ``fake_data`` (not provided here), or a batch larger than the data set.
        """
        if fake_data:
            raise NpuArgumentError("next_batch(fake_data=True) is not provided: read the MNIST files instead")
        if not 0 < batch_size <= self.num_examples:
            raise NpuArgumentError(f"batch_size {batch_size}: must be in [1, {self.num_examples}]")
        if self._epochs_completed == 0 and self._index_in_epoch == 0 and shuffle:
            self._shuffle()
        start = self._index_in_epoch
        if start + batch_size <= self.num_examples:
            self._index_in_epoch += batch_size
            return self._images[start : start + batch_size], self._labels[start : start + batch_size]
        rest_images, rest_labels = self._images[start:], self._labels[start:]
        self._epochs_completed += 1
        if shuffle:
            self._shuffle()
        self._index_in_epoch = batch_size - len(rest_images)
        head = slice(0, self._index_in_epoch)
        return (
            np.concatenate([rest_images, self._images[head]]),
            np.concatenate([rest_labels, self._labels[head]]),
        )

    def _shuffle(self):
        order = self._rng.permutation(self.num_examples)
        self._images, self._labels = self._images[order], self._labels[order]


def read_data_sets(
    train_dir, fake_data=False, one_hot=False, dtype="float32", reshape=True, validation_size=5000, seed=None, **_
):
    """Reads MNIST from the four ``.gz`` files in ``train_dir`` (never downloads).

    Returns:
      ``Datasets(train, validation, test)``.
    Raises:
      FileNotFoundError: a file is missing (the message names it and the directory).
      NpuArgumentError: ``fake_data``, a bad ``dtype`` or ``validation_size``.
      FileReadError: a file is not an MNIST file.
    """
    if fake_data:
        raise NpuArgumentError("read_data_sets(fake_data=True) is not provided: give the directory of the MNIST files")
    paths = {key: os.path.join(train_dir, name) for key, name in FILES.items()}
    for path in paths.values():
        if not os.path.isfile(path):
            raise FileNotFoundError(
                f"MNIST file {path} not found: put the four MNIST .gz files ({', '.join(FILES.values())}) in "
                f"{train_dir} (npu_bridge's TF1 mode never downloads them)"
            )
    train_images = _read_idx(paths["train_images"], _IMAGES_MAGIC, 3)[..., np.newaxis]
    train_labels = _read_idx(paths["train_labels"], _LABELS_MAGIC, 1)
    test_images = _read_idx(paths["test_images"], _IMAGES_MAGIC, 3)[..., np.newaxis]
    test_labels = _read_idx(paths["test_labels"], _LABELS_MAGIC, 1)
    if one_hot:
        train_labels, test_labels = (
            np.eye(_CLASSES, dtype=np.float64)[labels] for labels in (train_labels, test_labels)
        )
    if not 0 <= validation_size <= len(train_images):
        raise NpuArgumentError(f"validation_size {validation_size}: must be in [0, {len(train_images)}]")
    options = {"dtype": dtype, "reshape": reshape, "seed": seed}
    return Datasets(
        train=DataSet(train_images[validation_size:], train_labels[validation_size:], **options),
        validation=DataSet(train_images[:validation_size], train_labels[:validation_size], **options),
        test=DataSet(test_images, test_labels, **options),
    )


def load_mnist(train_dir="MNIST-data"):
    """``read_data_sets(train_dir)`` (``tf.contrib.learn.datasets.mnist.load_mnist``).

    Returns:
      ``Datasets(train, validation, test)``.
    Raises:
      FileNotFoundError, NpuArgumentError, FileReadError: as ``read_data_sets``.
    """
    return read_data_sets(train_dir)
