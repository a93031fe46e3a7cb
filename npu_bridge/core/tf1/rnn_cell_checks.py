"""``_like_rnncell``: the private check of TensorFlow 1.x's RNN code that TF1-era models import
(``from tensorflow.python.ops.rnn_cell_impl import _like_rnncell``); TensorFlow 2.21 no longer has it.

Kept apart from the cells so that ``aliases`` can add it to ``rnn_cell_impl`` without importing Keras.
"""


def _like_rnncell(cell):
    """Whether ``cell`` behaves like an RNNCell, as TensorFlow 1.x decided it.

    Args:
      cell: any object.
    Returns:
      True when it has ``output_size``, ``state_size`` and ``zero_state`` and is callable.
    """
    return all(hasattr(cell, name) for name in ("output_size", "state_size", "zero_state")) and callable(cell)
