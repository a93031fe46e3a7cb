"""Decides what an entry's run showed: it trains, or why not and whose fault that is.

Outcomes:
  pass      a Python process of the entry reached the training-step limit, or ended cleanly after training.
  ours      npu_bridge / the TF1 mode / the TF2 adapter failed it: an error raised in npu_bridge, npu_device or
            hccl; a TensorFlow, Keras or contrib name or module the mode does not provide; an error raised inside
            TensorFlow or Keras called from the script (TensorFlow 2.21 behaving other than 1.15 / 2.6 did).
  data      data or weights the harness cannot make: a file the loader or a restore asked for is missing, or
            no data kit recognizes the loader and the script failed reading its (empty) data folder.
  package   a Python package the script imports is not installed (not ours: install it next to npu_bridge).
  script    the script's own code fails (Python 2 syntax, its own bug) or its shell wrapper ends before Python.
  npu-only  the script uses an Ascend feature that needs NPU silicon (``NotSupportedOffNpuError``; the fidelity
            table in docs/fidelity.md lists them): accepted and reported, as on any machine without an NPU.
  timeout   no training step within the time limit.
  resources the entry's processes held more memory than the harness allows (set by __main__), or a process of it
            was killed by a signal (no exit, no exception recorded: the out-of-memory killer, typically).
An entry that fails with an error advising the simulated Ascend backend (a NaN of fp16 under IEEE rules, in a script
written for Ascend's saturation mode) is run once more on it by __main__, as the error tells its user to do
(``advised_backend``); the outcome is that run's, and the report says which backend it was.
"""

import os
import re

_OURS_PACKAGES = ("npu_bridge", "npu_device", "hccl")
_TF_PACKAGES = ("tensorflow", "tensorflow_core", "tf_keras", "keras", "tf_slim", "tensorflow_addons")
_DATA_WORDS = re.compile(
    r"(no such file|not found|could not find|cannot find|does not exist|unable to open|failed to find|"
    r"empty|no files|out of range|end of sequence|checkpoint|\.ckpt|\.h5\b|\.npy\b|\.pb\b|pretrain|weights|"
    r"url fetch failure|name resolution|urlopen|download|save_path)",
    re.IGNORECASE,
)
_DATA_TYPES = ("FileNotFoundError", "NotFoundError", "OutOfRangeError", "IsADirectoryError", "DataLossError")
_DOWNLOAD_TYPES = ("URLError", "HTTPError")  # a download of data or weights (the harness has no network)
_URL = re.compile(r"with url: |https?://")  # requests' ConnectionError of a download (tfds.load's, ...)
# What TensorFlow and Python say when a loader found no files (an empty list of file names, an empty dataset)
_EMPTY_DATA = (
    "`filenames` argument must contain `tf.string` elements",
    "that does not match expected type of string",
    "No files matched pattern",
    "Cannot choose from an empty sequence",
    "is not in [0, 0)",
    "could not find data in",  # tensorflow_datasets' prepared data (tfds.load(..., download=False))
    "buffer_size must be greater than zero",  # dataset.shuffle(len(files)) of no files
)
# What a script says when it derives a step count from the size of its data (ImageNet's 1.28 million images) and
# the synthetic data is far smaller: TensorFlow 1.15's Estimator.train refused the same count.
_DATA_SIZE = ("Must specify max_steps > 0",)
_MISSING_MODULE = re.compile(r"No module named '([^']+)'")
# TensorFlow's image decoders given a file that is no image
_NOT_AN_IMAGE = re.compile(r"Unknown image file format|Not a JPEG file|Invalid PNG data|Input is not a PNG")
# Kits whose arrays' shapes are guessed from the loader's code (tools/zoo_harness/array_files.py): a shape the model
# refuses is the guess's fault, not TensorFlow's
_GUESSING_KITS = ("named-arrays", "parsed-tfrecord")
# An id a guessed value gave that the model's tables do not hold (ids offset by a count in the model's config)
_INDEX_RANGE = re.compile(r"indices\[[\d,]+\] = -?\d+ is not in \[0, \d+\)")
_SHAPE_WORDS = re.compile(
    r"(Dimensions must be equal|Cannot feed value of shape|Incompatible shapes|cannot reshape array|"
    r"could not broadcast|shape mismatch|Input to reshape is a tensor with)",
    re.IGNORECASE,
)
# A Python error of the script's own input code, raised inside tf.data (a generator or py_function): TensorFlow
# passes it on as its own error with the Python traceback in the message
_PYTHON_ERROR_IN_PIPELINE = re.compile(r"\b(IndexError|KeyError|ValueError|TypeError|OSError|FileNotFoundError): ")


