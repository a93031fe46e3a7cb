"""TensorFlow 1.15-internal modules the TF1 mode gives user code from npu_bridge (``register``, at install).

They join the route both modes share (``runtime/legacy_paths.TF_MOVED``, ``runtime/legacy_modules``): user code's
``from tensorflow.python.estimator import estimator`` gets npu_bridge's Estimator (``tf.estimator`` in the mode),
``tensorflow.python.data.experimental.ops.threadpool`` the thread pool of ``threadpool``,
``tensorflow.tools.graph_transforms`` the Graph Transform Tool's ``TransformGraph``. A module with several
homes (``model_fn``: ``EstimatorSpec`` and ``ModeKeys``) is a view over all of them, in order. Installed packages
keep TensorFlow's own modules (TensorFlow 2.21 has none of these).
"""

from npu_bridge.core.runtime import legacy_paths

_ESTIMATOR = "npu_bridge.core.tf_estimator"
_OLD = "tensorflow.python.estimator"

# TensorFlow 1.15 module -> where its names are, searched in order
MOVED = {
    "tensorflow.python.data.experimental.ops.threadpool": ("npu_bridge.core.tf1.threadpool",),
    # the Graph Transform Tool's Python module (TensorFlow 2.21 keeps the tool, not the module)
    "tensorflow.tools.graph_transforms": ("npu_bridge.core.tf1.graph_transforms",),
    _OLD: (_ESTIMATOR,),
    f"{_OLD}.estimator_lib": (_ESTIMATOR,),
    f"{_OLD}.estimator": (f"{_ESTIMATOR}.estimator", "npu_bridge.core.tf1.estimator_internals"),
    f"{_OLD}.model_fn": (f"{_ESTIMATOR}.spec", f"{_ESTIMATOR}.mode_keys"),
    f"{_OLD}.mode_keys": (f"{_ESTIMATOR}.mode_keys",),
    f"{_OLD}.run_config": (f"{_ESTIMATOR}.run_config",),
    f"{_OLD}.training": (f"{_ESTIMATOR}.training",),
    f"{_OLD}.exporter": (f"{_ESTIMATOR}.export",),
    f"{_OLD}.export": (f"{_ESTIMATOR}.export",),
    f"{_OLD}.export.export": (f"{_ESTIMATOR}.export",),
    f"{_OLD}.export.export_lib": (f"{_ESTIMATOR}.export",),
    f"{_OLD}.export.export_output": ("tensorflow.python.saved_model.model_utils.export_output",),
    f"{_OLD}.inputs": (f"{_ESTIMATOR}.inputs",),
    f"{_OLD}.inputs.inputs": (f"{_ESTIMATOR}.inputs",),
    f"{_OLD}.inputs.numpy_io": (f"{_ESTIMATOR}.inputs",),
}


def register():
    """Adds ``MOVED`` to the shared route's table (idempotent)."""
    for old, new in MOVED.items():
        legacy_paths.add_moved(old, new)
