"""``tf.estimator.export``: serving input receivers and SavedModel export of an Estimator."""

import collections
import os
import shutil
import time

import tensorflow as tf
from tensorflow.python.saved_model.model_utils import export_output as export_output_lib

from npu_bridge.core.runtime import log
from npu_bridge.core.runtime.errors import NpuArgumentError
from npu_bridge.core.tf_estimator import missing
from npu_bridge.core.tf_estimator.mode_keys import ModeKeys

v1 = tf.compat.v1
PredictOutput = export_output_lib.PredictOutput
ClassificationOutput = export_output_lib.ClassificationOutput
RegressionOutput = export_output_lib.RegressionOutput
ExportOutput = export_output_lib.ExportOutput
DEFAULT_SIGNATURE = tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY


def _as_tensor_dict(value, default_key, what):
    if not isinstance(value, dict):
        value = {default_key: value}
    for key, tensor in value.items():
        if not isinstance(key, str) or not isinstance(tensor, (tf.Tensor, tf.SparseTensor)):
            raise NpuArgumentError(f"{what} must be a Tensor or a dict of string -> Tensor, given {key!r}: {tensor!r}")
    return value


class ServingInputReceiver(
    collections.namedtuple("ServingInputReceiver", ["features", "receiver_tensors", "receiver_tensors_alternatives"])
):
    """What a serving_input_receiver_fn returns: the model's features and the tensors clients feed.

    Args:
      features: a Tensor (named "feature") or dict of Tensors, passed to model_fn.
      receiver_tensors: a Tensor (named "input") or dict of the tensors the SavedModel signature feeds.
      receiver_tensors_alternatives: not supported here (must be None).
    Raises:
      ValueError: the tensors are not Tensors, or alternatives were given.
    """

    def __new__(cls, features, receiver_tensors, receiver_tensors_alternatives=None):
        if receiver_tensors_alternatives:
            raise NpuArgumentError("receiver_tensors_alternatives are not supported by npu_bridge's Estimator export")
        return super().__new__(
            cls,
            _as_tensor_dict(features, "feature", "features"),
            _as_tensor_dict(receiver_tensors, "input", "receiver_tensors"),
            None,
        )


class TensorServingInputReceiver(
    collections.namedtuple(
        "TensorServingInputReceiver", ["features", "receiver_tensors", "receiver_tensors_alternatives"]
    )
):
    """A serving input receiver whose features are one Tensor, passed to model_fn as it is (not in a dict).

    Args:
      features: a Tensor or SparseTensor.
      receiver_tensors: a Tensor (named "input") or dict of the tensors the SavedModel signature feeds.
      receiver_tensors_alternatives: not supported here (must be None).
    Raises:
      ValueError: ``features`` is not one Tensor, the receiver tensors are not Tensors, or alternatives were given.
    """

    def __new__(cls, features, receiver_tensors, receiver_tensors_alternatives=None):
        if receiver_tensors_alternatives:
            raise NpuArgumentError("receiver_tensors_alternatives are not supported by npu_bridge's Estimator export")
        if not isinstance(features, (tf.Tensor, tf.SparseTensor)):
            raise NpuArgumentError(
                f"TensorServingInputReceiver features must be one Tensor or SparseTensor, given {features!r} "
                "(use ServingInputReceiver for a dict of features)"
            )
        return super().__new__(cls, features, _as_tensor_dict(receiver_tensors, "input", "receiver_tensors"), None)


def build_raw_serving_input_receiver_fn(features, default_batch_size=None):
    """Returns a serving_input_receiver_fn that feeds each feature through a placeholder of its shape.

    Args:
      features: dict of name -> Tensor (shape and dtype examples) or a single Tensor.
      default_batch_size: the batch dimension of the placeholders (None: any).
    """
    features = _as_tensor_dict(features, "feature", "features")

    def serving_input_receiver_fn():
        receivers = {
            name: v1.placeholder(t.dtype, [default_batch_size] + t.shape.as_list()[1:], name=name)
            for name, t in features.items()
        }
        return ServingInputReceiver(dict(receivers), receivers)

    return serving_input_receiver_fn


def build_parsing_serving_input_receiver_fn(feature_spec, default_batch_size=None):
    """Returns a serving_input_receiver_fn that parses serialized ``tf.Example`` protos with ``feature_spec``."""

    def serving_input_receiver_fn():
        serialized = v1.placeholder(tf.string, [default_batch_size], name="input_example_tensor")
        return ServingInputReceiver(tf.io.parse_example(serialized, feature_spec), {"examples": serialized})

    return serving_input_receiver_fn


def _export_outputs(spec):
    if spec.export_outputs:
        return spec.export_outputs
    predictions = spec.predictions if isinstance(spec.predictions, dict) else {"output": spec.predictions}
    return {DEFAULT_SIGNATURE: PredictOutput(predictions)}


