"""Where the Keras 2.2-2.6 modules and TensorFlow internals scripts import live on TensorFlow 2.21 / tf_keras 2.21.

The tables of the route both modes add (``legacy_modules``): user code (``user_code``) that imports ``keras...``
(standalone Keras 2.2-2.6) or ``tensorflow.python.keras...`` (TensorFlow's own Keras copy up to 2.6) gets tf_keras
2.21, the Keras ``tf.keras`` is here: ``keras.<path>`` is ``tf_keras.src.<path>`` (whose layout is Keras 2.6's),
else the public ``tf_keras.<path>``, except for the modules that moved (``KERAS_MOVED``, Keras 2.2's
``engine.topology`` among them). The TensorFlow-internal modules that moved or vanished (``TF_MOVED``) are added
back: the module of that name when TensorFlow has one, else its new home. Besides the hand overrides written here,
both tables take the moved rows of the generated table (``legacy_paths_table.tsv``, ``tools/derive_legacy_paths.py``:
every ``tensorflow.python`` module or name of TensorFlow 1.15 / 2.6 that 2.21 moved), and ``MOVED_NAMES`` gives
the names a module 2.21 still has lost (a view of that module answers them after its own), with ``KERAS_ERA_NAMES``
(Keras 2.2's aliases tf_keras dropped).

A module path maps to candidates, best first; the first that imports is the module. A Keras 2.x module whose names
are now spread over several modules (``layers.merge``, ``layers.recurrent``) has several sources, searched in
order. This module is data and string work only: it imports nothing (it reads the generated table).
"""

import os

from npu_bridge.core.runtime.errors import NpuArgumentError

KERAS_ROOTS = ("keras", "tensorflow.python.keras")
KERAS_BASES = ("tf_keras.src", "tf_keras")

