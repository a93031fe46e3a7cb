"""Session run hooks of upstream's ``npu_hook`` module (the collective broadcast hook is the collectives').

With ``iterations_per_loop`` N > 1 one ``run`` performs N steps; hooks see one run and the fetched values of
its last step.
"""

import os
import sys
import threading

import tensorflow as tf

from npu_bridge.core.runtime import arg_checks, log
from npu_bridge.core.runtime.errors import NpuArgumentError, OutfeedError
from npu_bridge.core.session import system_ops
from npu_bridge.core.training import iteration_loop, outfeed

v1 = tf.compat.v1
LOG_CHANNEL = "_npu_log"
_JOIN_TIMEOUT_SECS = 60


class NPUCheckpointSaverHook(v1.train.CheckpointSaverHook):
    """A ``CheckpointSaverHook`` that also logs the global step after every run (at INFO)."""

    def after_run(self, run_context, run_values):
        log.logger.info("global_step: %s", run_values.results)
        super().after_run(run_context, run_values)


class NPUOutputTensorHook(v1.train.SessionRunHook):
    """Collects tensor values every run and hands them to ``output_fn`` every N runs and at the end.

    Args:
      tensors: dict of name -> Tensor (a list is keyed by tensor name).
      dependencies: ops that must run before the tensors are read.
      output_fn: called with a list of {name: value} dicts, one per run; None logs them at INFO.
      output_every_n_steps: N; 0 outputs only at the end (upstream divides by zero there).
    Raises:
      ValueError: ``output_every_n_steps`` is negative or not an int.
    """

    def __init__(self, tensors, dependencies=None, output_fn=None, output_every_n_steps=0):
        arg_checks.check_nonnegative_integer(output_every_n_steps, "output_every_n_steps")
        self._tensors = tensors if isinstance(tensors, dict) else {t.name: t for t in tensors}
        self._dependencies = list(dependencies or [])
        self._output_fn = output_fn or (lambda values: log.logger.info("NPUOutputTensorHook: %s", values))
        self._every = output_every_n_steps
        self._values = []
        self._runs = 0

    def begin(self):
        with tf.control_dependencies(self._dependencies):
            self._fetches = {name: tf.identity(tensor) for name, tensor in self._tensors.items()}

    def before_run(self, run_context):
        return v1.train.SessionRunArgs(self._fetches)

    def after_run(self, run_context, run_values):
        self._values.append(run_values.results)
        self._runs += 1
        if self._every and self._runs % self._every == 0:
            self._flush()

    def end(self, session):
        self._flush()

    def _flush(self):
        if self._values:
            values, self._values = self._values, []
            self._output_fn(values)


class NPUShutDownHook(v1.train.SessionRunHook):
    """Shuts the NPU system down when the session ends (``npu_ops.shutdown_system``).

    Args:
      scaffold: accepted for upstream compatibility; not needed here.
    """

    def __init__(self, scaffold=None):
        del scaffold

    def begin(self):
        self._shutdown = system_ops.shutdown_system()

    def end(self, session):
        session.run(self._shutdown)


class SetIterationsVarHook(v1.train.SessionRunHook):
    """Loads the iterations_per_loop variables after the session is created (``util.IterationPerLoop``).

    Args:
      iterations_per_loop: N, which must equal the session's ``iterations_per_loop`` option.
    Raises:
      TypeError, ValueError: N is not a positive int.
    """

    def __init__(self, iterations_per_loop=None):
        arg_checks.check_positive_integer(iterations_per_loop, "iterations_per_loop")
        self._iterations_per_loop = iterations_per_loop

    def begin(self):
        iteration_loop.loop_variables()

    def after_create_session(self, session, coord):
        iteration_loop.IterationPerLoop().load_iteration_per_loop_var(session, self._iterations_per_loop)


class TellMeStepOrLossHook(v1.train.SessionRunHook):
    """Publishes the training progress as STEP_NOW / TOTAL_STEP / LOSS_NOW / TARGET_LOSS after each run.

    Upstream's accelerated-training mode reads these variables; here they are set for scripts and tools that
    read them. ``step`` and ``loss`` may be tensors (fetched every run) or numbers.

    Raises:
      ValueError: neither ``step`` nor ``loss`` is given.
    """

    def __init__(self, step=None, total_step=None, loss=None, final_loss=None):
        if step is None and loss is None:
            raise NpuArgumentError("TellMeStepOrLossHook needs step (with total_step) or loss (with final_loss)")
        self._values = {"STEP_NOW": step, "TOTAL_STEP": total_step, "LOSS_NOW": loss, "TARGET_LOSS": final_loss}

    def before_run(self, run_context):
        return v1.train.SessionRunArgs(
            {name: value for name, value in self._values.items() if isinstance(value, (tf.Tensor, tf.Variable))}
        )

    def after_run(self, run_context, run_values):
        for name, value in self._values.items():
            value = run_values.results.get(name, value)
            if value is not None:
                os.environ[name] = str(value)


class NPUInfeedOutfeedSessionHook(v1.train.SessionRunHook):
    """Runs ``dequeue_ops`` in a host thread until the channel ``channel_name`` is closed at the end.

    Used for ``NPUEstimatorSpec(host_call=...)``: the train step enqueues, the host runs the host_call ops
    on every element. Nothing is lost: the end of the session closes the channel, and the thread drains it.
    """

    def __init__(self, dequeue_ops, channel_name):
        self._dequeue_ops = dequeue_ops
        self._channel_name = channel_name
        self._thread = None
        self._error = None

    def begin(self):
        self._stop = outfeed.stop_outfeed_dequeue_op(self._channel_name)

    def after_create_session(self, session, coord):
        self._thread = threading.Thread(
            target=self._drain, args=(session,), daemon=True, name=f"npu-outfeed-{self._channel_name}"
        )
        self._thread.start()

    def _drain(self, session):
        while True:
            try:
                self._handle(session.run(self._dequeue_ops))
            except (tf.errors.OutOfRangeError, tf.errors.CancelledError):
                return
            except Exception as e:  # reported by end()
                self._error = e
                return

    def _handle(self, values):
        """Called with the results of each run of the dequeue ops."""

    def end(self, session):
        session.run(self._stop)
        if self._thread is None:
            return
        self._thread.join(_JOIN_TIMEOUT_SECS)
        if self._thread.is_alive():
            raise OutfeedError(
                f"outfeed channel {self._channel_name!r}: the host thread did not finish within "
                f"{_JOIN_TIMEOUT_SECS} s after the channel was closed"
            )
        if self._error is not None:
            raise OutfeedError(
                f"outfeed channel {self._channel_name!r}: the host ops failed: {self._error}"
            ) from self._error


class NPULogOutfeedSessionHook(NPUInfeedOutfeedSessionHook):
    """Writes the strings sent to the ``_npu_log`` channel to ``output_stream`` (device-side prints)."""

    def __init__(self, output_stream=None):
        super().__init__(None, LOG_CHANNEL)
        self._stream = output_stream or sys.stderr

    def begin(self):
        self._dequeue_ops = outfeed.outfeed_dequeue_op(LOG_CHANNEL, [tf.string], [tf.TensorShape([])])
        super().begin()

    def _handle(self, values):
        self._stream.write(tf.compat.as_text(values[0]) + "\n")
        self._stream.flush()
