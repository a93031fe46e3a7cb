"""``tf.estimator.tpu.RunConfig`` / ``TPUConfig`` / ``InputPipelineConfig``: TPU run settings as records.

No TPU is driven here: a ``TPUEstimator`` runs as TensorFlow 1.15 ran one with ``use_tpu=False``, so these settings
are validated and kept (scripts read them back) but change nothing about the run.
"""

import collections

from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError
from npu_bridge.core.tf_estimator import run_config


class InputPipelineConfig:
    """How a TPU job feeds its input (the values of TensorFlow 1.15's enum)."""

    PER_SHARD_V1 = 1
    PER_HOST_V1 = 2
    PER_HOST_V2 = 3
    BROADCAST = 4
    SLICED = 5


_PIPELINES = (True, False, 1, 2, 3, 4, 5)
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


def _positive_int(name, value, allow_none=False):
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise NpuArgumentError(f"TPUConfig: {name} must be a positive integer, given: {value!r}")


class TPUConfig(collections.namedtuple("TPUConfig", _TPU_FIELDS)):
    """The TPU part of a ``RunConfig`` (the fields and defaults of TensorFlow 1.15's ``TPUConfig``).

    Raises:
      ValueError: ``iterations_per_loop``, ``num_shards``, ``num_cores_per_replica`` or
        ``experimental_host_call_every_n_steps`` is not a positive integer, or a pipeline value is not one of
        ``InputPipelineConfig``'s.
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
        _positive_int("iterations_per_loop", iterations_per_loop)
        _positive_int("num_shards", num_shards, allow_none=True)
        _positive_int("num_cores_per_replica", num_cores_per_replica, allow_none=True)
        _positive_int("experimental_host_call_every_n_steps", experimental_host_call_every_n_steps)
        for name, value in (
            ("per_host_input_for_training", per_host_input_for_training),
            ("eval_training_input_configuration", eval_training_input_configuration),
        ):
            if value not in _PIPELINES:
                raise NpuArgumentError(
                    f"TPUConfig: {name} must be True, False or an InputPipelineConfig value (1..5), given: {value!r}"
                )
        if initial_infeed_sleep_secs is not None and initial_infeed_sleep_secs <= 0:
            raise NpuArgumentError(
                f"TPUConfig: initial_infeed_sleep_secs must be positive, given: {initial_infeed_sleep_secs!r}"
            )
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
      evaluation_master, master: the TPU master addresses, kept (a run here is local whatever they say).
      cluster: a ``TPUClusterResolver``, kept.
      **kwargs: the arguments of ``tf.estimator.RunConfig``.
    Raises:
      TypeError: ``tpu_config`` is not a ``TPUConfig``.
      ValueError: a ``tf.estimator.RunConfig`` argument is invalid.
    """

    def __init__(self, tpu_config=None, evaluation_master=None, master=None, cluster=None, **kwargs):
        super().__init__(**kwargs)
        self._tpu_config = _checked_tpu_config(tpu_config)
        self._tpu_master = master or ""
        self._tpu_evaluation_master = evaluation_master if evaluation_master is not None else self._tpu_master
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