# Keras 2.6 module (below a root) -> the tf_keras 2.21 modules that hold its names now, searched in order
KERAS_MOVED = {
    # Keras 2.2's engine.topology (kept by 2.2 for older code): Layer, InputSpec, Node, Input, InputLayer,
    # get_source_inputs and the HDF5 weight loaders (Network / Container are not provided)
    "engine.topology": (
        "tf_keras.src.engine.base_layer",
        "tf_keras.src.engine.input_spec",
        "tf_keras.src.engine.node",
        "tf_keras.src.engine.input_layer",
        "tf_keras.src.utils.layer_utils",
        "tf_keras.src.saving.legacy.hdf5_format",
    ),
    # Keras 2.2-2.3's backend was a package whose tensorflow_backend module held every backend function
    # (`from keras.backend.tensorflow_backend import set_session`)
    "backend.tensorflow_backend": ("tf_keras.src.backend",),
    "layers.advanced_activations": ("tf_keras.src.layers.activation",),
    "layers.convolutional_recurrent": ("tf_keras.src.layers.rnn",),
    "layers.cudnn_recurrent": ("tf_keras.src.layers.rnn",),
    "layers.dense_attention": (
        "tf_keras.src.layers.attention",
        "tf_keras.src.layers.attention.base_dense_attention",
    ),
    "layers.einsum_dense": ("tf_keras.src.layers.core.einsum_dense",),
    "layers.embeddings": ("tf_keras.src.layers.core.embedding",),
    "layers.experimental.preprocessing": ("tf_keras.layers.experimental.preprocessing",),
    "layers.legacy_rnn.rnn_cell_impl": ("tf_keras.src.layers.rnn.legacy_cells",),
    "layers.legacy_rnn.rnn_cell_wrapper_impl": ("tf_keras.src.layers.rnn.legacy_cell_wrappers",),
    "layers.local": ("tf_keras.src.layers.locally_connected",),
    "layers.merge": ("tf_keras.src.layers.merging", "tf_keras.src.layers.merging.base_merge"),
    "layers.multi_head_attention": ("tf_keras.src.layers.attention.multi_head_attention",),
    # Keras 2.6's normalization module: BatchNormalization is the v1 layer there, as in TensorFlow 2.4
    "layers.normalization": (
        "tf_keras.src.layers.normalization.batch_normalization_v1",
        "tf_keras.src.layers.normalization.layer_normalization",
        "tf_keras.src.layers.normalization.batch_normalization",
        "tf_keras.src.layers.normalization",
    ),
    "layers.normalization_v2": ("tf_keras.src.layers.normalization.batch_normalization",),
    # Keras 2.6's recurrent module held the v1 LSTM / GRU; recurrent_v2 the ones keras.layers gives
    "layers.recurrent": (
        "tf_keras.src.layers.rnn.lstm_v1",
        "tf_keras.src.layers.rnn.gru_v1",
        "tf_keras.src.layers.rnn",
    ),
    "layers.recurrent_v2": ("tf_keras.src.layers.rnn",),
    "layers.rnn_cell_wrapper_v2": ("tf_keras.src.layers.rnn.cell_wrappers",),
    "layers.wrappers": ("tf_keras.src.layers.rnn",),
    "initializers.initializers_v2": ("tf_keras.src.initializers.initializers",),
    # Keras 2.6's optimizer generation is tf_keras's legacy one (keras.optimizers stays tf.keras.optimizers)
    "optimizer_v1": ("tf_keras.src.optimizers.optimizer_v1",),
    # Keras 2.6's preprocessing.image re-exported keras_preprocessing's load_img / img_to_array / array_to_img /
    # save_img; tf_keras 2.21 keeps them in utils.image_utils
    "preprocessing.image": ("tf_keras.src.preprocessing.image", "tf_keras.src.utils.image_utils"),
    "optimizer_v2": ("tf_keras.src.optimizers.legacy",),
    "optimizer_v2.learning_rate_schedule": ("tf_keras.src.optimizers.schedules.learning_rate_schedule",),
    "optimizer_v2.legacy_learning_rate_decay": ("tf_keras.src.optimizers.legacy_learning_rate_decay",),
    "optimizer_v2.utils": ("tf_keras.src.optimizers.utils",),
    "saving.hdf5_format": ("tf_keras.src.saving.legacy.hdf5_format",),
    "saving.model_config": ("tf_keras.src.saving.legacy.model_config",),
    "saving.save": ("tf_keras.src.saving.legacy.save",),
    "saving.saved_model": ("tf_keras.src.saving.legacy.saved_model",),
    "saving.saving_utils": ("tf_keras.src.saving.legacy.saving_utils",),
    # Keras 2.2's engine package itself exported Input, InputLayer, InputSpec, Layer, get_source_inputs and Model
    # (`from keras.engine import Input`); Keras 2.6's is empty. Its submodules keep their own homes.
    "engine": (
        "tf_keras.src.engine",
        "tf_keras.src.engine.input_layer",
        "tf_keras.src.engine.base_layer",
        "tf_keras.src.engine.input_spec",
        "tf_keras.src.utils.layer_utils",
        "tf_keras.src.engine.training",
    ),
    "utils.all_utils": ("tf_keras.src.utils",),
    # Keras 2.6's (de)serialize_keras_object and the custom-object registry moved to saving modules (custom losses
    # and layers copied from Keras import them from here)
    "utils.generic_utils": (
        "tf_keras.src.utils.generic_utils",
        "tf_keras.src.saving.legacy.serialization",
        "tf_keras.src.saving.object_registration",
    ),
}

# TensorFlow-internal module -> where its names are on TensorFlow 2.21 (used only when the module is missing)
TF_MOVED = {
    "tensorflow.python.training.training_ops": ("tensorflow.python.ops.gen_training_ops",),
    "tensorflow.python.distribute.distribution_strategy_context": ("tensorflow.python.distribute.distribute_lib",),
    # TensorFlow 2.0-2.3's profiler API, still imported by the zoo's copies of the official models
    "tensorflow.python.eager.profiler": ("npu_bridge.core.runtime.eager_profiler",),
}

