"""``tf.estimator.tpu.RunConfig`` / ``TPUConfig`` / ``InputPipelineConfig``: TPU run settings as records.

No TPU is driven here: a ``TPUEstimator`` runs as TensorFlow 1.15 ran one with ``use_tpu=False``, so these settings
are validated and kept (scripts read them back) but change nothing about the run.
"""

import collections
import os
import re

from npu_bridge.core.runtime import bounded_files
from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError, shortened
from npu_bridge.core.tf_estimator import run_config


class InputPipelineConfig:
    """How a TPU job feeds its input (the values of TensorFlow 1.15's enum)."""

    PER_SHARD_V1 = 1
    PER_HOST_V1 = 2
    PER_HOST_V2 = 3
    BROADCAST = 4
    SLICED = 5


_PIPELINES = (True, False, 1, 2, 3, 4, 5)
_CORES_PER_REPLICA = (1, 2, 4, 8, 16, 32, 64, 128)
_TPU_FIELDS = (
    "iterations_per_loop",
    "num_shards",
    "num_cores_per_replica",
    "per_host_input_for_training",
    "tpu_job_name",
    "initial_infeed_sleep_secs",
    "input_partition_dims",
    "eval_training_input_configuration",
    "experimental_host_call_every_n_steps",
)
_DURATION = re.compile(r"(?P<value>[1-9]\d*)(?P<unit>[smh])?")
_SECONDS = {"s": 1, "m": 60, "h": 3600}

IterationsPerLoopCounter = collections.namedtuple("IterationsPerLoopCounter", ["value", "unit"])


def parse_iterations_per_loop(iterations_per_loop):
    """What ``TPUConfig(iterations_per_loop=...)`` means: a count of steps, or a time per loop.

    Args:
      iterations_per_loop: a positive int (steps), or a string "<N>s", "<N>m" or "<N>h" (N >= 1; "<N>" alone is a
        count).

    Returns:
      ``IterationsPerLoopCounter(value, unit)``: (N, "count"), or (the duration in seconds, "seconds").

    Raises:
      NpuArgumentError: anything else (0, a negative number, "-1h", "10d", 2.5).
    """
    match = None
    if isinstance(iterations_per_loop, (int, str)) and not isinstance(iterations_per_loop, bool):
        match = _DURATION.fullmatch(str(iterations_per_loop))
    if match is None:
        raise NpuArgumentError(
            f"TPUConfig: iterations_per_loop must be positive: an integer >= 1 (steps) or a duration '<N>s', "
            f"'<N>m' or '<N>h' with an integer N >= 1 (such as '300s', '60m', '1h'), given: {iterations_per_loop!r}"
        )
    unit = match.group("unit")
    value = int(match.group("value"))
    return (
        IterationsPerLoopCounter(value * _SECONDS[unit], "seconds")
        if unit
        else IterationsPerLoopCounter(value, "count")
    )


def _positive_int(name, value, allow_none=False):
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise NpuArgumentTypeError(f"TPUConfig: {name} must be an int, given: {value!r} ({type(value).__name__})")
    if value < 1:
        raise NpuArgumentError(f"TPUConfig: {name} must be positive (an integer >= 1), given: {value!r}")


def _tf_config():
    """The TF_CONFIG environment variable as a dict ({} when it is not set)."""
    text = os.environ.get("TF_CONFIG", "")
    if not text:
        return {}
    try:
        tf_config = bounded_files.parse_json(text)
    except ValueError as error:
        raise NpuArgumentError(
            f"TF_CONFIG has invalid value {shortened(text)}: it is not valid JSON ({error})"
        ) from None
    return tf_config if isinstance(tf_config, dict) else {}


