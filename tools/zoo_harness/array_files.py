"""The named-arrays kit: ``.npz``, ``.mat`` and ``.h5`` / ``.hdf5`` files named in a model's code, with the keys its
loader reads.

``spec(code)`` derives what to write from the loader's source with regexes, as the other kits derive markers:

- **file names**: quoted literals ending in one of the suffixes (``'train_32x32.mat'``, a flag's default
  ``'training3d.h5'``; a template such as ``'few-shot-{}.npz'`` gives one per split: train, val, test), and names
  composed from an argument (``args.mat + '.mat'``) whose value the shell wrapper passes (``--mat USPS``) or
  argparse defaults. Names of weights and outputs (``model``, ``weights``, ``vgg``, ``result``, ...), names a Keras
  model is loaded from or saved to (``load_model``, ``ModelCheckpoint``, ...), names assigned to a variable so
  named (``model_path = ...``) and names only ever written
  (``savemat``, ``np.savez``, ``h5py.File(..., 'w')``) are left out.
- **keys**: the subscripts (``f['X_train']``, ``f.get('data')``) of the variables the loader's result is bound to
  (``f = np.load(...)``, ``with h5py.File(...) as f``); a key built from a prefix (``data['modality_' + str(i)]``)
  gets ``prefix0`` and ``prefix1``. With no key found, ``data`` and ``label``.
- **values**, by the key's name: labels (``y``, ``label(s)``, ``*_labels``, ``target``, ...) are integers in 1..9
  (valid both 0- and 1-based for ten classes); counts (``num_*``, ``n_*``) are 2; a sparse matrix's parts
  (``P_data``, ``P_indices``, ``P_indptr``, ``P_shape``) form a valid CSR matrix; the rest are float32 in [0, 1].
  A file holds as many samples as fit in 32 MiB (64 to 10,000), each of the shape of the first float placeholder
  ``[None, ...]`` after the load (else 32x32x3), stored so that a ``.transpose(...)`` the loader applies to the key
  gives that shape.
- Keras' own layouts where the name is theirs: ``imdb.npz`` / ``reuters.npz`` hold lists of word indices.
"""

import hashlib
import json
import os
import re

import numpy as np

SUFFIXES = (".npz", ".mat", ".h5", ".hdf5")
# Samples per file: as many as fit in _FILE_BYTES, within these bounds (scripts that slice fixed ranges of the real
# data set, such as 100 batches spread over its 10,000 samples, get non-empty batches for their first steps)
SAMPLES, _MOST_SAMPLES, _FILE_BYTES = 64, 10000, 32 * 2**20

_LITERAL = re.compile(r"""['"]([^'"\s]*?([\w\-{}%]+\.(?:npz|mat|h5|hdf5)))['"]""")
_TEMPLATE = re.compile(r"\{\w*\}|%s")  # 'few-shot-{}.npz'.format(split): one file per split
_SPLITS = ("train", "val", "test")
_COMPOSED = re.compile(r"""args\.(\w+)\s*\+\s*['"]\.(npz|mat|h5|hdf5)['"]""")
_SKIPPED_NAME = re.compile(
    r"model|weight|ckpt|checkpoint|vgg|resnet|inception|result|pretrain|best|coef|mean|output|predict|save",
    re.IGNORECASE,
)
_WRITING_LINE = re.compile(r"savemat|savez|np\.save|\.to_hdf|File\([^)]*['\"][wa]['\"]")
# Keras model files: weights, whatever their name says
_MODEL_LINE = re.compile(r"load_model|load_weights|save_weights|ModelCheckpoint|\.save\(")
_LOADER = r"(?:(?:np|numpy)\.load|(?:\w+\.)*loadmat|(?:h5py|h5)\.File)\s*\("
_BOUND = re.compile(r"(\w+)\s*=\s*" + _LOADER)
_WITH = re.compile(r"with\s+" + _LOADER + r"[^\n]*?\)\s*as\s+(\w+)")
_PLACEHOLDER = re.compile(
    r"placeholder\(\s*(?:tf\.)?float(?:32|16)\s*,\s*(?:shape\s*=\s*)?[\[(]\s*None\s*,\s*([\d ,]+?)\s*,?\s*[\])]"
)
_LARGEST_SAMPLE = 32 * 32 * 64  # values a sample may have (a placeholder for full-size images is not followed)
_LABEL_KEY = re.compile(
    r"^(y|gt|cls)(_|$)|(^|_)(y|labels?|targets?|gt|classes|cls)$|^labels?(_|$)|^targets?(_|$)", re.IGNORECASE
)
_COUNT_KEY = re.compile(r"^(num|n)_", re.IGNORECASE)
_CSR_PARTS = ("data", "indices", "indptr", "shape")
_KERAS_SEQUENCES = ("imdb.npz", "reuters.npz")


