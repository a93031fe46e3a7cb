"""What the Estimator logs: TensorFlow's Estimator's messages, through TensorFlow's ``tensorflow`` logger.

Messages keep the wording of TensorFlow 1.x's Estimator ("loss = 0.5, step = 10", "global_step/sec: ...",
"Saving checkpoints for 10 into ...", "Loss for final step: 0.5.", "Saving dict for global step 10: accuracy =
0.9, global_step = 10, loss = 0.5") and go to ``tf.compat.v1.logging`` -- the ``tensorflow`` logger, which absl's
handlers also serve -- so scripts that filter or redirect TensorFlow's log see them where they did.

Verbosity (a decision of this project): TensorFlow's ``tensorflow`` logger has no level of its own until a script
sets one, so Python's default (WARNING) hides every INFO record, and a script with no logging setup would not see
its training losses or its evaluation results. TF1 Estimator scripts nearly always ran with INFO
(``tf.logging.set_verbosity(tf.logging.INFO)`` in the script, absl's ``app.run``, or a notebook). So while an
Estimator trains, evaluates or exports (``visible_info``), if nobody chose a level -- the ``tensorflow`` logger's
level is NOTSET and its effective level is above INFO -- it is set to INFO, and back to NOTSET when the outermost
such call returns. A script that sets a verbosity (``tf.compat.v1.logging.set_verbosity``,
``tf.get_logger().setLevel``) keeps exactly what it chose. ``predict`` (a generator) does not change the level.
"""

import contextlib
import logging
import threading

import tensorflow as tf

_lock = threading.Lock()
_state = {"depth": 0, "raised": False}


# Aliases, not wrappers: TensorFlow's logger reports the caller (the Estimator's module) as the record's origin.
info = tf.compat.v1.logging.info
warning = tf.compat.v1.logging.warning


def dict_to_str(values):
    """Returns ``values`` as TensorFlow's Estimator logged them: "key = value" sorted by key, joined by ", ".

    Args:
      values: dict of name -> value (bytes values are left out, as TensorFlow did).
    Returns:
      The string.
    """
    return ", ".join(f"{key} = {value!s}" for key, value in sorted(values.items()) if not isinstance(value, bytes))


@contextlib.contextmanager
def visible_info():
    """Within this context the ``tensorflow`` logger shows INFO records, unless a script chose its level.

    Nested and concurrent uses share one change: the outermost exit restores NOTSET (if the level is still
    the INFO set here).
    """
    logger = tf.get_logger()
    with _lock:
        if _state["depth"] == 0:
            _state["raised"] = logger.level == logging.NOTSET and logger.getEffectiveLevel() > logging.INFO
            if _state["raised"]:
                logger.setLevel(logging.INFO)
        _state["depth"] += 1
    try:
        yield
    finally:
        with _lock:
            _state["depth"] -= 1
            if _state["depth"] == 0 and _state["raised"]:
                _state["raised"] = False
                if logger.level == logging.INFO:
                    logger.setLevel(logging.NOTSET)