def _package_of(path):
    parts = path.replace("\\", "/").split("/")
    if "site-packages" in parts or "dist-packages" in parts:
        index = max(i for i, p in enumerate(parts) if p in ("site-packages", "dist-packages"))
        return parts[index + 1] if index + 1 < len(parts) else None
    for name in _OURS_PACKAGES:
        if f"/{name}/" in path:
            return name
    return None


def _innermost(frames, keep):
    for frame in reversed(frames):
        if keep(frame["file"]):
            return frame
    return None


_WEIGHTS = re.compile(r"checkpoint|\.ckpt|save_path|pretrain|weights|\.h5\b|\.pb\b", re.IGNORECASE)


def _kit_reason(kit, message=""):
    """Why data was missing, as the cause of a ``data`` outcome says it: weights (never made), else the kit."""
    if _WEIGHTS.search(message):
        return "weights: the harness never makes pretrained weights up"
    return "no data kit recognizes its loader" if kit is None else f"the {kit} kit's files did not fit"


def _where(frame):
    return f"{frame['file']}:{frame['line']} ({frame['function']})" if frame else "?"


_WRAPPER_PARAMETER = re.compile(r"""\[Error\] para \\?["']?([A-Za-z_]+)""")


def classify(records, model_dir, data_dir, kit, timed_out, output="", kit_dir=None, kits=None):
    """(outcome, cause) for one entry from its processes' records and the launcher's output; see the module
    docstring for outcomes. ``kit`` is the first kit, whose name the cause gives; ``kits`` every kit that wrote
    files (a guessing kit among them makes a refused shape the guess's fault); ``kit_dir`` is the folder the kits'
    files live in (the data path links into it)."""
    guessing = next((k for k in (kits or [kit]) if k in _GUESSING_KITS), None)
    if any(r["ended"] == "steps_reached" for r in records):
        return "pass", f"reached the training-step limit ({max(r['steps'] for r in records)} steps)"
    failures = [r for r in records if r["ended"] == "exception" and r.get("exception")]
    killed = [r for r in records if r["ended"] == "killed"]
    if killed and not failures and not timed_out:
        program = " ".join(str(a) for a in killed[0]["argv"][:3])
        return "resources", f"{program} was killed by a signal before it ended (the kernel's out-of-memory killer?)"
    if not failures:
        if any(r["steps"] > 0 and r["exit_code"] in (None, 0) for r in records):
            return "pass", "trained and ended by itself"
        if timed_out:
            steps = max((r["steps"] for r in records), default=0)
            return "timeout", f"no training-step limit reached within the time limit ({steps} steps)"
        wanted = _WRAPPER_PARAMETER.search(output)
        if wanted:  # the zoo's wrappers refuse to start without e.g. a pretrained model's path
            return "data", f"the shell wrapper wants --{wanted.group(1)}, which the harness cannot make"
        copied = re.search(r"cannot stat '(" + re.escape(data_dir) + r"[^']*)'", output)
        if copied:  # the wrapper copies pretrained weights from the data path before training
            return "data", f"the shell wrapper could not copy {copied.group(1)}, which the harness cannot make"
        exits = [r for r in records if r["exit_code"] not in (None, 0)]
        if exits:
            return "script", f"exited with {exits[0]['exit_code']!r} before training"
        if not records:
            return "script", "the shell wrapper started no Python process"
        if kit is None:
            return "data", "ended without training and without an error (no data kit recognizes its loader)"
        return "script", "ended without training and without an error"
    error = failures[-1]["exception"]
    kind, message, frames = error["type"].rsplit(".", 1)[-1], error["message"], error["frames"]
    user = _innermost(frames, lambda f: f.startswith(model_dir))
    raised = frames[-1] if frames else None
    raised_in = _package_of(raised["file"]) if raised else None
    head = f"{kind}: {message.splitlines()[0][:300] if message else ''}"
    missing = _MISSING_MODULE.search(message)
    if kind in ("ModuleNotFoundError", "ImportError") and missing:
        top = missing.group(1).split(".")[0]
        if top in _TF_PACKAGES + _OURS_PACKAGES:
            return "ours", f"{head} at {_where(user)}"
        return "package", f"{head} at {_where(user)}"
    cannot_import = re.search(r"cannot import name '[^']+' from '([A-Za-z_]+)", message)
    if kind == "ImportError" and cannot_import and cannot_import.group(1) in _TF_PACKAGES:
        return "ours", f"{head} at {_where(user)}"
    if kind == "NotSupportedOffNpuError":
        return "npu-only", f"{head} at {_where(user)}"
    size = next((sign for sign in _DATA_SIZE if sign in message), None)
    if size is not None:
        return "data", f"{head} at {_where(user)} (the synthetic data is smaller than the script assumes)"
    # TensorFlow's FailedPreconditionError reading a folder of the data as a file, or a file as a folder
    on_data = (
        data_dir in message or (kit_dir is not None and kit_dir in message) or _in_sibling(message, data_dir, model_dir)
    )
    if on_data and ("Is a directory" in message or "Not a directory" in message):
        why = f"a loader took a folder of the data path for a file or a file for a folder; {_kit_reason(kit, message)}"
        return "data", f"{head} at {_where(user)} ({why})"
    if kind == "FileNotFoundError" and raised_in in _OURS_PACKAGES:  # our readers (input_data) name a missing file
        return "data", f"{head} at {_where(user)} ({_kit_reason(kit, message)})"
    if kind == "NotProvidedError" or raised_in in _OURS_PACKAGES:
        return "ours", f"{head} raised at {_where(raised)}, from {_where(user)}"
    if kind in ("SyntaxError", "TabError") or (kind == "NameError" and "print" in message):
        return "script", f"{head} (Python 2 code)"
    if kit is None and kind in ("NameError", "UnboundLocalError") and not any(r["steps"] for r in records):
        # a loop variable used after a loop over the (empty) data folder that never ran: VDSR's `step`
        return "data", f"{head} at {_where(user)} (no data kit recognizes its loader; a loop over its data never ran)"
    # an .npz with other arrays than the kit's, or an HDF5 file (h5py) with other datasets
    if kind == "KeyError" and (
        "is not a file in the archive" in message or "Unable to synchronously open object" in message
    ):
        return "data", f"{head} at {_where(user)} ({_kit_reason(kit, message)})"
    if _NOT_AN_IMAGE.search(message):  # every image a kit writes decodes: the loader read another kind of file
        why = f"a loader decoded a file of the data that is no image; {_kit_reason(kit, message)}"
        return "data", f"{head} at {_where(user)} ({why})"
    empty = next((sign for sign in _EMPTY_DATA if sign in message), None)
    if empty is not None:
        return "data", f"{head} at {_where(user)} (no data found: {empty})"
    # "The name 'x:0' refers to a Tensor which does not exist ... in the graph" is about a graph, not files
    data_words = bool(_DATA_WORDS.search(message)) and "in the graph" not in message
    if kind in _DOWNLOAD_TYPES or (kind == "ConnectionError" and _URL.search(message)):
        return "data", f"{head} at {_where(user)} (a download: the harness has no network)"
    data_like = kind in _DATA_TYPES or data_words or (data_dir in message)
    if data_like and (
        kind in _DATA_TYPES or kind in ("OSError", "IOError", "ValueError", "IndexError", "RuntimeError", "Exception")
    ):  # RuntimeError: sentencepiece's "NOT_FOUND: ... No such file or directory"
        return "data", f"{head} at {_where(user)} ({_kit_reason(kit, message)})"
    if kind == "AssertionError" and data_words and data_dir in message:  # squeezeseg: "File does not exist: <data>/..."
        return "data", f"{head} at {_where(user)} ({_kit_reason(kit, message)})"
    if kind == "AttributeError" and "module 'numpy' has no attribute" in message:
        return "script", f"{head} at {_where(user)} (a NumPy 1.x name: the modes' --py-compat provides it)"
    if kind == "AttributeError" and re.search(r"module '(tensorflow|keras|tf_keras)", message):
        return "ours", f"{head} at {_where(user)}"
    library_class = _library_class_missing(error.get("attribute"), model_dir) if kind == "AttributeError" else None
    if library_class:
        return "ours", f"{head} at {_where(user)} (a name {library_class} lacks here: Keras or TensorFlow of its era?)"
    if guessing and _SHAPE_WORDS.search(message):
        return "data", f"{head} at {_where(user)} (the {guessing} kit's array shapes are guesses)"
    if guessing and _INDEX_RANGE.search(message):
        return (
            "data",
            f"{head} at {_where(user)} (the {guessing} kit's values are guesses: an id out of the model's range)",
        )
    if kit is not None and _pipeline_error_of_the_script(kind, message, model_dir):
        return "data", f"{head} at {_where(user)} (the script's input code failed on the {kit} kit's files)"
    if _library_refused_the_script_in_pipeline(kind, message, model_dir):
        return "script", f"{head} at {_where(user)} (a library refused the script's own Python code, run by tf.data)"
    if raised_in in _TF_PACKAGES:
        return "ours", f"{head} raised in {raised_in} at {_where(raised)}, from {_where(user)}"
    if kind == "error" and "empty()" in message:  # OpenCV given the None of an image cv2.imread did not find
        return "data", f"{head} at {_where(user)} ({_kit_reason(kit, message)}; an image was not read)"
    if kit is None and kind in ("IndexError", "ValueError", "ZeroDivisionError", "StopIteration", "KeyError"):
        return "data", f"{head} at {_where(user)} (no data kit recognizes its loader; the data folder was empty)"
    return "script", f"{head} at {_where(user or raised)}"


