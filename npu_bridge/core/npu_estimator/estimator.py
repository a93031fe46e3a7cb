"""``NPUEstimator`` and ``NPUEstimatorSpec``: the Estimator of Ascend scripts.

On top of ``tf.estimator.Estimator`` (``npu_bridge.core.tf_estimator`` on TensorFlow 2.21), NPUEstimator:
  * requires an ``NPURunConfig`` and the job information upstream requires (``JOB_ID`` or a job start file);
  * runs every session with the config's NpuOptimizer options (one more NpuOptimizer entry, as upstream);
  * with ``iterations_per_loop`` N > 1 trains N steps per ``sess.run`` (the IterationOp, see
    ``npu_bridge.core.training.iteration_loop``) and tells the step-counting hooks so;
  * checkpoints with ``NPUCheckpointSaverHook`` (a training hook, run after the script's hooks) and ``NPUSaver``;
  * prepends ``NPUBroadcastGlobalVariablesHook(root_rank=0)`` when the job has several ranks (not in
    ``horovod_mode``);
  * sends ``NPUEstimatorSpec.host_call`` tensors through an outfeed channel to a host thread every step.
"""

import os
import random
import string

import tensorflow as tf

from npu_bridge.core.npu_estimator import hooks as npu_hooks
from npu_bridge.core.npu_estimator import job_info
from npu_bridge.core.npu_estimator.run_config import NPURunConfig
from npu_bridge.core.npu_estimator.saver import NPUSaver
from npu_bridge.core.runtime import log
from npu_bridge.core.runtime.errors import NpuArgumentError, NpuUsageError, shortened
from npu_bridge.core.tf_estimator import calling
from npu_bridge.core.tf_estimator.estimator import Estimator, default_session_config, no_check_override
from npu_bridge.core.tf_estimator.mode_keys import ModeKeys
from npu_bridge.core.tf_estimator.spec import EstimatorSpec
from npu_bridge.core.training import iteration_loop, outfeed
from npu_bridge.core.world import world

HOST_CALL_CHANNEL = "_npu_host_call"


def _checkpoint_source(path, source):
    """``path`` (a warm-start checkpoint from the job information or the environment), None when empty.

    Raises:
      NpuArgumentError: the path is not UTF-8 text (TensorFlow's file functions take UTF-8 paths).
    """
    if not path:
        return None
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        raise NpuArgumentError(
            f"{source} has invalid value {shortened(path)}: a checkpoint path must be UTF-8 text, as TensorFlow's "
            "file functions need it"
        ) from None
    return path


def default_model_dir():
    """A new ``./model_dir_<10 random characters>`` path, upstream's choice when no model_dir is given."""
    suffix = "".join(random.choice(string.ascii_lowercase + string.digits) for _ in range(10))
    return os.path.join(os.getcwd(), f"model_dir_{suffix}")


class NPUEstimatorSpec(EstimatorSpec):
    """An ``EstimatorSpec`` with ``host_call``: (fn, tensors) run on the host with every training step's values.

    ``tensors`` is a list/tuple (``fn(*values)``) or a dict (``fn(**values)``); ``fn`` is called once while the
    graph is built, with the dequeued tensors, and the ops it returns run on the host for every step.

    Raises:
      ValueError: ``host_call`` is not a (callable, list/tuple/dict) pair.
      RuntimeError: ``fn`` does not take as many arguments as there are tensors.
    """

    def __new__(
        cls,
        mode,
        predictions=None,
        loss=None,
        train_op=None,
        eval_metric_ops=None,
        export_outputs=None,
        training_chief_hooks=None,
        training_hooks=None,
        scaffold=None,
        evaluation_hooks=None,
        prediction_hooks=None,
        host_call=None,
    ):
        spec = super().__new__(
            cls,
            mode,
            predictions=predictions,
            loss=loss,
            train_op=train_op,
            eval_metric_ops=eval_metric_ops,
            export_outputs=export_outputs,
            training_chief_hooks=training_chief_hooks,
            training_hooks=training_hooks,
            scaffold=scaffold,
            evaluation_hooks=evaluation_hooks,
            prediction_hooks=prediction_hooks,
        )
        spec._host_call = _checked_host_call(host_call)
        return spec

    host_call = property(lambda self: self._host_call)

    def _replace(self, **kwargs):
        host_call = kwargs.pop("host_call", self._host_call)
        fields = self._asdict()
        fields.update(kwargs)
        return type(self)(host_call=host_call, **fields)


def _checked_host_call(host_call):
    if host_call is None:
        return None
    if not isinstance(host_call, (tuple, list)):
        raise NpuArgumentError(f"host_call should be tuple or list, got {type(host_call).__name__}")
    if len(host_call) != 2:
        raise NpuArgumentError(f"host_call should have two elements, got {len(host_call)}.")
    fn, tensors = host_call
    if not callable(fn):
        raise NpuArgumentError(f"host_call[0] should be callable, got {fn!r}.")
    if not isinstance(tensors, (tuple, list, dict)):
        raise NpuArgumentError(f"host_call[1] should be tuple or list or dict, got {type(tensors).__name__}")
    if not isinstance(tensors, dict):
        args = calling.fn_args(fn)
        if len(args) != len(tensors):
            raise NpuUsageError(
                f"In host_call, there is a mismatch between the number of arguments of fn "
                f"({len(args)}: {list(args)}) and the number of tensors ({len(tensors)})"
            )
    return tuple(host_call)