# The entries above are the hand overrides: what the generated table cannot derive (Keras 2.2's engine.topology, the
# profiler written here) or where it would choose differently. The rest comes from the table.
KERAS_MOVED_BY_HAND = frozenset(KERAS_MOVED)
TF_MOVED_BY_HAND = frozenset(TF_MOVED)

# The generated table (tools/derive_legacy_paths.py, from the TensorFlow 1.15 and 2.6 trees, ordered by the zoo's
# use): every tensorflow.python module or name TensorFlow 1.15 / 2.6 had and 2.21 moved, with its new home
TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "legacy_paths_table.tsv")
_KERAS_PREFIX = "tensorflow.python.keras."


def read_table(path=TABLE):
    """The moved rows of the generated table (the other rows say why a path is not provided).

    Returns:
      (modules, keras, names): {old module: its homes} for TensorFlow modules, {Keras 2.6 module below a root:
      its homes} for ``tensorflow.python.keras`` modules, {old module: {name: "module:name", or a module path}}
      for the names a module TensorFlow 2.21 still has lost. Empty when the file is missing.
    """
    modules, keras, names = {}, {}, {}
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return modules, keras, names
    for line in lines:
        fields = line.split("\t")
        if len(fields) < 6 or fields[4] != "moved":  # a hand row is served by its own table (TF_MOVED, tf1/...)
            continue
        old, kind, target = fields[0], fields[1], fields[5]
        if kind == "name":
            module, _, name = old.rpartition(".")
            names.setdefault(module, {})[name] = target
        elif old.startswith(_KERAS_PREFIX):
            keras[old[len(_KERAS_PREFIX) :]] = tuple(target.split(","))
        else:
            modules[old] = tuple(target.split(","))
    return modules, keras, names


_generated_modules, _generated_keras, MOVED_NAMES = read_table()

# Names Keras 2.2-2.4 and TensorFlow 1.15's Keras had that tf_keras 2.21 lacks, by module below a Keras root (a hand
# table; the generated one covers TensorFlow's own modules): the transposed convolutions' aliases of
# layers.convolutional, which layers exported (`from keras.layers import Deconvolution3D`)
_TRANSPOSED_ALIASES = {
    "Deconvolution2D": "tf_keras.src.layers:Conv2DTranspose",
    "Deconv2D": "tf_keras.src.layers:Conv2DTranspose",
    "Deconvolution3D": "tf_keras.src.layers:Conv3DTranspose",
    "Deconv3D": "tf_keras.src.layers:Conv3DTranspose",
}
KERAS_ERA_NAMES = {"layers": _TRANSPOSED_ALIASES, "layers.convolutional": _TRANSPOSED_ALIASES}
for _rest, _names in KERAS_ERA_NAMES.items():
    for _root in KERAS_ROOTS:
        for _name, _target in _names.items():
            MOVED_NAMES.setdefault(f"{_root}.{_rest}", {}).setdefault(_name, _target)
for _old, _new in _generated_keras.items():
    KERAS_MOVED.setdefault(_old, _new)  # a hand override wins
for _old, _new in _generated_modules.items():
    TF_MOVED.setdefault(_old, _new)

TOP_NAMES = frozenset(path.partition(".")[0] for path in (*KERAS_ROOTS, *TF_MOVED))


def _parents(path):
    parts = path.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))}


_MAPPED = {f"{root}.{key}" for root in KERAS_ROOTS for key in KERAS_MOVED} | set(TF_MOVED) | set(KERAS_ROOTS)
_MAPPED |= set(MOVED_NAMES)  # a module that lost names is a view that answers them too
_PARENTS = set().union(*(_parents(path) for path in _MAPPED))


