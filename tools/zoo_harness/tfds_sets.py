"""The tfds kit: tensorflow_datasets' prepared data of the data sets a loader names (``tfds.load("mnist")``,
``tfds.builder("voc/2007")``, ``tfds.load(name="cats_vs_dogs")``).

Each data set is written by tensorflow_datasets itself, in its own on-disk layout (``<name>/<config>/<version>/``
with TFRecord shards and ``dataset_info.json``), from random examples of the data set's own features (drawn by its
testing ``RandomFakeGenerator``): images of random pixels at the feature's shape (48 to 96 pixels where a side is
free), sequences (a VOC image's objects) of 1 to 8 items, boxes with each minimum below its maximum, labels in the
data set's classes, strings of letters. Nothing is downloaded: the builder's split generators are replaced by the
random ones. The splits are train, validation and test, so slices such as ``train[:80%]`` work. The harness points
``TFDS_DATA_DIR`` at the data path, where the kit writes, for loaders that pass no ``data_dir``.
"""

import importlib.util
import re

import numpy as np

_NAME = r"""['"]([A-Za-z0-9_]+(?:/[A-Za-z0-9_.]+)?(?::[0-9.*]+)?)['"]"""  # "mnist", "voc/2007", "clevr:3.1.0"
# tfds.load / tfds.builder given a name, positional or as name=: a literal, or a variable / flag holding one
_LOADED = re.compile(r"tfds\.(?:load|builder)\(\s*(?:name\s*=\s*)?(?:" + _NAME + r"|([A-Za-z_][A-Za-z0-9_.]*)\s*[,)])")
EXAMPLES = {"train": 320, "validation": 64, "test": 64}


def chosen(code):
    """Whether the kit is for ``code``: it names a data set, and tensorflow_datasets is there to write it with
    (without it the script stops at its own import, a missing package, as it would anyway)."""
    return bool(names(code)) and importlib.util.find_spec("tensorflow_datasets") is not None


def names(code):
    """The data sets ``code`` loads by name, sorted: literal names, and the literal a variable is assigned or a
    flag (``FLAGS.dataset``, ``args.dataset``) defaults to; empty when it names none."""
    found = set()
    for literal, variable in _LOADED.findall(code):
        found.update([literal] if literal else _values_of(variable, code))
    return tuple(sorted(found))


def _values_of(variable, code):
    """The literals ``code`` assigns to ``variable`` or gives as the default of the flag it reads."""
    name = re.escape(variable.rsplit(".", 1)[-1])
    sources = (
        rf"\b{name}\s*=\s*{_NAME}",  # dataset_name = "horses_or_humans"
        rf"DEFINE_string\(\s*['\"]{name}['\"]\s*,\s*(?:default\s*=\s*)?{_NAME}",  # absl / tf.app flags
        rf"add_argument\(\s*['\"]--{name}['\"][^)]*?default\s*=\s*{_NAME}",  # argparse
    )
    return [value for source in sources for value in re.findall(source, code)]


def write(root, rng, spec):
    """Prepares every data set of ``spec`` (``names``' result) under ``root`` from random examples."""
    import tensorflow_datasets as tfds

    seed = int(rng.integers(0, 2**31))
    for name in spec:
        _prepare(tfds, name, root, seed)


def _prepare(tfds, name, root, seed):
    from tensorflow_datasets.testing import mocking

    class Examples(mocking.RandomFakeGenerator):
        """Random examples whose free dimensions agree within an example: an image's sides, a sequence's length."""

        def _generate_example(self, rng):
            self._length, self._side = int(rng.integers(1, 9)), int(rng.integers(48, 97))
            return super()._generate_example(rng)

        def _generate_random_obj(self, feature, tensor_info, rng):
            free = self._side if isinstance(feature, tfds.features.Image) else self._length
            shape = tuple(free if s is None else s for s in tensor_info.shape)
            fixed = tfds.features.TensorInfo(shape=shape, dtype=tensor_info.dtype)
            value = super()._generate_random_obj(feature, fixed, rng)
            if isinstance(feature, tfds.features.BBoxFeature):  # (ymin, xmin, ymax, xmax): each min below its max
                value = np.concatenate(
                    [np.minimum(value[..., :2], value[..., 2:]), np.maximum(value[..., :2], value[..., 2:])], -1
                )
            return value

    builder = tfds.builder(name, data_dir=root)

    class Synthetic(type(builder), skip_registration=True):
        """The data set's builder with random examples of its features in place of its downloads."""

        def _split_generators(self, dl_manager):
            return {split: self._random_examples(count, index) for index, (split, count) in enumerate(EXAMPLES.items())}

        def _random_examples(self, count, index):
            examples = Examples(self.info.features, count, seed=seed + index)
            return ((f"{index}-{k}", example) for k, example in enumerate(examples))

    Synthetic.name = builder.name  # the folder it writes: the data set's, not the class's

    synthetic = Synthetic(data_dir=root, config=builder.builder_config, version=builder.version, file_format="tfrecord")
    synthetic.download_and_prepare(
        download_config=tfds.download.DownloadConfig(
            compute_stats=tfds.download.ComputeStatsMode.SKIP, try_download_gcs=False
        )
    )