class NPUEstimator(Estimator):
    """The Estimator of Ascend scripts (see the module docstring).

    Args:
      model_fn, params, warm_start_from: as ``tf.estimator.Estimator``; without ``warm_start_from`` the job's
        local checkpoint directory (job start file or LOCAL_CHECKPOINT_DIR), else RESTORE_FROM, is used.
      model_dir: as ``tf.estimator.Estimator``; without it and ``config.model_dir`` a new
        ``./model_dir_<random>`` directory, as upstream.
      config: an ``NPURunConfig`` (required).
      job_start_file: a job information JSON file; "" reads the environment (``JOB_ID`` required).
    Raises:
      ValueError: ``config`` is not an NPURunConfig, the job information is missing, or as ``Estimator``.
    """

    def __init__(
        self, model_fn=None, model_dir=None, config=None, params=None, job_start_file="", warm_start_from=None
    ):
        if not isinstance(config, NPURunConfig):
            raise NpuArgumentError(
                f"`config` must be provided with type `NPUConfigs` (NPURunConfig), got {type(config).__name__}"
            )
        self._job_info = job_info.NPUBasics(job_start_file).jobinfo
        if not model_dir and not config.model_dir:
            model_dir = default_model_dir()
            log.logger.warning("NPUEstimator: no model_dir given; using %s", model_dir)
        if warm_start_from is None:
            warm_start_from = _checkpoint_source(self._job_info.local_checkpoint_dir, "LOCAL_CHECKPOINT_DIR") or (
                _checkpoint_source(os.environ.get("RESTORE_FROM"), "RESTORE_FROM")
            )
        calling.verify_model_fn_args(model_fn, params)
        self._user_model_fn = model_fn
        with no_check_override():
            super().__init__(
                self._npu_model_fn, model_dir=model_dir, config=config, params=params, warm_start_from=warm_start_from
            )
        if config.session_config is None:
            config = config.replace(session_config=default_session_config())
        self._session_config = config.npu_session_config()
        self._steps_per_run = config.iterations_per_loop

    def _npu_model_fn(self, features, labels, mode, params, config):
        spec = calling.call_model_fn(self._user_model_fn, features, labels, mode, params, config)
        if mode != ModeKeys.TRAIN:
            if getattr(spec, "host_call", None) is not None:
                log.info_once(
                    ("npu-host-call-mode", mode),
                    "NPUEstimatorSpec.host_call runs in training only; ignored in mode %r",
                    mode,
                )
            return spec
        training_hooks = list(spec.training_hooks)
        train_op = spec.train_op
        rank_size = self._job_info.rank_size
        if rank_size > 1 and not self._config.horovod_mode:
            from npu_bridge.core.training.distributed import variable_broadcast

            training_hooks.insert(
                0,
                variable_broadcast.NPUBroadcastGlobalVariablesHook(root_rank=0, index=world.rank_id_from_environment()),
            )
        if getattr(spec, "host_call", None) is not None:
            enqueue, host_hook = _host_call_ops(spec.host_call)
            train_op = tf.group(train_op, enqueue)
            training_hooks.append(host_hook)
        iterations = self._config.iterations_per_loop
        if iterations > 1:
            train_op = train_op.op if isinstance(train_op, tf.Tensor) else train_op
            train_op = iteration_loop.IterationPerLoop().create_iteration_per_loop_var(train_op)
            training_hooks.append(npu_hooks.SetIterationsVarHook(iterations))
        return EstimatorSpec(
            mode,
            predictions=spec.predictions,
            loss=spec.loss,
            train_op=train_op,
            eval_metric_ops=spec.eval_metric_ops,
            export_outputs=spec.export_outputs,
            training_chief_hooks=spec.training_chief_hooks,
            training_hooks=training_hooks,
            scaffold=spec.scaffold,
        )

    def _create_saver(self):
        return NPUSaver(
            sharded=True,
            max_to_keep=self._config.keep_checkpoint_max,
            keep_checkpoint_every_n_hours=self._config.keep_checkpoint_every_n_hours,
            defer_build=True,
            save_relative_paths=True,
        )

    # NPUEstimator's checkpoint saver is one of the training hooks, after the script's own: a script hook's
    # after_create_session sees no checkpoint of the first step on a new model_dir (ShufflenetV1's EMA restore
    # relies on it).
    _saver_after_script_hooks = True

    def _checkpoint_saver_hook(self, scaffold, listeners):
        config = self._config
        if not config.save_checkpoints_steps and not config.save_checkpoints_secs:
            return None
        hook = npu_hooks.NPUCheckpointSaverHook(
            self._model_dir,
            save_secs=config.save_checkpoints_secs,
            save_steps=config.save_checkpoints_steps,
            scaffold=scaffold,
            listeners=listeners,
        )
        hook._set_steps_per_run(self._steps_per_run)
        return hook


def _host_call_ops(host_call):
    """Returns (enqueue op for the train step, hook that runs the host_call fn on the host)."""
    fn, tensors = host_call
    names = sorted(tensors) if isinstance(tensors, dict) else None
    flat = (
        [tf.convert_to_tensor(tensors[name]) for name in names] if names else [tf.convert_to_tensor(t) for t in tensors]
    )
    enqueue = outfeed.outfeed_enqueue_op(HOST_CALL_CHANNEL, flat)
    dequeued = outfeed.outfeed_dequeue_op(HOST_CALL_CHANNEL, [t.dtype for t in flat], [t.shape for t in flat])
    result = fn(**dict(zip(names, dequeued))) if names else fn(*dequeued)
    host_ops = result if result is not None else dequeued
    return enqueue, npu_hooks.NPUInfeedOutfeedSessionHook(host_ops, HOST_CALL_CHANNEL)
