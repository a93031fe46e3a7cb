"""Cuts a training step's gradients into segments, each reduced by one collective (per dtype).

The rules are the group's split strategy (``npu_bridge.core.world.split_strategy``): by index, each value is the last
gradient of a segment; by size, segment k ends at the first gradient where the cumulative bytes reach the
sum of the first k + 1 percentages. Gradients are counted in the order the optimizer hands them over.
A model with 100 variables thus pays two collectives per step by default (96.54% / 3.46%), not 100.
"""

from npu_bridge.core.world import split_strategy


def strategy_for(group):
    """Returns the split strategy for gradients built now.

    Once the system is initialized it is the group's; a graph built before ``initialize_system`` uses the
    strategy the script set so far, else ``split_strategy.DEFAULT`` (Ascend applies the strategy when it
    compiles the graph, after the script set it; here it is read when the gradients are built).

    Args:
      group: the group name of the all-reduce.
    Returns:
      A ``split_strategy.SplitStrategy``.
    """
    return split_strategy.strategy_in_force(group)


def segments(byte_sizes, strategy):
    """Cuts gradients into consecutive segments.

    Args:
      byte_sizes: the size in bytes of each gradient, in order.
      strategy: a ``split_strategy.SplitStrategy``.
    Returns:
      A list of non-empty lists of gradient indices, covering every index once, in order.
    """
    count = len(byte_sizes)
    if strategy.kind == split_strategy.BY_INDEX:
        ends = [min(idx, count - 1) for idx in strategy.values]
    else:
        total = sum(byte_sizes)
        ends, cumulative, share, i = [], 0, 0.0, 0
        for percentage in strategy.values:
            share += percentage
            while i < count and cumulative < total * share / 100:
                cumulative += byte_sizes[i]
                i += 1
            ends.append(i - 1)
    result, start = [], 0
    for end in ends + [count - 1]:
        if end >= start:
            result.append(list(range(start, end + 1)))
            start = end + 1
    return result
