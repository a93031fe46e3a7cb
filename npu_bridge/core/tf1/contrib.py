"""``tensorflow.contrib`` for user code in the TF1 mode: lazy modules over TensorFlow 2.21, tf_slim and npu_bridge.

Each contrib submodule is a ``ContribModule`` with an ordered list of places to look a name up (``ROUTES``), a
table of renames, and extra names that live elsewhere. Nothing is imported until a name is used, so a script that
imports ``tensorflow.contrib.tpu`` in a branch it never takes runs. A name no route provides raises
``NotProvidedError`` (an ``AttributeError``) when it is looked up, naming it; an import statement that names it
(``from tensorflow.contrib.graph_editor import reroute_ts``, ``import tensorflow.contrib.ffmpeg.python.ffmpeg_ops``)
binds a ``NotProvided`` placeholder instead (``imported``), which raises when it is used. Upstream's deep paths
(``contrib.layers.python.layers.utils``, ``contrib.framework.python.ops.arg_scope``) lose their ``python.<x>``
segments. Aliases whose behaviour differs from TensorFlow 1.15 say so once, when first used (``DIFFERENCES``).

A place is ``"tf:<attribute path>"`` (below the real ``tensorflow`` module) or an importable module path.
"""

import importlib
import types

from npu_bridge.core.runtime import log
from npu_bridge.core.runtime.errors import NotProvidedError


class Route:
    """Where the names of one contrib submodule come from.

    Args:
      places: where to look names up, in order.
      renames: {contrib name: name in the places}.
      extras: {contrib name: a place of its own} (``"tf:compat.v1.variable_scope"``, ``"a.module"``).
    """

    def __init__(self, places=(), renames=None, extras=None):
        self.places = tuple(places)
        self.renames = dict(renames or {})
        self.extras = dict(extras or {})


ROUTES = {
    # TF 1.15's slim.variable_scope was the module (slim.variable_scope.variable_scope("scope"))
    "slim": Route(["tf_slim"], extras={"variable_scope": "tensorflow.python.ops.variable_scope"}),
    "layers": Route(["tf_slim.layers", "tf_slim", "tf:compat.v1.layers"]),
    "framework": Route(
        ["tf_slim", "tf_slim.ops.variables", "tf_slim.ops.arg_scope", "tf:compat.v1.train", "tf:compat.v1"],
        # python.ops.variables is tf_slim's module (model_variable, ...), not TensorFlow's, which tf_slim imports
        extras={
            "nest": "tensorflow.python.util.nest",
            "variables": "tf_slim.ops.variables",
            "audio_ops": "tensorflow.python.ops.gen_audio_ops",
            "get_name_scope": "tensorflow.python.framework.ops.get_name_scope",
        },
    ),
    "rnn": Route(
        ["tf:compat.v1.nn.rnn_cell", "tf:compat.v1.nn", "npu_bridge.core.tf1.rnn_cells"],
        renames={"LSTMBlockCell": "LSTMCell", "GRUBlockCell": "GRUCell", "GRUBlockCellV2": "GRUCell"},
        # upstream's python.ops.{rnn_cell,core_rnn_cell,rnn} hold contrib's own cells; ops.gen_lstm_ops is in rnn_cells
        extras={
            **dict.fromkeys(("rnn_cell", "core_rnn_cell", "rnn"), "npu_bridge.core.tf1.rnn_cells"),
            "gen_lstm_ops": "tensorflow.python.ops.gen_rnn_ops",
        },
    ),
    # python.ops.image_ops is the module itself; ops.gen_image_ops is an attribute of it
    "image": Route(
        ["npu_bridge.core.tf1.image_transforms", "npu_bridge.core.tf1.distort_image_ops"],
        extras={
            "image_ops": "npu_bridge.core.tf1.image_transforms",
            "distort_image_ops": "npu_bridge.core.tf1.distort_image_ops",
        },
    ),
    "nn": Route(["npu_bridge.core.tf1.contrib_nn"]),
    # python.graph_matcher comes right after a skipped python segment: it is the quantize module, so it has its names
    "quantize": Route(["npu_bridge.core.tf1.quantize", "npu_bridge.core.tf1.quantize.graph_matcher"]),
    "data": Route(["tf:compat.v1.data.experimental", "tf:compat.v1.data"]),
    "training": Route(
        ["tf:compat.v1.train", "tf_slim.training.evaluation"],
        # python.training.hparam is the module itself (HParams, parse_values)
        extras={
            "HParams": "npu_bridge.core.tf1.hparams.HParams",
            "parse_values": "npu_bridge.core.tf1.hparams.parse_values",
            "hparam": "npu_bridge.core.tf1.hparams",
        },
    ),
    "metrics": Route(["tf_slim.metrics", "tf:compat.v1.metrics"]),
    "losses": Route(["tf_slim.losses", "tf:compat.v1.losses"]),
    # tf.contrib.summary of TensorFlow 1.15 lives on as summary_ops_v2 (scalar(name, tensor, family, step), ...)
    "summary": Route(
        ["tensorflow.python.ops.summary_ops_v2", "tf:summary", "tf:compat.v1.summary"],
        renames={"flush": "legacy_raw_flush"},  # TF 1.15's flush took the writer's resource tensor too
        extras={"all_summary_ops": "tf:compat.v1.summary.all_v2_summary_ops"},
    ),
    "lookup": Route(["tf:compat.v1.lookup"], renames={"HashTable": "StaticHashTable"}),
    "distribute": Route(["tf:distribute"]),
    "cluster_resolver": Route(["tf:distribute.cluster_resolver"]),
    "keras": Route(["tf:compat.v1.keras"]),
    "saved_model": Route(["tf:compat.v1.saved_model"]),
    "staging": Route(extras={"StagingArea": "tensorflow.python.ops.data_flow_ops.StagingArea"}),
    "opt": Route(["npu_bridge.core.tf1.optimizers"]),
    "crf": Route(["npu_bridge.core.tf1.crf"]),
    # upstream's python.ops.<module> paths lead to the module of ours that holds the same names
    "seq2seq": Route(
        ["npu_bridge.core.tf1.seq2seq"],
        extras={
            upstream: f"npu_bridge.core.tf1.seq2seq.{ours}"
            for upstream, ours in (
                ("attention_wrapper", "attention_wrapper"),
                ("basic_decoder", "basic_decoder"),
                ("beam_search_decoder", "beam_search"),
                ("beam_search_ops", "beam_search_ops"),
                ("decoder", "decoder"),
                ("helper", "helpers"),
                ("loss", "loss"),
            )
        },
    ),
    "legacy_seq2seq": Route(
        ["npu_bridge.core.tf1.legacy_seq2seq"], extras={"seq2seq": "npu_bridge.core.tf1.legacy_seq2seq"}
    ),
    "learn": Route(["npu_bridge.core.tf1.learn"]),
    "util": Route(["tf:compat.v1"]),
    "tpu": Route(
        ["npu_bridge.core.tf1.tpu", "npu_bridge.core.tf_estimator.tpu", "tf:compat.v1.tpu"],
        extras={
            **dict.fromkeys(("tpu_config", "tpu_estimator", "tpu"), "npu_bridge.core.tf_estimator.tpu"),
            **dict.fromkeys(("tpu_optimizer", "tpu_ops", "async_checkpoint"), "npu_bridge.core.tf1.tpu"),
            "tpu_function": "tensorflow.python.tpu.tpu_function",
            "datasets": "tensorflow.python.tpu.datasets",
        },
    ),
}