def _new_export_dir(export_dir_base):
    """``<base>/<timestamp>``, later than every existing export so "newest" stays well defined."""
    existing = (
        [int(d.strip("/")) for d in tf.io.gfile.listdir(export_dir_base) if d.strip("/").isdigit()]
        if tf.io.gfile.isdir(export_dir_base)
        else []
    )
    return os.path.join(export_dir_base, str(max([int(time.time())] + [e + 1 for e in existing])))


def export_saved_model(
    estimator,
    export_dir_base,
    serving_input_receiver_fn,
    assets_extra=None,
    as_text=False,
    checkpoint_path=None,
    mode=ModeKeys.PREDICT,
):
    """Writes ``estimator``'s model, restored from a checkpoint, as a SavedModel (see Estimator.export_saved_model).

    Returns:
      The new export directory as bytes.
    Raises:
      ValueError: there is no checkpoint, or ``mode`` is not PREDICT.
    """
    if mode != ModeKeys.PREDICT:
        raise NpuArgumentError(f"export_saved_model exports the PREDICT graph only here, given mode {mode!r}")
    checkpoint_path = checkpoint_path or estimator.latest_checkpoint()
    if not checkpoint_path:
        raise NpuArgumentError(f"Couldn't find trained model at {estimator.model_dir}.")
    export_dir = _new_export_dir(os.fspath(export_dir_base))
    temp_dir = os.path.join(os.path.dirname(export_dir), f"temp-{os.path.basename(export_dir)}")
    with tf.Graph().as_default():
        v1.train.get_or_create_global_step()
        receiver = serving_input_receiver_fn()
        spec = estimator._call_model_fn(receiver.features, None, ModeKeys.PREDICT)
        signatures = {
            key: output.as_signature_def(receiver.receiver_tensors) for key, output in _export_outputs(spec).items()
        }
        saver = spec.scaffold.saver or estimator._create_saver()
        saver.build()
        with v1.Session(config=estimator._session_config) as session:
            saver.restore(session, checkpoint_path)
            builder = v1.saved_model.Builder(temp_dir)
            builder.add_meta_graph_and_variables(
                session,
                [tf.saved_model.SERVING],
                signature_def_map=signatures,
                strip_default_attrs=True,
                assets_collection=v1.get_collection(v1.GraphKeys.ASSET_FILEPATHS),
                saver=saver,
                main_op=tf.group(v1.local_variables_initializer(), v1.tables_initializer()),
            )
            builder.save(as_text)
    for dest, source in (assets_extra or {}).items():
        target = os.path.join(temp_dir, "assets.extra", dest)
        tf.io.gfile.makedirs(os.path.dirname(target))
        tf.io.gfile.copy(source, target, overwrite=True)
    tf.io.gfile.rename(temp_dir, export_dir)
    log.logger.info("SavedModel written to: %s", export_dir)
    return export_dir.encode()


class Exporter:
    """Exports an Estimator during ``train_and_evaluate`` (after evaluations)."""

    @property
    def name(self):
        """Directory name under ``<model_dir>/export``."""
        raise NotImplementedError

    def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
        """Exports; returns the export directory or None."""
        raise NotImplementedError


class _SavedModelExporter(Exporter):
    def __init__(self, name, serving_input_receiver_fn, assets_extra=None, as_text=False):
        if not name:
            raise NpuArgumentError("An Exporter needs a non-empty name")
        self._name = name
        self._receiver_fn = serving_input_receiver_fn
        self._assets_extra = assets_extra
        self._as_text = as_text

    @property
    def name(self):
        return self._name

    def _export(self, estimator, export_path, checkpoint_path):
        return export_saved_model(
            estimator, export_path, self._receiver_fn, self._assets_extra, self._as_text, checkpoint_path
        )


class FinalExporter(_SavedModelExporter):
    """Exports once, after the final evaluation."""

    def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
        return self._export(estimator, export_path, checkpoint_path) if is_the_final_export else None


class LatestExporter(_SavedModelExporter):
    """Exports after every evaluation and keeps the newest ``exports_to_keep`` exports (None: all)."""

    def __init__(self, name, serving_input_receiver_fn, assets_extra=None, as_text=False, exports_to_keep=5):
        super().__init__(name, serving_input_receiver_fn, assets_extra, as_text)
        if exports_to_keep is not None and exports_to_keep <= 0:
            raise NpuArgumentError(f"exports_to_keep must be positive or None, given: {exports_to_keep}")
        self._keep = exports_to_keep

    def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
        result = self._export(estimator, export_path, checkpoint_path)
        if self._keep is not None:
            exports = sorted((int(d) for d in tf.io.gfile.listdir(export_path) if d.strip("/").isdigit()))
            for stale in exports[: -self._keep]:
                shutil.rmtree(os.path.join(export_path, str(stale)), ignore_errors=True)
        return result


# What `tf.estimator.export` provides; other names raise NotProvidedError.
__all__ = [
    "ClassificationOutput",
    "ExportOutput",
    "PredictOutput",
    "RegressionOutput",
    "ServingInputReceiver",
    "TensorServingInputReceiver",
    "build_parsing_serving_input_receiver_fn",
    "build_raw_serving_input_receiver_fn",
]
__getattr__ = missing.module_getattr("tf.estimator.export", __all__)
