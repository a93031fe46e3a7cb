"""The parsed-tfrecord kit: TFRecord files of ``tf.train.Example`` records holding the features the loader's own
parsing dict names.

``spec(code)`` reads the dicts the loader hands ``parse_single_example`` / ``parse_example``
(``'label': tf.FixedLenFeature([1], tf.int64)``, ``tf.io.VarLenFeature(tf.float32)``,
``FixedLenSequenceFeature``) and the ``.tfrecord`` / ``.tfrecords`` file names its code holds:

- **file names**: quoted literals (``'train.tfrecords'``); ``%s`` / ``{}`` in a template is each split (train, val,
  test, validation), ``%d`` / ``%05d`` / ``{:05d}`` a shard number (0), ``*`` a zero. ``train.tfrecord``,
  ``train.tfrecords`` and ``train-00000-of-00001`` always, for loaders that list a folder or match a pattern.
- **shapes**: literal dimensions, or names whose value the wrapper passes (``--seq_length=128``), a flag's default
  (``DEFINE_integer('seq_length', 128, ...)``) or an assignment (``line_per_sample = 1000``) gives, and products
  of these; a name nothing gives counts 1.
- **values**, by dtype and the key's name: bytes are a 96x96 JPEG (PNG when the loader decodes the key with
  ``decode_png``), raw ``uint8`` / ``float32`` bytes sized by the ``reshape`` after the loader's ``decode_raw`` of
  the key (else 96x96x3; class ids 0 and 1 for labels and masks), or a short word for names, formats and texts;
  integers are 96 for heights and widths, 3 for channels, ``[96, 96, 3]`` for a shape, 1 for labels and masks (a
  valid class 0- or 1-based), 0 or 1 for segment and token type ids, 8 for lengths, else ids in 1..99 (inside every
  vocabulary); floats are box corners in 0..1 for ``xmin`` ... ``ymax``, 0 or 1 for labels, else uniform in [0, 1).
  Variable-length features get 8 values. Every name holds the same 512 records (fewer of large features: at most
  256 MiB; a link to the first file), ZLIB- or GZIP-compressed when the code reads them so
  (``compression_type='ZLIB'``, ``TFRecordCompressionType.ZLIB``).
"""

import ast
import os
import re

import call_text
import numpy as np

RECORDS = 512  # a file: scripts derive steps per epoch as records // batch size, with batches of up to 256
DISTINCT = 64  # different records; the file repeats them
FILE_BYTES = 256 * 2**20  # at most, unless one record is larger: fewer records of large features (8 x 640 x 640 x 7
# floats, 92 MB a record, made 47 GB)
VARIABLE = 8  # values of a variable-length feature
_FEATURE = re.compile(
    r"""['"]([\w/\-.:]+)['"]\s*:\s*(?:[\w.]*\.)?(FixedLenFeature|VarLenFeature|FixedLenSequenceFeature)\s*\("""
)
_NAME = re.compile(r"""['"]([^'"\s]*?[\w\-{}%*:.]*\.tfrecords?)['"]""")
_SPLITS = ("train", "val", "test", "validation")
_READERS = re.compile(r"TFRecordDataset|TFRecordReader|tf_record_iterator|TFRecordOptions|tfrecord", re.IGNORECASE)
# `name = parsed['key']`, every one of the code in one pass (a model's code can be the 12 MB of TensorFlow's model
# garden, and one search of it per feature took minutes)
_ASSIGNED = re.compile(r"""\b(\w+)\s*=\s*[\w.]+\[\s*['"]([^'"]+)['"]\s*\]""")
_LARGEST_RAW = 2**20  # values of a raw feature; a larger reshape is not followed
_DEFAULT_NAMES = ("train.tfrecord", "train.tfrecords", "train-00000-of-00001")


def _integer(name, code):
    """The value code or its wrappers give a name: ``--name=8``, ``DEFINE_integer('name', 8``, ``name = 8``."""
    n = re.escape(name)
    for pattern in (
        rf"--(?:max_)?{n}[= ]+(\d+)\b",
        rf"""DEFINE_integer\(\s*['"]{n}['"]\s*,\s*(\d+)""",
        rf"""['"]--{n}['"][^)]*?default\s*=\s*(\d+)""",
        rf"""['"]{n}['"]\s*:\s*(\d+)\b""",
        rf"(?<!\w){n}\s*=\s*(\d+)\b",
    ):
        match = re.search(pattern, code)
        if match:
            return int(match.group(1))
    return None