def candidates(path):
    """The real modules for a module path user code imports, best first.

    Args:
      path: the dotted module name as the script writes it, e.g. "keras.layers.core".
    Returns:
      A list of module names, or None when the path is not one npu_bridge maps (it is imported as usual).
    """
    for root in KERAS_ROOTS:
        if path == root or path.startswith(root + "."):
            return _keras_candidates(path[len(root) + 1 :])
    old = max((key for key in TF_MOVED if path == key or path.startswith(key + ".")), key=len, default=None)
    if old is not None:  # the longest entry wins: a submodule may have a home of its own
        suffix = path[len(old) :]
        return [path, *(target + suffix for target in TF_MOVED[old])]
    return None


def add_moved(old, new):
    """Adds a TensorFlow-internal module that a higher layer provides (the TF1 mode's
    ``tensorflow.python.estimator``), as if it were in ``TF_MOVED``; a module with several homes is a view over
    all of them.

    Args:
      old: the module path as scripts import it ("tensorflow.python.estimator.model_fn").
      new: the modules that hold its names now, searched in order.
    Raises:
      NpuArgumentError: ``old`` lies outside the top-level names the route watches (``TOP_NAMES``).
    """
    if old.partition(".")[0] not in TOP_NAMES:
        raise NpuArgumentError(f"add_moved: {old!r} is not below one of {sorted(TOP_NAMES)}")
    TF_MOVED[old] = tuple(new)
    _MAPPED.add(old)
    _PARENTS.update(_parents(old))


def _keras_candidates(rest, moved_table=None):
    table = KERAS_MOVED if moved_table is None else moved_table
    if not rest:
        return [KERAS_BASES[0]]
    key = max((k for k in table if rest == k or rest.startswith(k + ".")), key=len, default=None)
    moved = [target + rest[len(key) :] for target in table[key]] if key else []
    return list(dict.fromkeys([*moved, *(f"{base}.{rest}" for base in KERAS_BASES)]))


def keras_rule(path):
    """The candidates of a Keras path by the hand rule alone (no generated entry): what the table's generator
    checks before it looks for a home of its own."""
    rest = keras_rest(path)
    hand = {key: KERAS_MOVED[key] for key in KERAS_MOVED_BY_HAND}
    return _keras_candidates(rest, hand) if rest is not None else []


def moved_name(module, name):
    """Where a name that ``module`` had in TensorFlow 1.15 / 2.6 and lost is now, or None.

    Returns:
      "home.module:name" for a name, a module path for a name that was a module, or None.
    """
    return MOVED_NAMES.get(module, {}).get(name)


def keras_rest(path):
    """The part of a Keras path below its root ("layers" for "keras.layers", "" for a root), or None."""
    for root in KERAS_ROOTS:
        if path == root:
            return ""
        if path.startswith(root + "."):
            return path[len(root) + 1 :]
    return None


def moved(path):
    """True when ``path`` is a Keras module ``KERAS_MOVED`` maps, or lies below one."""
    rest = keras_rest(path)
    return bool(rest) and any(rest == key or rest.startswith(key + ".") for key in KERAS_MOVED)


def in_keras(path):
    """True when ``path`` is a Keras root or lies below one."""
    return any(path == root or path.startswith(root + ".") for root in KERAS_ROOTS)


def combined(path):
    """True when ``path`` is a Keras 2.6 or TensorFlow module whose names are now in several modules (all of them
    back it)."""
    for root in KERAS_ROOTS:
        if path.startswith(root + "."):
            return len(KERAS_MOVED.get(path[len(root) + 1 :], ())) > 1
    return len(TF_MOVED.get(path, ())) > 1


def needs_view(path):
    """True when user code must see ``path`` through a view: a Keras root, a module with several sources, or a
    parent of a mapped module (whose real module lacks that child, e.g. ``tensorflow.python.training``)."""
    return path in KERAS_ROOTS or path in _PARENTS or combined(path) or path in MOVED_NAMES


def is_mapped_child(path):
    """True when ``path`` is a mapped module or a parent of one (a view answers it as an attribute)."""
    return path in _MAPPED or path in _PARENTS