def _names(code):
    names = []
    lines = code.splitlines()
    for line in lines:
        for match in _LITERAL.finditer(line):
            written = match.group(2)
            if _SKIPPED_NAME.search(written) or "%d" in written:
                continue
            if any(written in other and _MODEL_LINE.search(other) for other in lines):
                continue
            target = re.match(r"\s*([\w.]+)\s*=[^=]", line)  # model_path = ... + "resunetplusplus.h5"
            if target and _SKIPPED_NAME.search(target.group(1)):
                continue
            reading = any(written in other and not _WRITING_LINE.search(other) for other in lines)
            expanded = [_TEMPLATE.sub(split, written) for split in _SPLITS] if _TEMPLATE.search(written) else [written]
            names += [name for name in expanded if reading and name not in names and re.fullmatch(r"[\w\-.]+", name)]
    for argument, suffix in _COMPOSED.findall(code):
        passed = re.findall(rf"--{argument}[= ]+['\"]?([\w\-]+)", code)
        default = re.findall(rf"""['"]--{argument}['"][^)]*?default\s*=\s*['"]([\w\-]+)['"]""", code)
        for value in passed + default:
            name = f"{value}.{suffix}"
            if not _SKIPPED_NAME.search(name) and name not in names:
                names.append(name)
    return names


def _keys(code):
    variables = set(_BOUND.findall(code)) | set(_WITH.findall(code))
    keys = []
    for variable in sorted(variables):
        v = re.escape(variable)
        for key in re.findall(rf"""\b{v}(?:\[\s*|\.get\(\s*)['"]([\w\-/]+)['"]\s*[\])]""", code):
            if key not in keys:
                keys.append(key)
        for prefix in re.findall(rf"""\b{v}\[\s*['"](\w+)['"]\s*\+""", code):
            keys += [f"{prefix}{i}" for i in range(2) if f"{prefix}{i}" not in keys]
    return keys or ["data", "label"]


def _transposes(code, keys):
    """The permutation a loader applies to each key's array: on the subscript itself
    (``f['X'].transpose(3, 0, 1, 2)``) or on a variable assigned from it (``x = f['X'] / 255.`` then
    ``x.transpose((3, 0, 1, 2))`` or ``np.transpose(x, (0, 3, 2, 1))``)."""
    found = {}
    for key in keys:
        k = re.escape(key)
        subscript = rf"""\[\s*['"]{k}['"]\s*\]"""
        holders = [subscript + r"(?:\[[^\]]*\])?"]
        holders += [rf"\b{v}\b" for v in re.findall(rf"(\w+)\s*=[^=\n][^\n]*{subscript}", code)]
        for holder in holders:
            match = re.search(rf"{holder}\s*\)?\s*\.transpose\(\s*[\[(]?([\d,\s]+)", code) or re.search(
                rf"transpose\(\s*(?:\w+)?{holder}\s*,\s*(?:axes\s*=\s*)?[\[(]([\d,\s]+)", code
            )
            if match:
                perm = [int(p) for p in match.group(1).replace(" ", "").split(",") if p]
                if sorted(perm) == list(range(len(perm))):
                    found[key] = perm
                    break
    return found


def spec(code):
    """What the kit writes for a model whose code is ``code``: a JSON-able dict, or None when its code names no
    ``.npz`` / ``.mat`` / ``.h5`` file it reads."""
    if not re.search(_LOADER, code):
        return None
    names = _names(code)
    if not names:
        return None
    keys = _keys(code)
    # the placeholder the loaded arrays feed: the first after the loader's call, else the first of all
    loaded = re.search(_LOADER, code).start()
    placeholder = _PLACEHOLDER.search(code, loaded) or _PLACEHOLDER.search(code)
    feature = [int(d) for d in placeholder.group(1).replace(" ", "").split(",") if d] if placeholder else []
    if not feature or int(np.prod(feature)) > _LARGEST_SAMPLE:
        feature = [32, 32, 3]
    return {"names": names, "keys": keys, "feature": feature, "transposes": _transposes(code, keys)}


