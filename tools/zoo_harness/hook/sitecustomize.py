"""Loaded into every Python process a zoo entry starts (the harness puts this folder on PYTHONPATH).

It counts training steps and records how the process ended, in ``$ZOO_HARNESS_RESULTS/<pid>.json``:
``{"argv", "steps", "ended": "steps_reached" | "exception" | "exit", "exit_code", "exception": {type, message,
frames}}``. After ``$ZOO_HARNESS_STEPS`` training steps it writes the record and ends the process with exit code 0,
so a script written to train for hours stops once it has shown that it trains.

A training step is a TF1 session run (or a run of a callable made from options, as Keras' graph-mode ``fit``
makes) whose fetches depend on an op that applies gradients (``Apply*``, ``ResourceApply*``, ...) or on variable
assignments next to ``tf.gradients``' ops (an update written by hand) -- a run of npu_bridge's IterationOp is
``iterations_per_loop`` steps --, or a call of a
``tf.function`` that applied gradients when it was traced, or an ``apply_gradients`` call outside any
``tf.function`` (eager TF2 and Keras ``run_eagerly``). Keras dataset downloads get synthetic files of the same
layout (there is no network).
"""

import atexit
import importlib.abc
import json
import os
import re
import sys
import threading
import traceback
import weakref

_RESULTS = os.environ.get("ZOO_HARNESS_RESULTS")
_LIMIT = int(os.environ.get("ZOO_HARNESS_STEPS") or 3)
_APPLY = re.compile(r"^(Resource)?(Sparse)?Apply[A-Z]")
# A hand-written update (PixelCNN++'s Adam): variables assigned from values tf.gradients computed
_ASSIGN = ("Assign", "AssignAdd", "AssignSub", "AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp")
_state = {"steps": 0, "ended": None, "exit_code": None, "exception": None, "written": False}
_lock = threading.Lock()


def _write():
    if not _RESULTS or _state["written"]:
        return
    _state["written"] = True
    record = {"argv": sys.argv, "pid": os.getpid(), **{k: v for k, v in _state.items() if k != "written"}}
    path = os.path.join(_RESULTS, f"{os.getpid()}.json")
    with open(path + ".tmp", "w") as f:
        json.dump(record, f)
    os.replace(path + ".tmp", path)


def _write_started():
    """A mark that this process started: a mark without a record later means it was killed (SIGKILL, OOM)."""
    if _RESULTS and os.path.isdir(_RESULTS):
        with open(os.path.join(_RESULTS, f"{os.getpid()}.started"), "w") as f:
            json.dump({"argv": sys.argv, "pid": os.getpid()}, f)


def _count_step(steps=1):
    with _lock:
        _state["steps"] += steps
        reached = _state["steps"] >= _LIMIT
    if reached:
        _state["ended"] = "steps_reached"
        _write()
        sys.stdout.flush()
        sys.stderr.write(f"[zoo harness] {_LIMIT} training steps reached: ending the process\n")
        sys.stderr.flush()
        os._exit(0)


def _describe(error_type, error, tb):
    frames = [{"file": f.filename, "line": f.lineno, "function": f.name} for f in traceback.extract_tb(tb)]
    described = {
        "type": f"{error_type.__module__}.{error_type.__qualname__}",
        "message": str(error)[:2000],
        "frames": frames,
    }
    owner = getattr(error, "obj", None) if isinstance(error, AttributeError) else None
    if owner is not None and getattr(error, "name", None):
        # which packages the object's classes come from: a name missing on a Keras layer the script subclassed
        # may be a name Keras of the script's era had (the harness classifies it)
        cls = owner if isinstance(owner, type) else type(owner)
        described["attribute"] = {
            "name": error.name,
            "classes": [f"{c.__module__}.{c.__qualname__}" for c in getattr(cls, "__mro__", (cls,))][:40],
        }
    return described


_original_excepthook = sys.excepthook


def _excepthook(error_type, error, tb):
    _state["ended"] = "exception"
    _state["exception"] = _describe(error_type, error, tb)
    _write()
    _original_excepthook(error_type, error, tb)


sys.excepthook = _excepthook
_original_exit = sys.exit


def _exit(code=None):
    _state["exit_code"] = code if isinstance(code, (int, type(None))) else str(code)[:500]
    return _original_exit(code)


sys.exit = _exit


@atexit.register
def _at_exit():
    if _state["ended"] is None:
        _state["ended"] = "exit"
    _write()


# -- TF1: Session.run that trains -----------------------------------------------------------------------------

# Looked up once per graph (session) and set of names, not on every run; keyed by the object itself, so that a
# graph or session made after another was freed never gets that one's answer
_trains_cache = weakref.WeakKeyDictionary()  # graph -> {names: whether they train}
_steps_cache = weakref.WeakKeyDictionary()  # session -> {names: training steps per run}


