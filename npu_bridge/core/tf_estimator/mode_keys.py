"""``tf.estimator.ModeKeys``: the three modes a model_fn is called in."""


class ModeKeys:
    """Standard names for Estimator modes (the values are TensorFlow's)."""

    TRAIN = "train"
    EVAL = "eval"
    PREDICT = "infer"

    ALL = (TRAIN, EVAL, PREDICT)
