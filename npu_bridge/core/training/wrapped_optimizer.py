"""The base of npu_bridge's TF1 optimizer wrappers (distributed, loss scaling): an optimizer around another."""

import tensorflow as tf


class WrappedOptimizer(tf.compat.v1.train.Optimizer):
    """A ``tf.compat.v1.train.Optimizer`` that wraps another: its slots and variables are the wrapped one's, and
    attributes it lacks (learning rate, ...) are read from the wrapped one, as upstream's wrappers do.

    Args:
      optimizer: the optimizer to wrap.
      name: this optimizer's name.
    """

    def __init__(self, optimizer, name):
        super().__init__(use_locking=False, name=name)
        self._optimizer = optimizer

    def get_slot(self, var, name):
        """The wrapped optimizer's slot ``name`` of ``var``."""
        return self._optimizer.get_slot(var, name)

    def get_slot_names(self):
        """The wrapped optimizer's slot names."""
        return self._optimizer.get_slot_names()

    def variables(self):
        """The wrapped optimizer's variables."""
        return self._optimizer.variables()

    def __getattr__(self, name):
        # Only reached for names the wrapper lacks.
        if name.startswith("__") or name == "_optimizer":
            raise AttributeError(name)
        return getattr(self._optimizer, name)