def _run_steps(session, fetch_list, target_list):
    """Training steps a run of these fetches and targets (TensorFlow's C handles) performs (0: it does not train)."""
    from tensorflow.python.client import pywrap_tf_session as c_api

    names = [c_api.TF_OperationName(output.oper) for output in fetch_list]
    names += [c_api.TF_OperationName(op) for op in target_list]
    known = _steps_cache.setdefault(session, {})
    key = tuple(sorted(names))
    if key not in known:
        known[key] = _steps_per_run(session, names) if _names_train(session, names) else 0
    return known[key]


def _steps_per_run(session, names):
    """npu_bridge's iterations_per_loop for a run of its IterationOp (one run, N training steps), else 1."""
    for name in names:
        try:
            if not session.graph.get_operation_by_name(name).get_attr("_npu_iteration_op"):
                continue
            return max(1, int(session._npu_bridge_options.get("iterations_per_loop")))
        except Exception:  # not an IterationOp, or not an npu_bridge session: one step
            continue
    return 1


def _names_train(session, names):
    """Whether the ops of these names depend on an op that applies gradients."""
    known = _trains_cache.setdefault(session.graph, {})
    key = tuple(sorted(names))
    if key not in known:
        seen, stack, trains = set(), [session.graph.get_operation_by_name(n) for n in names], False
        assigns = gradients = False
        while stack and not trains:
            op = stack.pop()
            if op.name in seen:
                continue
            seen.add(op.name)
            assigns = assigns or op.type in _ASSIGN
            gradients = gradients or op.name.split("/", 1)[0].startswith("gradients")
            trains = bool(_APPLY.match(op.type)) or (assigns and gradients)
            stack.extend(tensor.op for tensor in op.inputs)
            stack.extend(op.control_inputs)
        known[key] = trains
    return known[key]


def _patch_session(module):
    # Every run passes through here, also those npu_bridge's repeated-run path makes without Session.run.
    original = module.BaseSession._call_tf_sessionrun

    def call_tf_sessionrun(self, options, feed_dict, fetch_list, target_list, run_metadata):
        result = original(self, options, feed_dict, fetch_list, target_list, run_metadata)
        try:
            steps = _run_steps(self, fetch_list, target_list)
        except Exception:  # counting must never change what the script sees
            steps = 0
        if steps:
            _count_step(steps)
        return result

    module.BaseSession._call_tf_sessionrun = call_tf_sessionrun
    # Keras' graph-mode training loop (TF1 fit / fit_generator) runs callables made from options instead
    make_callable = module.BaseSession._make_callable_from_options

    def make_callable_from_options(self, callable_options):
        run = make_callable(self, callable_options)
        try:
            names = [name.split(":")[0] for name in callable_options.fetch] + list(callable_options.target)
            trains = _names_train(self, names)
        except Exception:  # counting must never change what the script sees
            trains = False
        if not trains:
            return run

        def counted(*args, **kwargs):
            result = run(*args, **kwargs)
            _count_step()
            return result

        return counted

    module.BaseSession._make_callable_from_options = make_callable_from_options


# -- TF2: tf.function calls that apply gradients, eager apply_gradients ----------------------------------------

_tracing = threading.local()
_training_functions = set()


def _patch_function(module):
    original = module.Function.__call__

    def call(self, *args, **kwargs):
        stack = getattr(_tracing, "stack", None)
        if stack is None:
            stack = _tracing.stack = []
        stack.append(id(self))
        try:
            result = original(self, *args, **kwargs)
        finally:
            stack.pop()
        if id(self) in _training_functions and not stack:
            _count_step()
        return result

    module.Function.__call__ = call


def _patch_optimizer(cls_holder, name):
    cls = getattr(cls_holder, name, None)
    if cls is None or getattr(cls.apply_gradients, "_zoo_harness", False):
        return
    original = cls.apply_gradients

    def apply_gradients(self, *args, **kwargs):
        stack = getattr(_tracing, "stack", None)
        result = original(self, *args, **kwargs)
        if stack:
            _training_functions.update(stack)
        else:
            import tensorflow as tf

            if tf.executing_eagerly():
                _count_step()
        return result

    apply_gradients._zoo_harness = True
    cls.apply_gradients = apply_gradients


# -- Keras' dataset downloads: synthetic files of the same layout (the harness has no network) ------------------