# contrib submodules of TensorFlow 1.15 the mode has no route for: importing them works, using a name raises.
UNROUTED = (
    "bayesflow checkpoint cloud coder compiler constrained_optimization copy_graph cudnn_rnn deprecated "
    "distributions eager estimator factorization feature_column ffmpeg gan graph_editor grid_rnn "
    "input_pipeline integrate kernel_methods labeled_tensor linear_optimizer memory_stats "
    "mixed_precision model_pruning nccl optimizer_v2 periodic_resample predictor proto quantization "
    "rate receptive_field recurrent reduce_slice_ops remote_fused_graph resampler rpc signal solvers "
    "sparsemax specs stat_summarizer stateless tensor_forest tensorboard testing text tfprof timeseries"
).split()

DIFFERENCES = {
    "rnn.LSTMBlockCell": "is tf.nn.rnn_cell.LSTMCell here: the same computation, other variable names (checkpoints "
    "written by TF 1.15's LSTMBlockCell do not load)",
    "rnn.GRUBlockCell": "is tf.nn.rnn_cell.GRUCell here: the same computation, other variable names",
    "rnn.GRUBlockCellV2": "is tf.nn.rnn_cell.GRUCell here: the same computation, other variable names",
}

_MISSING = object()
_told = set()


class ContribModule(types.ModuleType):
    """One ``tensorflow.contrib.<path>`` module.

    Args:
      path: e.g. "layers" ("" for ``tensorflow.contrib`` itself).
      route: its ``Route`` (None: nothing is provided).
      real: the real ``tensorflow`` module.
    """

    def __init__(self, path, route, real):
        super().__init__(f"tensorflow.contrib{'.' + path if path else ''}")
        self.__dict__["_npu"] = (path, route, real)

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        path, route, real = self.__dict__["_npu"]
        if name == "python" and path:
            value = _SkippedSegment(self)
        elif not path and name in ROUTES:
            value = ContribModule(name, ROUTES[name], real)
        elif not path and name in UNROUTED:
            value = ContribModule(name, None, real)
        else:
            value = _lookup(route, name, real) if route else _MISSING
            if value is _MISSING:
                raise not_provided(f"tf.{self.__name__[len('tensorflow.') :]}.{name}")
            difference = DIFFERENCES.get(f"{path}.{name}")
            if difference and f"{path}.{name}" not in _told:
                _told.add(f"{path}.{name}")
                log.logger.warning("tf.contrib.%s.%s %s", path, name, difference)
        self.__dict__[name] = value
        return value


