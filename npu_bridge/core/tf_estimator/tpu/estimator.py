"""``tf.estimator.tpu.TPUEstimator`` as TensorFlow 1.15 ran it with ``use_tpu=False``: one replica, CPU or GPU.

What that path did, and this class does: ``params["batch_size"]`` is the batch size of the mode (the global
``train_batch_size`` / ``eval_batch_size`` / ``predict_batch_size``) for both ``input_fn`` and ``model_fn``;
``input_fn`` must take ``params``; a ``TPUEstimatorSpec`` becomes an ``EstimatorSpec`` (``tpu/spec.py``); a plain
``EstimatorSpec`` is used as it is. ``use_tpu=True`` cannot be honoured here (there is no TPU): the run is the same
one-replica run, and a warning says so once; nothing pretends to shard. TPU-only arguments (``batch_axis``,
``eval_on_tpu``, ``export_to_tpu``, ``embedding_config_spec``, ...) are kept and have no effect.
"""

from npu_bridge.core.runtime import log
from npu_bridge.core.runtime.errors import NpuArgumentError
from npu_bridge.core.tf_estimator import calling
from npu_bridge.core.tf_estimator.estimator import Estimator
from npu_bridge.core.tf_estimator.mode_keys import ModeKeys
from npu_bridge.core.tf_estimator.tpu.config import RunConfig
from npu_bridge.core.tf_estimator.tpu.spec import TPUEstimatorSpec

_RESERVED_PARAMS = ("batch_size", "context")
_told = set()


def _tell_once(key, message, *args):
    if key not in _told:
        _told.add(key)
        log.logger.warning(message, *args)


def _batch_size(name, value):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise NpuArgumentError(f"TPUEstimator: {name} must be a positive integer or None, given: {value!r}")
    return value


class TPUEstimator(Estimator):
    """An Estimator with TensorFlow 1.15's ``TPUEstimator`` arguments, running as its ``use_tpu=False`` path.

    Args:
      model_fn, model_dir, params, warm_start_from: as ``Estimator``'s; ``params`` must not hold "batch_size" or
        "context" (TPUEstimator sets them).
      config: a ``tpu.RunConfig`` (default: a new one).
      use_tpu: whether the script asks for a TPU; True runs the same one-replica run, with a warning.
      train_batch_size, eval_batch_size, predict_batch_size: the global batch size of each mode, given to
        ``input_fn`` and ``model_fn`` as ``params["batch_size"]``.
      batch_axis, eval_on_tpu, export_to_tpu, export_to_cpu, embedding_config_spec,
        export_saved_model_api_version: TPU settings, kept without effect.
    Raises:
      ValueError: a bad batch size, reserved params keys, a ``config`` that is not a ``tpu.RunConfig``, or what
        ``Estimator`` raises.
    """

    def __init__(
        self,
        model_fn=None,
        model_dir=None,
        config=None,
        params=None,
        use_tpu=True,
        train_batch_size=None,
        eval_batch_size=None,
        predict_batch_size=None,
        batch_axis=None,
        eval_on_tpu=True,
        export_to_tpu=True,
        export_to_cpu=True,
        warm_start_from=None,
        embedding_config_spec=None,
        export_saved_model_api_version=None,
    ):
        config = RunConfig() if config is None else config
        if not isinstance(config, RunConfig):
            raise NpuArgumentError(
                f"TPUEstimator: config must be a tpu.RunConfig (tf.estimator.tpu.RunConfig), given: {config!r}"
            )
        reserved = sorted(set(params or {}) & set(_RESERVED_PARAMS))
        if reserved:
            raise NpuArgumentError(f"TPUEstimator: {reserved} are reserved keys but existed in params {params!r}")
        super().__init__(model_fn, model_dir=model_dir, config=config, params=params, warm_start_from=warm_start_from)
        self._batch_sizes = {
            ModeKeys.TRAIN: _batch_size("train_batch_size", train_batch_size),
            ModeKeys.EVAL: _batch_size("eval_batch_size", eval_batch_size),
            ModeKeys.PREDICT: _batch_size("predict_batch_size", predict_batch_size),
        }
        self._use_tpu = bool(use_tpu)
        self._tpu_settings = {
            "batch_axis": batch_axis,
            "eval_on_tpu": eval_on_tpu,
            "export_to_tpu": export_to_tpu,
            "export_to_cpu": export_to_cpu,
            "embedding_config_spec": embedding_config_spec,
            "export_saved_model_api_version": export_saved_model_api_version,
        }
        if self._use_tpu:
            _tell_once(
                "use_tpu",
                "TPUEstimator(use_tpu=True): there is no TPU here; the model runs as one replica on the CPU or GPU "
                "with the global batch size, as TensorFlow 1.15 ran use_tpu=False (see docs/tf1_mode.md)",
            )

    def _params_for(self, mode):
        params = self.params
        if self._batch_sizes.get(mode) is not None:
            params["batch_size"] = self._batch_sizes[mode]
        return params

    def _call_input_fn(self, input_fn, mode):
        if callable(input_fn) and "params" not in calling.fn_args(input_fn):
            raise NpuArgumentError(
                f"TPUEstimator: input_fn ({input_fn}) does not include params argument, required by TPUEstimator "
                'to pass batch size as params["batch_size"]'
            )
        return super()._call_input_fn(input_fn, mode)

    def _as_estimator_spec(self, returned):
        return returned.as_estimator_spec() if isinstance(returned, TPUEstimatorSpec) else returned
