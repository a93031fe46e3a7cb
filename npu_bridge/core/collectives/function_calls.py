"""Collective failures in TF2 function calls become ``CollectiveError``s, as in TF1 session runs.

A TF1 session's run hook (``npu_bridge.core.session.steps.collectives``) explains a failed collective; TF2 code runs
its collectives in eager ``tf.function`` calls, which have no run hooks. So in a world of several ranks whose eager
context joined the job, ``explain_failures`` wraps ``Function.__call__`` (the class behind ``tf.function``, the
script's steps and Keras' ``train_function`` alike): a TensorFlow error a collective raised in a call is re-raised
as the ``CollectiveError`` TF1 would give (``failures``), naming the rank to blame, with TensorFlow's error as its
cause. Other errors, and calls traced into a graph, pass unchanged.
"""

import functools
import re
import threading

_NODE = re.compile(r"\{\{node ([^}]+)\}\}")
_lock = threading.Lock()
_state = {"runtime": None, "timeout": None}


def explain_failures(runtime, timeout):
    """Explains the collective failures of every function call from now on (once per process).

    Args:
      runtime: the rank's ``server.Runtime``.
      timeout: the collective timeout in seconds (what a call's collectives keep as their bound).
    """
    from tensorflow.python.eager.polymorphic_function import polymorphic_function

    with _lock:
        installed = _state["runtime"] is not None
        _state["runtime"], _state["timeout"] = runtime, timeout
        if not installed:
            polymorphic_function.Function.__call__ = _wrap(polymorphic_function.Function.__call__)


def _wrap(original):
    from npu_bridge.core.collectives import failures

    @functools.wraps(original)
    def explained_call(function, *args, **kwargs):
        try:
            return original(function, *args, **kwargs)
        except Exception as error:
            if not failures.is_collective_failure(error):
                raise
            node = _NODE.search(error.message or "")
            collective = f"{node.group(1) if node else 'a collective'} in tf.function {function.__name__!r}"
            raise failures.replacement(error, collective, _state["runtime"], _state["timeout"]) from error

    return explained_call