# What a session's NaN / inf error says when its fp16 follows IEEE rules on the cpu backend, where a script written for
# Ascend's saturation mode gets a NaN (npu_bridge/core/session/steps/precision.py): run on the simulated backend.
_BACKEND_ADVICE = re.compile(r"\(NPU_BRIDGE_DEVICE_TARGET=(ascend)\)")


def advised_backend(records):
    """The backend a failed process's error told its user to run on (``"ascend"``), or None."""
    for record in records:
        error = record.get("exception") if record["ended"] == "exception" else None
        advice = _BACKEND_ADVICE.search(error["message"]) if error else None
        if advice:
            return advice.group(1)
    return None


def _in_sibling(message, data_dir, model_dir):
    """True when ``message`` names a file in a folder next to the data path (``${data_path}/../wikipedia_128``),
    which the harness fills too (``data_paths.link``); the model's own folder is not one."""
    entry = os.path.dirname(os.path.normpath(data_dir))
    own = {os.path.basename(os.path.normpath(folder)) for folder in (data_dir, model_dir)}
    return any(found.group(1) not in own for found in re.finditer(re.escape(entry) + r"/([^/\s;]+)/", message))


def _library_class_missing(attribute, model_dir):
    """The TensorFlow or Keras class whose object lacked a name the script asked for, when that name is public on
    a library object or private (``_convolution_op`` on a subclass of a Keras layer) and the model's own code never
    defines it (so it is not the script's own typo); else None."""
    if not attribute:
        return None
    name, classes = attribute["name"], attribute["classes"]
    library = [c for c in classes if c.split(".")[0] in _TF_PACKAGES]
    if not library or classes[0].startswith("builtins."):
        return None
    if not (name.startswith("_") or classes[0] in library) or _defines(model_dir, name):
        return None
    return library[0]


