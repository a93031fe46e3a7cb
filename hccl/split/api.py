"""``hccl.split.api``: gradient split strategies for all-reduce fusion, with upstream's names.

Scripts call these at start-up, before any session exists. Before the NPU system is initialized the list is
validated at once and kept for the world group, which gets it when the system is initialized; gradients
built before that already follow it. Semantics, defaults and precedence are described in
``npu_bridge.core.world.split_strategy``.
"""

from npu_bridge.core.world import groups, split_strategy

__all__ = ["set_split_strategy_by_idx", "set_split_strategy_by_size"]


def set_split_strategy_by_idx(idxList, group=groups.WORLD_GROUP):
    """Splits ``group``'s fused gradient all-reduce after the given gradient indices.

    Args:
      idxList: non-empty list of ints in [0, 2**32 - 1], strictly ascending; each is the index of the last
        gradient of a segment.
      group: the group name; before initialization only "hccl_world_group".
    Raises:
      ValueError: a bad list, or no such group.
    """
    split_strategy.set_split_strategy_by_idx(idxList, group)


def set_split_strategy_by_size(dataSizeList, group=groups.WORLD_GROUP):
    """Splits ``group``'s fused gradient all-reduce by percentages of the gradient bytes.

    Takes precedence over ``set_split_strategy_by_idx``.

    Args:
      dataSizeList: list of at most 8 numbers >= 0 summing to 100.
      group: the group name; before initialization only "hccl_world_group".
    Raises:
      ValueError: a bad list, or no such group.
    """
    split_strategy.set_split_strategy_by_size(dataSizeList, group)
