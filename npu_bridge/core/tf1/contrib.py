"""``tensorflow.contrib`` for user code in the TF1 mode: lazy modules over TensorFlow 2.21, tf_slim and npu_bridge.

Each contrib submodule is a ``ContribModule`` with an ordered list of places to look a name up (``ROUTES``), a
table of renames, and extra names that live elsewhere. Nothing is imported until a name is used, so a script that
imports ``tensorflow.contrib.tpu`` in a branch it never takes runs. A name no route provides raises
``NotProvidedError`` (an ``AttributeError``) when it is looked up, naming it; an import statement that names it
(``from tensorflow.contrib.grid_rnn import Grid2LSTMCell``, ``import tensorflow.contrib.ffmpeg.python.ffmpeg_ops``)
binds a ``NotProvided`` placeholder instead (``imported``), which raises when it is used. Upstream's deep paths
(``contrib.layers.python.layers.utils``, ``contrib.framework.python.ops.arg_scope``) lose their ``python.<x>``
segments, except those to one of upstream's source modules the route lists (``Route.modules``):
``contrib.opt.python.training.lazy_adam_optimizer`` is that module, ``contrib.nn.python.ops.alpha_dropout`` the
module holding ``alpha_dropout``. Aliases whose behaviour differs from TensorFlow 1.15 say so once, when first used
(``DIFFERENCES``).

A place is ``"tf:<attribute path>"`` (below the real ``tensorflow`` module), ``"contrib:<route>"`` (that contrib
module), or an importable module path.
"""