class TPUConfig(collections.namedtuple("TPUConfig", _TPU_FIELDS)):
    """The TPU part of a ``RunConfig`` (the fields, defaults and checks of TensorFlow 1.15's ``TPUConfig``).

    ``per_host_input_for_training`` True / False is kept as ``InputPipelineConfig.PER_HOST_V1`` / ``PER_SHARD_V1``,
    as TensorFlow 1.15 kept it; ``tpu_job_name`` defaults to TF_CONFIG's ``service.tpu_worker_job_name``.

    Raises:
      ValueError: ``iterations_per_loop`` is neither a positive int nor a duration "<N>s|m|h" (see
        ``parse_iterations_per_loop``); ``num_shards``, ``initial_infeed_sleep_secs`` or
        ``experimental_host_call_every_n_steps`` is not positive; ``num_cores_per_replica`` is not 1, 2, 4, ..., 128;
        ``per_host_input_for_training`` is not an ``InputPipelineConfig`` value (or a bool);
        ``eval_training_input_configuration`` is not PER_HOST_V1 or SLICED; ``input_partition_dims`` is not a list of
        one or two entries, or is given without PER_HOST_V2 and ``num_cores_per_replica``.
      TypeError: ``num_shards``, ``initial_infeed_sleep_secs`` or ``experimental_host_call_every_n_steps`` is not an
        int.
    """

    def __new__(
        cls,
        iterations_per_loop=2,
        num_shards=None,
        num_cores_per_replica=None,
        per_host_input_for_training=True,
        tpu_job_name=None,
        initial_infeed_sleep_secs=None,
        input_partition_dims=None,
        eval_training_input_configuration=InputPipelineConfig.PER_HOST_V1,
        experimental_host_call_every_n_steps=1,
    ):
        parse_iterations_per_loop(iterations_per_loop)
        _positive_int("num_shards", num_shards, allow_none=True)
        _positive_int("experimental_host_call_every_n_steps", experimental_host_call_every_n_steps)
        if per_host_input_for_training not in _PIPELINES:
            raise NpuArgumentError(
                "TPUConfig: per_host_input_for_training must be True, False or an InputPipelineConfig value (1..5), "
                f"given: {per_host_input_for_training!r}"
            )
        if input_partition_dims is not None:
            if not isinstance(input_partition_dims, (list, tuple)) or len(input_partition_dims) not in (1, 2):
                raise NpuArgumentError(
                    "TPUConfig: input_partition_dims must be a list/tuple with one or two elements (the partitions "
                    f"of the features and of the labels), given: {input_partition_dims!r}"
                )
            if per_host_input_for_training is not InputPipelineConfig.PER_HOST_V2:
                raise NpuArgumentError(
                    "TPUConfig: input_partition_dims is only supported in PER_HOST_V2 mode: set "
                    "per_host_input_for_training=InputPipelineConfig.PER_HOST_V2, given: "
                    f"{per_host_input_for_training!r}"
                )
            if num_cores_per_replica is None:
                raise NpuArgumentError("TPUConfig: input_partition_dims requires setting num_cores_per_replica")
        if num_cores_per_replica is not None and (
            isinstance(num_cores_per_replica, bool) or num_cores_per_replica not in _CORES_PER_REPLICA
        ):
            raise NpuArgumentError(
                f"TPUConfig: num_cores_per_replica must be 1, 2, 4, 8, 16, 32, 64, 128; got {num_cores_per_replica}"
            )
        if eval_training_input_configuration not in (InputPipelineConfig.PER_HOST_V1, InputPipelineConfig.SLICED):
            raise NpuArgumentError(
                "TPUConfig: eval_training_input_configuration must be PER_HOST_V1 or SLICED; got "
                f"{eval_training_input_configuration!r}"
            )
        if per_host_input_for_training is True:
            per_host_input_for_training = InputPipelineConfig.PER_HOST_V1
        elif per_host_input_for_training is False:
            per_host_input_for_training = InputPipelineConfig.PER_SHARD_V1
        if initial_infeed_sleep_secs:
            _positive_int("initial_infeed_sleep_secs", initial_infeed_sleep_secs)
        if not tpu_job_name:
            service = _tf_config().get("service")
            tpu_job_name = (service.get("tpu_worker_job_name") if isinstance(service, dict) else None) or tpu_job_name
        return super().__new__(
            cls,
            iterations_per_loop,
            num_shards,
            num_cores_per_replica,
            per_host_input_for_training,
            tpu_job_name,
            initial_infeed_sleep_secs,
            input_partition_dims,
            eval_training_input_configuration,
            experimental_host_call_every_n_steps,
        )


_TPU_RUN_FIELDS = ("tpu_config", "evaluation_master", "master", "cluster")


class RunConfig(run_config.RunConfig):
    """A ``tf.estimator.RunConfig`` with the TPU settings of TensorFlow 1.15's ``tpu.RunConfig``.

    Args:
      tpu_config: a ``TPUConfig`` (default: ``TPUConfig()``).
      evaluation_master, master: the TPU master addresses, kept (a run here is local whatever they say); by default
        TF_CONFIG's ``session_master`` and ``eval_session_master``, the evaluation master falling back to the master
        (except in an ``evaluator`` task).
      cluster: a ``TPUClusterResolver``, kept.
      **kwargs: the arguments of ``tf.estimator.RunConfig``.
    Raises:
      TypeError: ``tpu_config`` is not a ``TPUConfig``.
      ValueError: a ``tf.estimator.RunConfig`` argument is invalid, or both ``master`` and ``cluster`` are set.
    """

    def __init__(self, tpu_config=None, evaluation_master=None, master=None, cluster=None, **kwargs):
        super().__init__(**kwargs)
        self._tpu_config = _checked_tpu_config(tpu_config)
        if master is not None and cluster is not None:
            raise NpuArgumentError(
                f"RunConfig: both master ({master!r}) and cluster are set; give one (the cluster names its master)"
            )
        tf_config = _tf_config()
        # TF_CONFIG's session_master / eval_session_master unless given; the evaluation master defaults to the
        # master, except for an evaluator task of TF_CONFIG, which keeps its own
        self._tpu_master = master if master is not None else tf_config.get("session_master", "")
        if evaluation_master is not None:
            self._tpu_evaluation_master = evaluation_master
        else:
            configured = tf_config.get("eval_session_master", "")
            use_master = not configured and self.task_type != "evaluator"
            self._tpu_evaluation_master = self._tpu_master if use_master else configured
        self._cluster = cluster

    tpu_config = property(lambda self: self._tpu_config)
    master = property(lambda self: self._tpu_master)
    evaluation_master = property(lambda self: self._tpu_evaluation_master)
    cluster = property(lambda self: self._cluster)

    def replace(self, **kwargs):
        """Returns a copy with some properties replaced (``tpu_config`` too).

        Raises:
          ValueError: a name is not a replaceable property, or the new values are invalid together.
        """
        tpu = {name: kwargs.pop(name) for name in _TPU_RUN_FIELDS if name in kwargs}
        new = super().replace(**kwargs)
        if "tpu_config" in tpu:
            new._tpu_config = _checked_tpu_config(tpu["tpu_config"])
        for name in ("master", "evaluation_master"):
            if name in tpu:
                setattr(new, f"_tpu_{name}", tpu[name] or "")
        if "cluster" in tpu:
            new._cluster = tpu["cluster"]
        return new


def _checked_tpu_config(tpu_config):
    if tpu_config is None:
        return TPUConfig()
    if not isinstance(tpu_config, TPUConfig):
        raise NpuArgumentTypeError(f"RunConfig: tpu_config must be a tpu.TPUConfig, given: {tpu_config!r}")
    return tpu_config