def _synthetic_download(fname, cache_dir):
    """A synthetic stand-in for a Keras dataset download, or None when the harness has none for fname."""
    import numpy as np

    rng = np.random.default_rng(0)
    folder = os.path.join(cache_dir, "synthetic")
    os.makedirs(folder, exist_ok=True)
    if fname.endswith("mnist.npz"):
        path = os.path.join(folder, "mnist.npz")
        images = {"x_train": (6000, 28, 28), "x_test": (1000, 28, 28)}
        arrays = {k: rng.integers(0, 256, size=v, dtype=np.uint8) for k, v in images.items()}
        np.savez(path, y_train=rng.integers(0, 10, 6000, dtype=np.uint8), y_test=rng.integers(0, 10, 1000), **arrays)
        return path
    if fname.endswith((".gz", "-ubyte")) and ("images" in fname or "labels" in fname):
        import gzip
        import struct

        count = 6000 if fname.startswith("train") else 1000
        if "images" in fname:
            content = struct.pack(">IIII", 2051, count, 28, 28) + rng.integers(0, 256, count * 784, np.uint8).tobytes()
        else:
            content = struct.pack(">II", 2049, count) + rng.integers(0, 10, count, np.uint8).tobytes()
        path = os.path.join(folder, fname)
        with gzip.open(path, "wb") as f:
            f.write(content)
        return path
    if fname in ("imdb.npz", "reuters.npz"):
        path = os.path.join(folder, fname)

        def reviews(count):  # lists of word indices from 1 (the start mark) up, of uneven lengths
            rows = np.empty(count, dtype=object)
            rows[:] = [[1] + rng.integers(4, 5000, int(rng.integers(20, 200))).tolist() for _ in range(count)]
            return rows

        classes = 2 if fname == "imdb.npz" else 46
        if fname == "imdb.npz":
            arrays = {"x_train": reviews(2000), "x_test": reviews(500)}
            arrays.update(y_train=rng.integers(0, classes, 2000), y_test=rng.integers(0, classes, 500))
        else:
            arrays = {"x": reviews(2500), "y": rng.integers(0, classes, 2500)}
        np.savez(path, **arrays)
        return path
    if fname in ("imdb_word_index.json", "reuters_word_index.json"):
        import json

        path = os.path.join(folder, fname)
        with open(path, "w") as f:
            json.dump({f"word{i}": i for i in range(1, 5000)}, f)
        return path
    if fname == "boston_housing.npz":
        path = os.path.join(folder, fname)
        np.savez(path, x=rng.random((506, 13)) * 10, y=rng.random(506) * 50)
        return path
    if fname.startswith(("cifar-10-batches-py", "cifar-100-python")):
        import pickle

        path = os.path.join(folder, fname.split(".")[0])
        os.makedirs(path, exist_ok=True)
        label_key = b"labels" if fname.startswith("cifar-10") else b"fine_labels"
        for name in (
            "data_batch_1",
            "data_batch_2",
            "data_batch_3",
            "data_batch_4",
            "data_batch_5",
            "test_batch",
            "train",
            "test",
        ):
            if os.path.exists(os.path.join(path, name)):
                continue
            count = 50000 if name == "train" else 10000  # the sizes Keras' loaders allocate for
            batch = {
                b"data": rng.integers(0, 256, (count, 3072), np.uint8),
                label_key: rng.integers(0, 10, count).tolist(),
                b"coarse_labels": rng.integers(0, 10, count).tolist(),
            }
            with open(os.path.join(path, name) + ".tmp", "wb") as f:
                pickle.dump(batch, f)
            os.replace(os.path.join(path, name) + ".tmp", os.path.join(path, name))
        return path
    return None


def _patch_get_file(module):
    original = module.get_file

    def get_file(fname=None, origin=None, *args, **kwargs):
        name = os.path.basename(fname or origin or "")  # a loader may pass a path of its own as fname
        cache = os.environ.get("ZOO_HARNESS_CACHE") or os.path.join(_RESULTS, "keras_datasets")
        path = _synthetic_download(name, cache)
        return path if path is not None else original(fname, origin, *args, **kwargs)

    module.get_file = get_file


_PATCHES = {
    # tracebacks keep TensorFlow's own frames, so the harness sees where an error was raised
    "tensorflow.python.util.traceback_utils": lambda m: m.disable_traceback_filtering(),
    "tf_keras.src.utils.data_utils": _patch_get_file,
    "tensorflow.python.client.session": _patch_session,
    "tensorflow.python.eager.polymorphic_function.polymorphic_function": _patch_function,
    "tf_keras.src.optimizers.legacy.optimizer_v2": lambda m: _patch_optimizer(m, "OptimizerV2"),
    "tf_keras.src.optimizers.optimizer": lambda m: _patch_optimizer(m, "Optimizer"),
    "keras.src.optimizers.base_optimizer": lambda m: _patch_optimizer(m, "BaseOptimizer"),
}


class _AfterImport(importlib.abc.MetaPathFinder):
    """Patches the modules in _PATCHES right after they are first executed."""

    def find_spec(self, name, path=None, target=None):
        if name not in _PATCHES:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None and spec.loader is not None:
                _wrap_loader(spec, _PATCHES[name])
                return spec
        return None


def _wrap_loader(spec, patch):
    loader = spec.loader
    original = loader.exec_module

    class _Loader(importlib.abc.Loader):
        def create_module(self, spec):
            return loader.create_module(spec)

        def exec_module(self, module):
            original(module)
            try:
                patch(module)
            except Exception as error:  # a TensorFlow without the hook point: say so, count nothing there
                sys.stderr.write(f"[zoo harness] cannot count steps in {spec.name}: {error}\n")

    spec.loader = _Loader()


if _RESULTS:
    _write_started()
    for _name, _patch in _PATCHES.items():
        if _name in sys.modules:
            _patch(sys.modules[_name])
    sys.meta_path.insert(0, _AfterImport())
