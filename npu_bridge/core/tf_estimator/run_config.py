"""``tf.estimator.RunConfig``: where and how often an Estimator saves, and which session config it uses; ``TaskType``,
the names of a cluster's task types."""

import copy
import os

import tensorflow as tf

from npu_bridge.core.runtime import bounded_files
from npu_bridge.core.runtime.errors import NpuArgumentError, NpuArgumentTypeError, shortened

_USE_DEFAULT = object()
DEFAULT_SAVE_CHECKPOINTS_SECS = 600

# Properties that ``replace`` may change (TensorFlow's list).
_REPLACEABLE = (
    "model_dir",
    "tf_random_seed",
    "save_summary_steps",
    "save_checkpoints_steps",
    "save_checkpoints_secs",
    "session_config",
    "keep_checkpoint_max",
    "keep_checkpoint_every_n_hours",
    "log_step_count_steps",
    "train_distribute",
    "device_fn",
    "protocol",
    "eval_distribute",
    "experimental_distribute",
    "experimental_max_worker_delay_secs",
    "session_creation_timeout_secs",
    "checkpoint_save_graph_def",
)


class TaskType:
    """The task types of a cluster (``tf.estimator.RunConfig.task_type``), as ``run_config.TaskType`` named them."""

    MASTER = "master"
    PS = "ps"
    WORKER = "worker"
    CHIEF = "chief"
    EVALUATOR = "evaluator"


def _non_negative(name, value):
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0):
        raise NpuArgumentError(f"{name} must be a number >= 0 or None, given: {value!r}")


_TF_CONFIG_ALLOWED = (
    'Allowed: a JSON object such as {"cluster": {"worker": ["host:port", ...], ...}, '
    '"task": {"type": "worker", "index": 0}} (both parts optional)'
)


def _cluster_from_tf_config():
    """Returns (``tf.train.ClusterSpec``, task type, task id) from TF_CONFIG; an empty cluster, "worker", 0
    without it.

    Raises:
      NpuArgumentError: TF_CONFIG is not such a JSON object (see ``_TF_CONFIG_ALLOWED``).
    """
    text = os.environ.get("TF_CONFIG", "")
    if not text:
        return tf.train.ClusterSpec({}), "worker", 0

    def bad(problem):
        return NpuArgumentError(f"TF_CONFIG has invalid value {shortened(text)}: {problem}. {_TF_CONFIG_ALLOWED}")

    try:
        tf_config = bounded_files.parse_json(text)
    except ValueError as e:
        raise bad(f"it is not valid JSON ({e})") from None
    if not isinstance(tf_config, dict):
        raise bad(f"it holds a JSON {type(tf_config).__name__}, not an object")
    task, cluster = tf_config.get("task", {}), tf_config.get("cluster", {}) or {}
    if not isinstance(task, dict):
        raise bad('"task" must be an object')
    if not isinstance(cluster, dict):
        raise bad('"cluster" must be an object mapping job names to lists of addresses')
    task_type, task_id = task.get("type", "worker"), task.get("index", 0)
    if not isinstance(task_type, str):
        raise bad('"task"."type" must be a string such as "worker"')
    if isinstance(task_id, bool) or not isinstance(task_id, int) or task_id < 0:
        raise bad('"task"."index" must be an integer >= 0')
    try:
        cluster_spec = tf.train.ClusterSpec(cluster)
    except (TypeError, ValueError) as e:
        raise bad(f'"cluster" is not a cluster: {e}') from None
    return cluster_spec, task_type, task_id


