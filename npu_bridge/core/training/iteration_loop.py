"""iterations_per_loop: one ``sess.run`` of the IterationOp performs N training steps, as on the NPU.

``IterationPerLoop.create_iteration_per_loop_var(train_op)`` returns the *IterationOp*, a ``tf.group`` of the
train op named "IterationOp" (as upstream), marked with the attribute ``_npu_iteration_op``. When a run of a
session whose NpuOptimizer option ``iterations_per_loop`` is N > 1 fetches it, the NpuOptimizer Grappler pass
(``optimizers/passes/iterations_loop_pass.cc``) wraps the work of that run in a TensorFlow while loop of N steps: the
input pipeline advances N batches, the global step N times, and fetched tensors return the last step's values.

The IterationOp also depends on a guard op that fails when it runs, i.e. when no loop was built (the session
is not an NPU session, its ``iterations_per_loop`` is 1, or the pass could not build the loop and says why).
So a run never silently performs one step where N were asked for.

The variables upstream keeps under ``npu_runconfig/`` (``iterations_per_loop`` holding N - 1, ``loop_cond``,
``one``, ``zero``) exist and are loaded as upstream does; the loop count itself comes from the session option,
which must equal the loaded value (checked when loading).
"""

import tensorflow as tf
from tensorflow.core.framework import attr_value_pb2

from npu_bridge.core.options import parse as option_parse
from npu_bridge.core.plan.pass_contract import ITERATION_OP_ATTR
from npu_bridge.core.runtime import arg_checks, native_library
from npu_bridge.core.runtime.errors import NpuArgumentError, NpuOptionError

ITERATION_OP_NAME = "IterationOp"
VARIABLE_SCOPE = "npu_runconfig"
_LOOP_VARIABLES = ("iterations_per_loop", "loop_cond", "one", "zero")
_GUARD_MESSAGE = (
    "IterationOp '{name}' performs iterations_per_loop training steps per sess.run, but no loop was built "
    "for this run: run it in a session whose NpuOptimizer config sets iterations_per_loop > 1 (the value "
    "given to util.set_iteration_per_loop / SetIterationsVarHook), with Grappler enabled, and fetch the "
    "IterationOp itself (not an op that depends on it)"
)


def create_or_get_var(var_name, graph=None):
    """Returns the local int64 resource variable ``npu_runconfig/<var_name>``, creating it if needed.

    Such variables are not saved in checkpoints, as upstream's.

    Args:
      var_name: the variable's name inside ``npu_runconfig``.
      graph: the graph (default: the default graph).
    Returns:
      The variable.
    """
    graph = graph or tf.compat.v1.get_default_graph()
    for var in graph.get_collection(tf.compat.v1.GraphKeys.LOCAL_VARIABLES):
        if var.op.name == f"{VARIABLE_SCOPE}/{var_name}":
            return var
    with (
        graph.as_default(),
        graph.control_dependencies(None),
        graph.name_scope(None),
        tf.compat.v1.variable_scope(VARIABLE_SCOPE, reuse=tf.compat.v1.AUTO_REUSE),
    ):
        return tf.compat.v1.get_variable(
            var_name,
            shape=[],
            dtype=tf.int64,
            initializer=tf.compat.v1.zeros_initializer(),
            trainable=False,
            collections=[tf.compat.v1.GraphKeys.LOCAL_VARIABLES],
            use_resource=True,
        )


def loop_variables(graph=None):
    """Returns upstream's ``npu_runconfig`` loop variables {name: variable}, creating missing ones.

    Args:
      graph: the graph (default: the default graph).
    Returns:
      A dict with keys "iterations_per_loop", "loop_cond", "one", "zero".
    """
    return {name: create_or_get_var(name, graph) for name in _LOOP_VARIABLES}


def _session_options(sess):
    """The validated NpuOptions of ``sess`` (unwrapping MonitoredSession layers); None if not bridged."""
    seen = 0
    while sess is not None and seen < 10:
        options = getattr(sess, option_parse.SESSION_ATTRIBUTE, None)
        if options is not None:
            return options
        sess = getattr(sess, "_sess", None)
        seen += 1
    return None


