"""``hccl.split.api``: gradient split strategies for all-reduce fusion, with upstream's names.

Both functions need an initialized NPU system and raise ``NotInitializedError`` (a ``ValueError``)
before that. Semantics, defaults and precedence are described in ``npu_bridge.core.world.split_strategy``.
"""

from npu_bridge.core.runtime import system
from npu_bridge.core.world import groups, split_strategy

__all__ = ["set_split_strategy_by_idx", "set_split_strategy_by_size"]


def set_split_strategy_by_idx(idxList, group=groups.WORLD_GROUP):  # pylint: disable=invalid-name
    """Splits ``group``'s fused gradient all-reduce after the given gradient indices.

    Args:
      idxList: non-empty list of ints in [0, 2**32 - 1], strictly ascending; each is the index of the last
        gradient of a segment.
      group: the group name.
    Raises:
      NotInitializedError: the NPU system is not initialized.
      ValueError: a bad list, or no such group.
    """
    system.require_initialized("set_split_strategy_by_idx")
    split_strategy.set_split_strategy_by_idx(idxList, group)


def set_split_strategy_by_size(dataSizeList, group=groups.WORLD_GROUP):  # pylint: disable=invalid-name
    """Splits ``group``'s fused gradient all-reduce by percentages of the gradient bytes.

    Takes precedence over ``set_split_strategy_by_idx``.

    Args:
      dataSizeList: list of at most 8 numbers >= 0 summing to 100.
      group: the group name.
    Raises:
      NotInitializedError: the NPU system is not initialized.
      ValueError: a bad list, or no such group.
    """
    system.require_initialized("set_split_strategy_by_size")
    split_strategy.set_split_strategy_by_size(dataSizeList, group)