class RunConfig:
    """Configuration of an Estimator run (the arguments and defaults of TensorFlow's RunConfig).

    Without ``save_checkpoints_steps`` and ``save_checkpoints_secs`` a checkpoint is saved every 600 seconds;
    setting both raises. Only local (single-process) training runs here; ``TF_CONFIG`` is read so the
    cluster properties answer as TensorFlow's do.

    Raises:
      ValueError: a negative interval or count, both checkpoint intervals set, a bad ``TF_CONFIG``.
      TypeError: ``session_config`` is not a ConfigProto.
    """

    def __init__(
        self,
        model_dir=None,
        tf_random_seed=None,
        save_summary_steps=100,
        save_checkpoints_steps=_USE_DEFAULT,
        save_checkpoints_secs=_USE_DEFAULT,
        session_config=None,
        keep_checkpoint_max=5,
        keep_checkpoint_every_n_hours=10000,
        log_step_count_steps=100,
        train_distribute=None,
        device_fn=None,
        protocol=None,
        eval_distribute=None,
        experimental_distribute=None,
        experimental_max_worker_delay_secs=None,
        session_creation_timeout_secs=7200,
        checkpoint_save_graph_def=True,
    ):
        if save_checkpoints_steps is _USE_DEFAULT and save_checkpoints_secs is _USE_DEFAULT:
            save_checkpoints_steps, save_checkpoints_secs = None, DEFAULT_SAVE_CHECKPOINTS_SECS
        elif save_checkpoints_steps is _USE_DEFAULT:
            save_checkpoints_steps = None
        elif save_checkpoints_secs is _USE_DEFAULT:
            save_checkpoints_secs = None
        if save_checkpoints_steps and save_checkpoints_secs:
            raise NpuArgumentError(
                "Can not specify both save_checkpoints_steps and save_checkpoints_secs "
                f"(given {save_checkpoints_steps} and {save_checkpoints_secs})"
            )
        for name, value in (
            ("save_summary_steps", save_summary_steps),
            ("save_checkpoints_steps", save_checkpoints_steps),
            ("save_checkpoints_secs", save_checkpoints_secs),
            ("keep_checkpoint_max", keep_checkpoint_max),
            ("keep_checkpoint_every_n_hours", keep_checkpoint_every_n_hours),
            ("log_step_count_steps", log_step_count_steps),
            ("session_creation_timeout_secs", session_creation_timeout_secs),
        ):
            _non_negative(name, value)
        if session_config is not None and not isinstance(session_config, tf.compat.v1.ConfigProto):
            raise NpuArgumentTypeError(f"session_config must be a tf.compat.v1.ConfigProto, given: {session_config!r}")
        self._model_dir = os.fspath(model_dir) if model_dir is not None else None
        self._tf_random_seed = tf_random_seed
        self._save_summary_steps = save_summary_steps
        self._save_checkpoints_steps = save_checkpoints_steps
        self._save_checkpoints_secs = save_checkpoints_secs
        self._session_config = session_config
        self._keep_checkpoint_max = keep_checkpoint_max
        self._keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self._log_step_count_steps = log_step_count_steps
        self._train_distribute = train_distribute
        self._device_fn = device_fn
        self._protocol = protocol
        self._eval_distribute = eval_distribute
        self._experimental_distribute = experimental_distribute
        self._experimental_max_worker_delay_secs = experimental_max_worker_delay_secs
        self._session_creation_timeout_secs = session_creation_timeout_secs
        self._checkpoint_save_graph_def = checkpoint_save_graph_def
        self._cluster_spec, self._task_type, self._task_id = _cluster_from_tf_config()

    def replace(self, **kwargs):
        """Returns a copy with some properties replaced.

        Raises:
          ValueError: a name is not a replaceable property, or both save_checkpoints_steps and
            save_checkpoints_secs are given values.
        """
        unknown = sorted(set(kwargs) - set(_REPLACEABLE))
        if unknown:
            raise NpuArgumentError(f"RunConfig.replace: {unknown} cannot be replaced; allowed: {list(_REPLACEABLE)}")
        new = copy.copy(self)
        for name, value in kwargs.items():
            setattr(new, f"_{name}", os.fspath(value) if name == "model_dir" and value is not None else value)
        # Replacing one way of timing checkpoints with a value turns the other off, as TensorFlow 1.15 did
        # (RunConfig().replace(save_checkpoints_steps=100) drops the default 600 seconds); only both is an error.
        steps, secs = kwargs.get("save_checkpoints_steps"), kwargs.get("save_checkpoints_secs")
        if steps is not None and secs is not None:
            raise NpuArgumentError(
                f"RunConfig.replace: Can not specify both save_checkpoints_steps ({steps!r}) and "
                f"save_checkpoints_secs ({secs!r}); give one of them"
            )
        if steps is not None:
            new._save_checkpoints_secs = None
        elif secs is not None:
            new._save_checkpoints_steps = None
        return new

    model_dir = property(lambda self: self._model_dir)
    tf_random_seed = property(lambda self: self._tf_random_seed)
    save_summary_steps = property(lambda self: self._save_summary_steps)
    save_checkpoints_steps = property(lambda self: self._save_checkpoints_steps)
    save_checkpoints_secs = property(lambda self: self._save_checkpoints_secs)
    session_config = property(lambda self: self._session_config)
    keep_checkpoint_max = property(lambda self: self._keep_checkpoint_max)
    keep_checkpoint_every_n_hours = property(lambda self: self._keep_checkpoint_every_n_hours)
    log_step_count_steps = property(lambda self: self._log_step_count_steps)
    train_distribute = property(lambda self: self._train_distribute)
    eval_distribute = property(lambda self: self._eval_distribute)
    experimental_distribute = property(lambda self: self._experimental_distribute)
    experimental_max_worker_delay_secs = property(lambda self: self._experimental_max_worker_delay_secs)
    device_fn = property(lambda self: self._device_fn)
    protocol = property(lambda self: self._protocol)
    session_creation_timeout_secs = property(lambda self: self._session_creation_timeout_secs)
    checkpoint_save_graph_def = property(lambda self: self._checkpoint_save_graph_def)
    cluster_spec = property(lambda self: self._cluster_spec)
    task_type = property(lambda self: self._task_type)
    task_id = property(lambda self: self._task_id)
    master = property(lambda self: "")
    evaluation_master = property(lambda self: "")
    service = property(lambda self: None)
    global_id_in_cluster = property(lambda self: self._task_id)

    @property
    def is_chief(self):
        """True for the chief (the only task of a local run)."""
        jobs = self._cluster_spec.jobs
        if "chief" in jobs:
            return self._task_type == "chief"
        return self._task_type in ("worker", "master") and self._task_id == 0

    @property
    def num_ps_replicas(self):
        """Number of parameter-server tasks in TF_CONFIG."""
        return self._cluster_spec.num_tasks("ps") if "ps" in self._cluster_spec.jobs else 0

    @property
    def num_worker_replicas(self):
        """Number of worker (and chief) tasks; 1 for a local run."""
        jobs = self._cluster_spec.jobs
        count = sum(self._cluster_spec.num_tasks(job) for job in ("chief", "master", "worker") if job in jobs)
        return count or 1

    def __repr__(self):
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in _REPLACEABLE[:9])
        return f"{type(self).__name__}({fields})"
