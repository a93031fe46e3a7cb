"""The determinism step: ``deterministic=1`` -> TensorFlow op determinism (process-wide, like the init option it
mirrors)."""

import logging

from npu_bridge.core.runtime import log


def setup(plan):
    """Turns TensorFlow op determinism on when the session asks for ``deterministic=1``."""
    if plan.options.get("deterministic") == 1:
        import tensorflow as tf

        tf.config.experimental.enable_op_determinism()
        log.once(
            "deterministic-on", logging.INFO, "deterministic=1: TensorFlow op determinism enabled for this process"
        )