def check_session(sess, iterations_per_loop, source):
    """Checks that ``sess`` runs IterationOps with ``iterations_per_loop`` steps.

    Args:
      sess: a session (or a MonitoredSession).
      iterations_per_loop: the number of steps the caller expects per run.
      source: the calling API, named in errors.
    Raises:
      NpuOptionError: the session is not an NPU session, or its ``iterations_per_loop`` option differs.
    """
    options = _session_options(sess)
    configured = options.get("iterations_per_loop") if options is not None else None
    if configured == iterations_per_loop:
        return
    where = (
        "the session's config has no NpuOptimizer entry"
        if options is None
        else f"the session's NpuOptimizer config sets iterations_per_loop={configured}"
    )
    raise NpuOptionError(
        "iterations_per_loop",
        iterations_per_loop,
        "the same value in the session config and in the call",
        f"{source} was given iterations_per_loop={iterations_per_loop} but {where}; both must match, as upstream "
        "requires (set custom_op.parameter_map['iterations_per_loop'].i, or use "
        "NPURunConfig(iterations_per_loop=...))",
    )


class IterationPerLoop:
    """Upstream's two-phase iterations_per_loop API (build the op before the session, load after)."""

    def create_iteration_per_loop_var(self, train_op):
        """Creates the loop variables and returns the IterationOp for ``train_op``.

        Call it while building the graph, before the session is created (graphs of MonitoredSession are
        finalized).

        Args:
          train_op: the training ``tf.Operation``.
        Returns:
          The IterationOp (a ``tf.Operation``); fetch it instead of ``train_op``.
        Raises:
          ValueError: ``train_op`` is not a ``tf.Operation``.
        """
        if not isinstance(train_op, tf.Operation):
            raise NpuArgumentError(f"train_op must be a tf.Operation, got {type(train_op).__name__}: {train_op!r}")
        graph = train_op.graph
        loop_variables(graph)
        with graph.as_default():
            iteration_op = tf.group(train_op, name=ITERATION_OP_NAME)
        # No inputs at all: when no loop is built, every source node of the run is made to wait for the guard.
        with graph.as_default(), graph.control_dependencies(None):
            guard = native_library.ops().npu_iterations_loop_guard(
                message=_GUARD_MESSAGE.format(name=iteration_op.name), name=f"{iteration_op.name}Guard"
            )
        iteration_op._add_control_input(guard)
        iteration_op._set_attr(ITERATION_OP_ATTR, attr_value_pb2.AttrValue(b=True))
        return iteration_op

    def load_iteration_per_loop_var(self, sess, iterations_per_loop=1):
        """Loads the loop variables into ``sess`` (``iterations_per_loop`` holds N - 1, as upstream).

        Args:
          sess: the session (or MonitoredSession) that will run the IterationOp.
          iterations_per_loop: N, the training steps per run; must equal the session's option.
        Raises:
          TypeError, ValueError: N is not a positive int.
          NpuOptionError: the session's ``iterations_per_loop`` option is not N.
        """
        arg_checks.check_positive_integer(iterations_per_loop, "iterations_per_loop")
        check_session(sess, iterations_per_loop, "load_iteration_per_loop_var")
        values = {"iterations_per_loop": iterations_per_loop - 1, "loop_cond": 0, "one": 1, "zero": 0}
        for name, var in loop_variables(sess.graph).items():
            # What Variable.load does, without its deprecation warning: no new ops (the graph may be final).
            sess.run(var.initializer, {var.initializer.inputs[1]: values[name]})


def set_iteration_per_loop(sess, train_op, iterations_per_loop=1):
    """Makes each run of the returned op perform ``iterations_per_loop`` training steps.

    Args:
      sess: the session that will run the op; its NpuOptimizer ``iterations_per_loop`` must be the same.
      train_op: the training ``tf.Operation``.
      iterations_per_loop: N >= 1; 1 returns ``train_op`` unchanged.
    Returns:
      ``train_op`` when N is 1, else the IterationOp.
    Raises:
      TypeError, ValueError: N is not a positive int, or ``train_op`` is not a ``tf.Operation``.
      NpuOptionError: the session's ``iterations_per_loop`` option is not N.
    """
    arg_checks.check_positive_integer(iterations_per_loop, "iterations_per_loop")
    if iterations_per_loop == 1:
        return train_op
    check_session(sess, iterations_per_loop, "set_iteration_per_loop")
    loop = IterationPerLoop()
    iteration_op = loop.create_iteration_per_loop_var(train_op)
    loop.load_iteration_per_loop_var(sess, iterations_per_loop)
    return iteration_op
