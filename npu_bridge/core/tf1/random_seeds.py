"""Random ops without a seed under op determinism, as TensorFlow 1.15 ran them.

TensorFlow 1.15 read ``TF_DETERMINISTIC_OPS=1`` for deterministic GPU kernels only; 2.21 also refuses to build a
random op that has neither a graph nor an op seed ("Random ops require a seed to be set when determinism is
enabled"), and its kernels refuse a zero seed at run time. Ascend scripts set the variable to 1 (FasterRcnn does,
before it imports TensorFlow) and shuffle their data without a seed. In the TF1 mode such an op gets a seed drawn
at random when it is built: its values are not reproducible, as they were not in 1.15.
"""

import secrets

_REFUSAL = "Random ops require a seed to be set when determinism is enabled"
_MOST = 2**31 - 1  # seeds are int32 and 0 means none


def install(random_seed):
    """Makes ``random_seed.get_seed`` (``tensorflow.python.framework.random_seed``) draw a seed pair where
    TensorFlow 2.21 refuses a missing seed under determinism (idempotent)."""
    strict = random_seed.get_seed
    if getattr(strict, "_tf1_seeds", False):
        return

    def get_seed(op_seed):
        try:
            return strict(op_seed)
        except RuntimeError as error:
            if _REFUSAL not in str(error):
                raise
            return 1 + secrets.randbelow(_MOST), 1 + secrets.randbelow(_MOST)

    get_seed.__doc__ = strict.__doc__
    get_seed._tf1_seeds = True
    random_seed.get_seed = get_seed