import builtins
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
      modules: {upstream source module below ``python`` (``"training.lazy_adam_optimizer"``): the place holding its
        names}; that path is a contrib module of its own, which names what it lacks.
      star_extras: names of the broad places (``tf.compat.v1.nn``) that ``import *`` binds too (``star_names``).
    """

    def __init__(self, places=(), renames=None, extras=None, modules=None, star_extras=()):
        self.places = tuple(places)
        self.renames = dict(renames or {})
        self.extras = dict(extras or {})
        self.modules = dict(modules or {})
        self.star_extras = tuple(star_extras)


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
            "tensor_util": "npu_bridge.core.tf1.contrib_tensor_util",
        },
        modules={
            "framework.checkpoint_utils": "tensorflow.python.training.checkpoint_utils",
            "ops.sort_ops": "tensorflow.python.ops.sort_ops",
        },
    ),
    "rnn": Route(
        ["tf:compat.v1.nn.rnn_cell", "tf:compat.v1.nn", "npu_bridge.core.tf1.rnn_cells"],
        renames={"LSTMBlockCell": "LSTMCell", "GRUBlockCell": "GRUCell", "GRUBlockCellV2": "GRUCell"},
        star_extras=("static_rnn", "static_bidirectional_rnn", "static_state_saving_rnn"),
        # upstream's python.ops.{rnn_cell,core_rnn_cell,rnn} hold contrib's own cells; ops.gen_lstm_ops is in rnn_cells
        extras={
            **dict.fromkeys(("rnn_cell", "core_rnn_cell", "rnn"), "npu_bridge.core.tf1.rnn_cells"),
            "gen_lstm_ops": "tensorflow.python.ops.gen_rnn_ops",
            # python.ops.gru_ops / lstm_ops held the block cells: contrib.rnn itself, whose renames give them
            **dict.fromkeys(("gru_ops", "lstm_ops"), "contrib:rnn"),
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
    "nn": Route(
        ["npu_bridge.core.tf1.contrib_nn"],
        modules={
            f"ops.{name}": "npu_bridge.core.tf1.contrib_nn"
            for name in ("alpha_dropout", "cross_entropy", "sampling_ops", "scaled_softplus")
        },
    ),
    # python.graph_matcher comes right after a skipped python segment: it is the quantize module, so it has its names
    "quantize": Route(["npu_bridge.core.tf1.quantize", "npu_bridge.core.tf1.quantize.graph_matcher"]),
    "data": Route(["tf:compat.v1.data.experimental", "tf:compat.v1.data", "npu_bridge.core.tf1.contrib_data"]),
    # upstream's python.loss_scale_manager and python.loss_scale_optimizer are the module holding both
    "mixed_precision": Route(
        ["npu_bridge.core.tf1.mixed_precision"],
        extras=dict.fromkeys(("loss_scale_manager", "loss_scale_optimizer"), "npu_bridge.core.tf1.mixed_precision"),
    ),
    # python.ops.sample_stats (percentile) comes after a skipped python segment: it is the module of percentile
    "distributions": Route(
        ["tf:compat.v1.distributions", "npu_bridge.core.tf1.distributions"],
        extras={"sample_stats": "npu_bridge.core.tf1.distributions"},
        modules={"ops.mvn_diag": "npu_bridge.core.tf1.distributions"},
    ),
    # model_analyzer is the module itself (print_model_analysis, the option dictionaries, ProfileContext)
    "tfprof": Route(
        ["npu_bridge.core.tf1.tfprof"],
        extras={
            "model_analyzer": "npu_bridge.core.tf1.tfprof",
            "tfprof_logger": "tensorflow.python.profiler.tfprof_logger",
        },
    ),
    "training": Route(
        ["tf:compat.v1.train", "tf_slim.training.evaluation"],
        # python.training.hparam is the module itself (HParams, parse_values)
        extras={
            "HParams": "npu_bridge.core.tf1.hparams.HParams",
            "parse_values": "npu_bridge.core.tf1.hparams.parse_values",
            "hparam": "npu_bridge.core.tf1.hparams",
            "FeedingQueueRunner": "npu_bridge.core.tf1.feeding_queue_runner.FeedingQueueRunner",
            # python.training.bucket_ops is the module itself
            "bucket_ops": "npu_bridge.core.tf1.bucket_ops",
            **{name: f"npu_bridge.core.tf1.bucket_ops.{name}" for name in ("bucket", "bucket_by_sequence_length")},
            # python.training.evaluation: tf_slim's port of contrib's module (checkpoints_iterator,
            # wait_for_new_checkpoint, evaluate_repeatedly, StopAfterNEvalsHook, ...)
            "evaluation": "tf_slim.training.evaluation",
        },
        modules={
            "training.feeding_queue_runner": "npu_bridge.core.tf1.feeding_queue_runner",
            "training.training": "tf_slim.training.training",  # tf_slim's port (create_train_op, train, ...)
        },
    ),
    "metrics": Route(
        ["tf_slim.metrics", "tf:compat.v1.metrics"],
        extras={"confusion_matrix": "npu_bridge.core.tf1.contrib_signatures.confusion_matrix"},
    ),
    "losses": Route(["tf_slim.losses", "tf:compat.v1.losses"]),
    # tf.contrib.summary of TensorFlow 1.15 lives on as summary_ops_v2 (scalar(name, tensor, family, step), ...)
    "summary": Route(
        ["tensorflow.python.ops.summary_ops_v2", "tf:summary", "tf:compat.v1.summary"],
        renames={"flush": "legacy_raw_flush"},  # TF 1.15's flush took the writer's resource tensor too
        extras={"all_summary_ops": "tf:compat.v1.summary.all_v2_summary_ops"},
    ),
    # 1.15's contrib.lookup.lookup_ops: its *_from_tensor functions take `mapping` and its HashTable a `shared_name`
    # (written here), the rest is TensorFlow's lookup_ops
    "lookup": Route(
        ["tf:compat.v1.lookup"],
        extras={
            **{
                name: f"npu_bridge.core.tf1.contrib_signatures.{name}"
                for name in (
                    "HashTable",
                    "index_table_from_tensor",
                    "index_to_string_table_from_tensor",
                    "string_to_index",
                    "index_to_string",
                    "string_to_index_table_from_file",
                    "string_to_index_table_from_tensor",
                )
            },
            **{
                name: f"tensorflow.python.ops.lookup_ops.{name}"
                for name in (
                    "index_table_from_file",
                    "index_to_string_table_from_file",
                    "IdTableWithHashBuckets",
                    "InitializableLookupTableBase",
                    "LookupInterface",
                    "TableInitializerBase",
                    "TextFileIdTableInitializer",
                    "TextFileStringTableInitializer",
                    "HasherSpec",
                    "FastHashSpec",
                    "StrongHashSpec",
                    "MutableHashTable",
                )
            },
            "MutableDenseHashTable": "tensorflow.python.ops.lookup_ops.DenseHashTable",
        },
    ),
    "distribute": Route(
        ["tf:distribute"],
        extras={"CollectiveAllReduceStrategy": "npu_bridge.core.tf1.contrib_distribute.CollectiveAllReduceStrategy"},
    ),
    "cluster_resolver": Route(["tf:distribute.cluster_resolver"]),
    "keras": Route(["tf:compat.v1.keras"]),
    # python.saved_model.reader (read_saved_model, get_saved_model_tag_sets) lives on in TensorFlow's tools
    "saved_model": Route(["tf:compat.v1.saved_model"], extras={"reader": "tensorflow.python.tools.saved_model_utils"}),
    "staging": Route(extras={"StagingArea": "tensorflow.python.ops.data_flow_ops.StagingArea"}),
    "opt": Route(
        ["npu_bridge.core.tf1.optimizers"],
        modules={
            f"training.{upstream}": f"npu_bridge.core.tf1.optimizers.{ours}"
            for upstream, ours in (
                ("external_optimizer", "scipy_interface"),
                ("lars_optimizer", "lars"),
                ("lazy_adam_optimizer", "lazy_adam"),
                ("moving_average_optimizer", "moving_average"),
                ("nadam_optimizer", "nadam"),
                ("weight_decay_optimizers", "weight_decay"),
            )
        },
    ),
    "crf": Route(["npu_bridge.core.tf1.crf"], modules={"ops.crf": "npu_bridge.core.tf1.crf"}),
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
    "learn": Route(
        ["npu_bridge.core.tf1.learn"],
        modules=dict.fromkeys(
            ("learn.preprocessing.text", "learn.preprocessing.categorical_vocabulary"),
            "npu_bridge.core.tf1.learn_preprocessing",
        ),
    ),
    "graph_editor": Route(["npu_bridge.core.tf1.graph_editor"]),
    "util": Route(
        ["tf:compat.v1"],
        extras={
            "constant_value": "tensorflow.python.framework.tensor_util.constant_value",
            "ops_used_by_graph_def": "tensorflow.python.framework.meta_graph.ops_used_by_graph_def",
            "stripped_op_list_for_graph": "tensorflow.python.framework.meta_graph.stripped_op_list_for_graph",
            "loader": "npu_bridge.core.tf1.contrib_signatures",  # loader.load_op_library
        },
    ),
    # python.layers.cudnn_rnn and python.ops.cudnn_rnn_ops are the module itself
    "cudnn_rnn": Route(
        ["npu_bridge.core.tf1.cudnn_rnn"],
        extras=dict.fromkeys(("cudnn_rnn", "cudnn_rnn_ops"), "npu_bridge.core.tf1.cudnn_rnn"),
    ),
    "recurrent": Route(
        ["npu_bridge.core.tf1.functional_rnn"], modules={"ops.functional_rnn": "npu_bridge.core.tf1.functional_rnn"}
    ),
    "all_reduce": Route(["npu_bridge.core.tf1.all_reduce"], extras={"all_reduce": "npu_bridge.core.tf1.all_reduce"}),
    # TensorFlow 2.21 still has xla.compile and jit.experimental_jit_scope; xla.estimator_model_fn is written here
    "compiler": Route(extras={"xla": "npu_bridge.core.tf1.contrib_xla", "jit": "tensorflow.python.compiler.xla.jit"}),
    # replicate_model_fn runs one tower here (towers over several devices are not replicated)
    "estimator": Route(
        ["npu_bridge.core.tf1.tower_replication"],
        extras={"clip_gradients_by_norm": "npu_bridge.core.tf1.gradient_transforms.clip_gradients_by_norm"},
    ),
    "tpu": Route(
        ["npu_bridge.core.tf1.tpu", "npu_bridge.core.tf_estimator.tpu", "tf:compat.v1.tpu"],
        extras={
            **dict.fromkeys(("tpu_config", "tpu_estimator", "tpu"), "npu_bridge.core.tf_estimator.tpu"),
            **dict.fromkeys(("tpu_optimizer", "tpu_ops", "async_checkpoint"), "npu_bridge.core.tf1.tpu"),
            "tpu_function": "tensorflow.python.tpu.tpu_function",
            "datasets": "tensorflow.python.tpu.datasets",
        },
    ),
    # accepted but unavailable: constructing one raises NotAvailableError (they need Google Cloud's services)
    "cloud": Route(["npu_bridge.core.tf1.contrib_cloud"]),
    "sparsemax": Route(["npu_bridge.core.tf1.sparsemax"]),
    "stateless": Route(
        extras={
            name: f"tensorflow.python.ops.stateless_random_ops.{name}"
            for name in (
                "stateless_random_normal",
                "stateless_random_uniform",
                "stateless_truncated_normal",
                "stateless_multinomial",
            )
        }
    ),
    # TensorFlow 0.x's contrib.ctc (1.15 had it as tf.nn's)
    "ctc": Route(
        extras={
            name: f"tf:compat.v1.nn.{name}" for name in ("ctc_loss", "ctc_greedy_decoder", "ctc_beam_search_decoder")
        }
    ),
    # python.trt_convert is the module itself (create_inference_graph)
    "tensorrt": Route(
        ["npu_bridge.core.tf1.contrib_tensorrt"], extras={"trt_convert": "npu_bridge.core.tf1.contrib_tensorrt"}
    ),
    # plugins.projector: ProjectorConfig, EmbeddingInfo, SpriteMetadata, visualize_embeddings
    "tensorboard": Route(extras={"plugins": "npu_bridge.core.tf1.projector.plugins"}),
}

# contrib submodules of TensorFlow 1.15 the mode has no route for: importing them works, using a name raises.
UNROUTED = (
    "bayesflow checkpoint coder constrained_optimization copy_graph deprecated "
    "eager factorization feature_column ffmpeg gan grid_rnn "
    "input_pipeline integrate kernel_methods labeled_tensor linear_optimizer memory_stats "
    "model_pruning nccl optimizer_v2 periodic_resample predictor proto quantization "
    "rate receptive_field reduce_slice_ops remote_fused_graph resampler rpc signal solvers "
    "specs stat_summarizer tensor_forest testing text timeseries"
).split()

DIFFERENCES = {
    "rnn.LSTMBlockCell": "is tf.nn.rnn_cell.LSTMCell here: the same computation, other variable names (checkpoints "
    "written by TF 1.15's LSTMBlockCell do not load)",
    "rnn.GRUBlockCell": "is tf.nn.rnn_cell.GRUCell here: the same computation, other variable names",
    "rnn.GRUBlockCellV2": "is tf.nn.rnn_cell.GRUCell here: the same computation, other variable names",
    **{
        f"cudnn_rnn.{name}": "computes cuDNN's function with graph ops here; its variables are the canonical "
        "weights TF 1.15 wrote to checkpoints (no opaque_kernel: a checkpoint holding only the opaque cuDNN buffer "
        "does not load)"
        for name in ("CudnnLSTM", "CudnnGRU")
    },
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
        if not path:  # 1.15's contrib held its deprecation warning here; scripts set it to None to silence it
            self.__dict__["_warning"] = None

    def __getattr__(self, name):
        path, route, real = self.__dict__["_npu"]
        if name == "__all__" and route is not None:  # what ``from tensorflow.contrib.<path> import *`` binds
            self.__dict__[name] = star_names(route, real)
            return self.__dict__[name]
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        if name == "python" and path:
            value = _SkippedSegment(self, route or Route(), real)
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


def star_names(route, real):
    """The names ``import *`` of a contrib module binds: the public names of its places (TensorFlow namespaces that
    merely hold a more specific place of the route, and ``tf.compat.v1`` itself, left out: 1.15's contrib modules
    never exported all of TensorFlow), its renames, extras and ``Route.star_extras``, without Python's built-in
    names (``range``, ``map``), which a star import would shadow."""
    names = set(route.renames) | set(route.extras) | set(route.star_extras)
    for place in route.places:
        if place == "tf:compat.v1" or any(other.startswith(place + ".") for other in route.places):
            continue
        module = _resolve_place(place, real)
        if module is not _MISSING:
            names.update(getattr(module, "__all__", None) or dir(module))
    return sorted(n for n in names if not n.startswith("_") and n not in vars(builtins))


def not_provided(path, use=""):
    """The ``NotProvidedError`` for a contrib name the mode does not provide.

    Args:
      path: the name as a script writes it below ``tf`` ("tf.contrib.grid_rnn.Grid2LSTMCell").
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
      path: its name below ``tf`` ("tf.contrib.grid_rnn.Grid2LSTMCell").
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
    ``contrib.layers.utils``), as the deep paths of TensorFlow 1.x's sources mean the same names, except the paths
    to the source modules of ``Route.modules`` (the segments on the way there are ``_SkippedSegment`` too).

    Args:
      module: the contrib module (``contrib.layers``).
      route: its ``Route``.
      real: the real ``tensorflow`` module.
      below: the path below ``python`` so far (``"learn.preprocessing"``; "" for ``python`` itself).
      collapsed: what that path means without the skipped segments (``contrib.learn.preprocessing``).
    """

    def __init__(self, module, route, real, below="", collapsed=None):
        self._npu = (module, route, real, below, collapsed)

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        module, route, real, below, collapsed = self._npu
        key = f"{below}.{name}" if below else name
        if key in route.modules:  # kept on the contrib module, under a name no attribute access reaches
            if f"python.{key}" not in module.__dict__:
                path = f"{module.__name__[len('tensorflow.contrib.') :]}.python.{key}"
                module.__dict__[f"python.{key}"] = ContribModule(path, Route([route.modules[key]]), real)
            return module.__dict__[f"python.{key}"]
        value = getattr(collapsed, name) if below else module
        if any(upstream.startswith(f"{key}.") for upstream in route.modules):
            return _SkippedSegment(module, route, real, key, value)
        return value


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
    if place.startswith("contrib:"):  # another contrib module, with its route's renames and extras
        path = place[len("contrib:") :]
        return ContribModule(path, ROUTES[path], real)
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