def _defines(model_dir, name):
    """Whether a Python file of the model assigns or defines ``name`` (``def name``, ``.name =``, ``name =``)."""
    pattern = re.compile(rf"(\bdef\s+{re.escape(name)}\s*\(|(\.|^\s*){re.escape(name)}\s*(=[^=]|:))", re.MULTILINE)
    for root, _, files in os.walk(model_dir):
        for file in files:
            if file.endswith(".py"):
                try:
                    with open(os.path.join(root, file), encoding="utf-8", errors="replace") as f:
                        if pattern.search(f.read()):
                            return True
                except OSError:
                    continue
    return False


def _pipeline_error_of_the_script(kind, message, model_dir):
    """Whether TensorFlow's error carries a Python error that the script's own input code raised inside tf.data."""
    if kind not in ("UnknownError", "InvalidArgumentError") or "IteratorGetNext" not in message:
        return False
    innermost = re.findall(r'File "([^"]+)", line \d+', message)
    return bool(_PYTHON_ERROR_IN_PIPELINE.search(message)) and bool(innermost) and innermost[-1].startswith(model_dir)


def _library_refused_the_script_in_pipeline(kind, message, model_dir):
    """Whether TensorFlow's error carries a Python TypeError that a library (NumPy, ...) raised when the model's own
    code, run in a ``py_func`` / generator, called it (NumPy 2 refusing a generator in ``np.stack``, say)."""
    if kind not in ("UnknownError", "InvalidArgumentError") or "TypeError: " not in message:
        return False
    files = re.findall(r'File "([^"]+)", line \d+', message)
    return bool(files) and not files[-1].startswith(model_dir) and any(f.startswith(model_dir) for f in files)


def summarize(results):
    """Counts per outcome and the pass rate over runnable entries (those not stopped by data, packages or the
    script's own code), per kind; ``passed_as_advised`` counts the passes on the backend an error advised."""
    summary = {}
    for kind in sorted({r["kind"] for r in results}):
        mine = [r for r in results if r["kind"] == kind]
        counts = {}
        for r in mine:
            counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
        runnable = sum(counts.get(o, 0) for o in ("pass", "ours", "timeout"))
        summary[kind] = {
            "entries": len(mine),
            "outcomes": counts,
            "runnable": runnable,
            "passed": counts.get("pass", 0),
            "passed_as_advised": sum(1 for r in mine if r["outcome"] == "pass" and r.get("backend")),
        }
    return summary
