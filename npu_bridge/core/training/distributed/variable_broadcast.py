"""Start every rank from the root's variable values: ``broadcast_global_variables``, the session hook and the
Keras callback. As upstream, they broadcast the trainable variables (the hook despite its name), and do
nothing in a world of one rank.
"""

import tensorflow as tf

from npu_bridge.core.collectives import lowering, membership, operations
from npu_bridge.core.world.groups import WORLD_GROUP


def broadcast_variables(variables, root_rank):
    """Returns an op that assigns the root rank's values to ``variables`` on every rank.

    Args:
      variables: list of variables (HCCL dtypes, fully defined shapes).
      root_rank: the world rank whose values win.
    Raises:
      ValueError: ``root_rank`` is not a rank of the world.
    """
    members = membership.resolve(WORLD_GROUP, "broadcast_global_variables")
    if members.size == 1 or not variables:
        return tf.no_op(name="broadcast_global_variables")
    operations.check_group_rank("broadcast_global_variables", "root_rank", root_rank, members)
    values = lowering.broadcast([tf.identity(v.value()) for v in variables], members, root_rank)
    return tf.group(
        *[tf.compat.v1.assign(v, value) for v, value in zip(variables, values)], name="broadcast_global_variables"
    )


def broadcast_global_variables(root_rank, index=None):  # upstream's signature
    """Returns an op that broadcasts the trainable variables of the default graph from ``root_rank``."""
    return broadcast_variables(tf.compat.v1.trainable_variables(), root_rank)


class NPUBroadcastGlobalVariablesHook(tf.compat.v1.train.SessionRunHook):
    """Broadcasts the trainable variables from ``root_rank`` once the session exists (after initialization or
    restore), so every rank starts training from the same values.

    Args:
      root_rank: the world rank whose values win (None: 0).
      index: accepted for upstream compatibility (upstream passes RANK_ID).
    """

    def __init__(self, root_rank=None, index=None):
        super().__init__()
        self._root_rank = 0 if root_rank is None else root_rank
        self._index = index
        self._op = None

    def begin(self):
        """Builds the broadcast op (nothing with a single rank)."""
        self._op = broadcast_global_variables(self._root_rank, self._index)

    def after_create_session(self, session, coord):
        """Runs the broadcast."""
        session.run(self._op)


class NPUBroadcastGlobalVariablesCallback(tf.keras.callbacks.Callback):
    """Keras callback: before the first training batch, broadcasts the model's variables from ``root_rank``."""

    def __init__(self, root_rank):
        super().__init__()
        self.root_rank = root_rank
        self.broadcast_done = False

    def on_batch_begin(self, batch, logs=None):
        """Broadcasts once, in the Keras session."""
        if self.broadcast_done:
            return
        op = broadcast_variables(self.model.weights, self.root_rank)
        tf.compat.v1.keras.backend.get_session().run(op)
        self.broadcast_done = True