def spec_id(value):
    """A short stable name for a spec (the cache folder's suffix)."""
    return hashlib.sha1(json.dumps(value, sort_keys=True).encode()).hexdigest()[:10]


def _stored_shape(target, perm):
    """The shape s such that ``np.transpose(array_of_shape_s, perm)`` has shape target."""
    if perm is None or len(perm) != len(target):
        return tuple(target)
    shape = [0] * len(target)
    for index, axis in enumerate(perm):
        shape[axis] = target[index]
    return tuple(shape)


def _samples(keys, feature):
    per_sample = 4 * (int(np.prod(feature)) * len(keys) + 1)
    return int(min(_MOST_SAMPLES, max(SAMPLES, _FILE_BYTES // per_sample)))


def _arrays(keys, feature, transposes, rng, matlab):
    samples = _samples(keys, feature)
    arrays = {}
    groups = {key[: -len(part) - 1] for key in keys for part in _CSR_PARTS if key.endswith("_" + part)}
    for group in sorted(groups):
        if all(f"{group}_{part}" in keys for part in _CSR_PARTS):
            columns = samples if "adj" in group.lower() else 32
            # each row: its diagonal entry and two random columns (sorted, unique), built sparse
            rows = [np.unique([i % columns, *rng.integers(0, columns, size=2)]) for i in range(samples)]
            arrays[f"{group}_data"] = np.ones(sum(len(r) for r in rows), np.float32)
            arrays[f"{group}_indices"] = np.concatenate(rows).astype(np.int32)
            arrays[f"{group}_indptr"] = np.concatenate([[0], np.cumsum([len(r) for r in rows])]).astype(np.int32)
            arrays[f"{group}_shape"] = np.array([samples, columns])
    for key in keys:
        name = key.rsplit("/", 1)[-1]
        if key in arrays:
            continue
        if _COUNT_KEY.search(name):
            arrays[key] = np.array([[2]]) if matlab else np.array(2)
        elif _LABEL_KEY.search(name):
            labels = rng.integers(1, 10, size=samples)
            arrays[key] = labels[:, None] if matlab else labels
        elif name.endswith("_shape"):
            arrays[key] = np.array([samples, 32])
        else:
            target = [samples, *feature]
            arrays[key] = rng.random(_stored_shape(target, transposes.get(key)), dtype=np.float32)
    return arrays


def _keras_sequences(path, rng):
    def reviews(count):  # lists of word indices from 1 (the start mark) up, of uneven lengths
        rows = np.empty(count, dtype=object)
        rows[:] = [[1] + rng.integers(4, 5000, int(rng.integers(20, 200))).tolist() for _ in range(count)]
        return rows

    if os.path.basename(path) == "imdb.npz":
        np.savez(
            path,
            x_train=reviews(512),
            x_test=reviews(128),
            y_train=rng.integers(0, 2, 512),
            y_test=rng.integers(0, 2, 128),
        )
    else:
        np.savez(path, x=reviews(512), y=rng.integers(0, 46, 512))


def write(root, rng, spec):
    """Writes the files ``spec`` (from the function ``spec``) describes into root."""
    for name in spec["names"]:
        path = os.path.join(root, name)
        if name in _KERAS_SEQUENCES:
            _keras_sequences(path, rng)
            continue
        matlab = name.endswith(".mat")
        arrays = _arrays(spec["keys"], spec["feature"], spec["transposes"], rng, matlab)
        if matlab:
            import scipy.io

            valid = {k: v for k, v in arrays.items() if re.fullmatch(r"[A-Za-z]\w*", k)}
            scipy.io.savemat(path, valid)
        elif name.endswith(".npz"):
            np.savez(path, **arrays)
        else:
            import h5py

            with h5py.File(path, "w") as f:
                for key, array in arrays.items():
                    f.create_dataset(key, data=array)
