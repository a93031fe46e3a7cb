"""The base of npu_bridge's TF1 optimizer wrappers (distributed, loss scaling): an optimizer around another."""

import tensorflow as tf


def _in_current_graph(variable):
    if tf.executing_eagerly():
        return True
    return variable.graph is tf.compat.v1.get_default_graph()


class WrappedOptimizer(tf.compat.v1.train.Optimizer):
    """A ``tf.compat.v1.train.Optimizer`` that wraps another: its slots are the wrapped one's, its variables the
    wrapped one's plus those the wrapper keeps itself (``_own_variables``), and attributes it lacks (learning
    rate, ...) are read from the wrapped one, as upstream's wrappers do.

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
        """The wrapped optimizer's variables, then the wrapper's own, each once.

        tf_keras (graph mode) initializes the variables of a wrapped TF optimizer from this list, so state the
        wrapper keeps elsewhere (a loss-scale manager's) must be in it.

        Returns:
          A list of variables; like ``Optimizer.variables``, only those of the current graph.
        """
        result = list(self._optimizer.variables())
        seen = {variable.ref() for variable in result}
        for variable in self._own_variables():
            if variable.ref() not in seen and _in_current_graph(variable):
                seen.add(variable.ref())
                result.append(variable)
        return result

    def _own_variables(self):
        """Variables the wrapper keeps besides the wrapped optimizer's; subclasses that keep some override this."""
        return []

    def __getattr__(self, name):
        # Only reached for names the wrapper lacks.
        if name.startswith("__") or name == "_optimizer":
            raise AttributeError(name)
        return getattr(self._optimizer, name)