def not_provided(path, use=""):
    """The ``NotProvidedError`` for a contrib name the mode does not provide.

    Args:
      path: the name as a script writes it below ``tf`` ("tf.contrib.graph_editor.reroute_ts").
      use: how it was used, for a placeholder ("called").
    """
    return NotProvidedError(
        f"{path} is not provided by npu_bridge's TF1 mode{f' ({use})' if use else ''} (TensorFlow 2.21 has no such "
        "name and the mode does not emulate it); see docs/tf1_mode.md for what is provided and what to use instead"
    )


class NotProvided:
    """What an import statement binds for a contrib name or path the mode does not provide: importing it works,
    using it (calling it, using an attribute of it, subclassing it, ``isinstance`` with it) raises
    ``NotProvidedError`` naming it. Dead branches and unused imports stay harmless, as on TensorFlow 1.15.

    Args:
      path: its name below ``tf`` ("tf.contrib.graph_editor.reroute_ts").
    """

    def __init__(self, path):
        self.__dict__["_npu_path"] = path

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        raise not_provided(f"{self.__dict__['_npu_path']}.{name}")

    def __call__(self, *args, **kwargs):
        raise not_provided(self.__dict__["_npu_path"], "called")

    def __mro_entries__(self, bases):
        raise not_provided(self.__dict__["_npu_path"], "subclassed")

    def __instancecheck__(self, instance):
        raise not_provided(self.__dict__["_npu_path"], "used in isinstance")

    def __repr__(self):
        return f"<{self.__dict__['_npu_path']}: not provided by npu_bridge's TF1 mode>"


def imported(root, parts, fromlist):
    """What an import statement of user code gets for ``tensorflow.contrib.<parts>``.

    Every module of the path and every name of ``fromlist`` that the shim does not provide is a ``NotProvided``. A
    module of the path is also bound on the shim module above it, as importing a submodule binds it on its package
    (``import tensorflow.contrib.ffmpeg.python.ffmpeg_ops as f`` reaches it through those attributes).

    Args:
      root: ``tensorflow.contrib`` (a ``ContribModule``).
      parts: the path below it (``["ffmpeg", "python", "ffmpeg_ops"]``).
      fromlist: the names of ``from ... import`` (empty for ``import ...``).
    Returns:
      The module at the path; with a ``fromlist``, an object holding exactly its names (the module itself for
      ``import *``).
    """
    module, path = root, "tf.contrib"
    for part in parts:
        path = f"{path}.{part}"
        try:
            module = getattr(module, part)
        except AttributeError:
            placeholder = NotProvided(path)
            if isinstance(module, (ContribModule, NotProvided)):  # the shim's own objects, never a library's
                module.__dict__[part] = placeholder
            module = placeholder
    if not fromlist or "*" in fromlist:
        return module
    names = {}
    for name in fromlist:
        try:
            names[name] = getattr(module, name)
        except AttributeError:
            names[name] = NotProvided(f"{path}.{name}")
    return types.SimpleNamespace(**names)


class _SkippedSegment:
    """``contrib.layers.python``: any attribute of it is its contrib module again (``python.layers.utils`` ->
    ``contrib.layers.utils``), as the deep paths of TensorFlow 1.x's sources mean the same names."""

    def __init__(self, module):
        self._module = module

    def __getattr__(self, name):
        return self._module


def _lookup(route, name, real):
    if name in route.extras:
        return _resolve_place(route.extras[name], real)
    wanted = route.renames.get(name, name)
    for place in route.places:
        module = _resolve_place(place, real)
        if module is _MISSING:
            continue
        value = getattr(module, wanted, _MISSING)
        if value is _MISSING and not place.startswith("tf:"):
            value = _import(f"{place}.{wanted}")
        if value is not _MISSING:
            return value
    return _MISSING


def _resolve_place(place, real):
    if place.startswith("tf:"):
        value = real
        for part in place[3:].split("."):
            value = getattr(value, part, _MISSING)
            if value is _MISSING:
                return _MISSING
        return value
    module = _import(place)
    if module is _MISSING and "." in place:
        parent, _, attribute = place.rpartition(".")
        module = _import(parent)
        return _MISSING if module is _MISSING else getattr(module, attribute, _MISSING)
    return module


def _import(name):
    try:
        return importlib.import_module(name)
    except ImportError:
        return _MISSING