def _evaluate(node, code):
    """An integer for a shape's dimension (a literal, a name some code gives, or arithmetic of these), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.Name):
        return _integer(node.id, code)
    if isinstance(node, ast.Attribute):
        return _integer(node.attr, code)
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        return _integer(node.slice.value, code)  # config['max_sequence_length']
    if isinstance(node, ast.BinOp):
        left, right = _evaluate(node.left, code), _evaluate(node.right, code)
        if left is None or right is None:
            return None
        operations = {ast.Mult: left * right, ast.Add: left + right, ast.Sub: left - right}
        if isinstance(node.op, ast.FloorDiv) and right:
            return left // right
        return operations.get(type(node.op))
    return None


def _shape(node, code):
    if node is None:
        return []
    if isinstance(node, (ast.List, ast.Tuple)):
        dims = [_evaluate(element, code) for element in node.elts]
        return [d if d is not None and d > 0 else 1 for d in dims]
    value = _evaluate(node, code)  # shape=n: one dimension
    return [value if value and value > 0 else 1]


def _dtype(node):
    text = ast.unparse(node) if node is not None else ""
    for word, kind in (("string", "bytes"), ("int", "int"), ("float", "float"), ("bool", "int")):
        if word in text:
            return kind
    return None


def _feature(kind, arguments, code):
    """(dtype, shape or None for a variable length) of one parsed feature, or None when it cannot be read."""
    try:
        call = ast.parse(f"f({arguments})", mode="eval").body
    except SyntaxError:
        return None
    named = {k.arg: k.value for k in call.keywords}
    positional = list(call.args)
    if kind == "VarLenFeature":
        dtype = _dtype(named.get("dtype", positional[0] if positional else None))
        return (dtype, None) if dtype else None
    shape_node = named.get("shape", positional[0] if positional else None)
    dtype = _dtype(named.get("dtype", positional[1] if len(positional) > 1 else None))
    if dtype is None:
        return None
    if kind == "FixedLenSequenceFeature":
        return dtype, None
    return dtype, _shape(shape_node, code)


class _Calls:
    """The places of a model's code that a feature's decoding is looked up in, found once for all its features."""

    def __init__(self, code):
        self.code = code
        self.assigned = {}  # key -> the names assigned parsed[key], in the code's order
        for name, key in _ASSIGNED.findall(code):
            self.assigned.setdefault(key, []).append(name)
        self.decodes = [m.start() for m in re.finditer("decode_", code)]

    def first_decode(self, holder):
        """The first ``decode_*(... holder ...)`` call of the code, as a match, or None."""
        pattern = re.compile(rf"decode_(raw|png|jpeg|image)\(\s*(?:[\w.]+)?{holder}\s*(?:,\s*([\w.]+))?")
        return next((m for m in (pattern.match(self.code, at) for at in self.decodes) if m), None)


def _decoder(key, calls):
    """How the loader decodes a bytes feature: "raw" (with its dtype and size), "png", else "jpeg"."""
    code = calls.code
    holders = [rf"""\[\s*['"]{re.escape(key)}['"]\s*\]"""]
    holders += [rf"\b{v}\b" for v in calls.assigned.get(key, ())]
    for holder in holders:
        match = calls.first_decode(holder)
        if match and match.group(1) == "raw":
            item = 4 if match.group(2) and "float32" in match.group(2) else 1
            if match.group(2) and "float64" in match.group(2):
                item = 8
            window = re.sub(r"#[^\n]*", "", code[match.end() : match.end() + 600])
            size = 96 * 96 * 3  # as a ``shape`` feature says
            for after in re.finditer(r"reshape\(\s*\w+\s*,\s*([\[(][^\])]*[\])])", window):
                try:
                    dims = _shape(ast.parse(after.group(1), mode="eval").body, code)
                except SyntaxError:
                    continue
                if 0 < int(np.prod(dims)) <= _LARGEST_RAW:
                    size = int(np.prod(dims))
                break
            return ("raw", item, size)
        if match:
            return (match.group(1),)
    return ("jpeg",)


def _names(code):
    names = []
    for literal in _NAME.findall(code):
        base = os.path.basename(literal)
        base = re.sub(r"%[-0.]?\d*d|\{:?0?\d*d\}", "0", base)  # shard numbers
        base = base.replace("*", "0")
        variants = (
            [re.sub(r"%s|\{\w*\}", split, base) for split in _SPLITS] if re.search(r"%s|\{\w*\}", base) else [base]
        )
        for name in variants:
            if re.fullmatch(r"[\w\-.]+\.tfrecords?", name) and name not in names:
                names.append(name)
    return names + [n for n in _DEFAULT_NAMES if n not in names]


def spec(code):
    """What the kit writes for code: ``{"names": [...], "features": {key: [dtype, shape, decoder]}, "compression":
    "" | "ZLIB" | "GZIP"}``, or None when the code parses no feature dict of literal keys out of TFRecords."""
    if not _READERS.search(code):
        return None
    features = {}
    calls = _Calls(code)
    for match in _FEATURE.finditer(code):
        arguments = call_text.call_arguments(code, match.end(), 2000)
        feature = _feature(match.group(2), arguments, code) if arguments is not None else None
        if feature is None or match.group(1) in features:
            continue
        dtype, shape = feature
        decoder = list(_decoder(match.group(1), calls)) if dtype == "bytes" else None
        features[match.group(1)] = [dtype, shape, decoder]
    if not features:
        return None
    compressed = re.search(r"""compression_type\s*=\s*['"](ZLIB|GZIP)['"]|TFRecordCompressionType\.(ZLIB|GZIP)""", code)
    compression = next(g for g in compressed.groups() if g) if compressed else ""
    return {"names": _names(code), "features": features, "compression": compression}


_WORDS = re.compile(r"name|format|text|colorspace|id$|class/text|synset|path", re.IGNORECASE)
_LABEL = re.compile(r"label|class|target|^y$|score|outcome", re.IGNORECASE)
_CLASS_MAP = re.compile(r"mask|seg|^gt|annotation", re.IGNORECASE)


def _bytes_value(key, decoder, rng):
    import image_sets

    leaf = key.rsplit("/", 1)[-1]
    if decoder[0] == "raw":
        _, item, size = decoder
        if item == 1 and (_LABEL.search(leaf) or _CLASS_MAP.search(leaf)):  # a segmentation mask: class ids
            return rng.integers(0, 2, size=size, dtype=np.uint8).tobytes()
        if item == 1:
            return rng.integers(0, 256, size=size, dtype=np.uint8).tobytes()
        return rng.random(size).astype(np.float32 if item == 4 else np.float64).tobytes()
    if _WORDS.search(leaf) and "encoded" not in leaf:
        return b"JPEG" if "format" in leaf else f"{leaf}_0".encode()
    if decoder[0] == "png":
        import io

        from PIL import Image

        buffer = io.BytesIO()
        Image.fromarray(rng.integers(0, 256, size=(96, 96, 3), dtype=np.uint8)).save(buffer, format="PNG")
        return buffer.getvalue()
    return image_sets.jpeg(rng)


def _int_values(key, count, rng):
    leaf = key.rsplit("/", 1)[-1].lower()
    if leaf in ("height", "width") or leaf.endswith(("_height", "_width")):
        return [96] * count
    if "channel" in leaf or leaf == "depth":
        return [3] * count
    if leaf == "shape" and count == 3:
        return [96, 96, 3]
    if _LABEL.search(leaf) or "mask" in leaf:
        return [1] * count
    if "segment" in leaf or "type_id" in leaf:  # BERT's segment / token type ids index a table of 2 (ALBERT: 99)
        return rng.integers(0, 2, size=count).tolist()
    if "len" in leaf:
        return [VARIABLE] * count
    return rng.integers(1, 100, size=count).tolist()


def _float_values(key, count, rng):
    leaf = key.rsplit("/", 1)[-1].lower()
    if re.search(r"[xy]min", leaf):
        return rng.uniform(0.05, 0.4, size=count).tolist()
    if re.search(r"[xy]max", leaf):
        return rng.uniform(0.6, 0.95, size=count).tolist()
    if _LABEL.search(leaf):
        return rng.integers(0, 2, size=count).astype(float).tolist()
    return rng.random(count).tolist()


def _example(features, rng):
    import tensorflow as tf

    fields = {}
    for key, (dtype, shape, decoder) in features.items():
        count = VARIABLE if shape is None else int(np.prod(shape)) if shape else 1
        if dtype == "bytes":
            value = tf.train.Feature(bytes_list=tf.train.BytesList(value=[_bytes_value(key, decoder, rng)] * count))
        elif dtype == "int":
            value = tf.train.Feature(int64_list=tf.train.Int64List(value=_int_values(key, count, rng)))
        else:
            value = tf.train.Feature(float_list=tf.train.FloatList(value=_float_values(key, count, rng)))
        fields[key] = value
    return tf.train.Example(features=tf.train.Features(feature=fields)).SerializeToString()


def write(root, rng, spec):
    """Writes the files ``spec`` (from the function ``spec``) describes into root, the same records in each:
    ``RECORDS`` of them, fewer when that would pass ``FILE_BYTES``."""
    import tensorflow as tf

    records = [_example(spec["features"], rng)]
    count = max(1, min(RECORDS, FILE_BYTES // len(records[0])))
    records += [_example(spec["features"], rng) for _ in range(min(DISTINCT, count) - 1)]
    first, *others = spec["names"]
    with tf.io.TFRecordWriter(os.path.join(root, first), options=spec.get("compression") or None) as writer:
        for index in range(count):
            writer.write(records[index % len(records)])
    for name in others:  # the same records under every name
        os.symlink(first, os.path.join(root, name))
