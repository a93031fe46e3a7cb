"""Gradient split strategies: where the gradient all-reduce of a group is cut into fused segments.

``hccl_ops.allreduce(..., fusion=1)`` fuses the gradients of one training step into a few large
all-reduces; a group's split strategy says where to cut. For the gradient-fusion code, in the order in
which the optimizer hands over its gradients:

* by index (``set_split_strategy_by_idx([20, 100, 159])``): each value is the index of the last gradient
  of a segment, so 160 gradients give segments 0-20, 21-100 and 101-159. Gradients after the last listed
  index form one more segment.
* by size (``set_split_strategy_by_size([60, 20, 20])``): each value is the percentage of the total
  gradient bytes in a segment, in order: segment k ends at the first gradient at which the cumulative
  gradient bytes reach the sum of the first k + 1 percentages.

``get_split_strategy(group)`` returns the strategy in force: the size setting when one was made (it wins
over an index setting, as on Ascend), else the index setting, else ``DEFAULT`` (by size, 96.54% / 3.46%).
Settings belong to the group (``npu_bridge.core.world.groups``): destroying the group or re-initializing the NPU
system drops them.

Scripts set the strategy at start-up, before any session initializes the NPU system. A setting made then is
validated at once (a bad list raises at once, with the same error as after initialization) and kept until the
world exists (``npu_bridge.core.world.pending_split``): gradients built before initialization follow it
(``strategy_in_force``), and the first initialization after it gives it to the world group. Before
initialization only the world group can be named, since every other group is made by ``create_group`` after
initialization.
"""

import dataclasses
import math

from npu_bridge.core.runtime import system
from npu_bridge.core.runtime.errors import NpuArgumentError
from npu_bridge.core.world import groups, pending_split

MAX_SPLIT_INDEX = 2**32 - 1
MAX_SIZE_SEGMENTS = 8
# The percentages must sum to 100; the tolerance absorbs binary rounding of decimal inputs like 33.3.
SIZE_SUM_TOLERANCE = 1e-6
BY_INDEX = "idx"
BY_SIZE = "size"


@dataclasses.dataclass(frozen=True)
class SplitStrategy:
    """A group's gradient split strategy.

    Attributes:
      kind: "size" (values are percentages of the gradient bytes) or "idx" (values are last-gradient
        indices of the segments).
      values: tuple of the split values.
      is_default: True when the group never had a strategy set.
    """

    kind: str
    values: tuple
    is_default: bool = False


DEFAULT = SplitStrategy(BY_SIZE, (96.54, 3.46), is_default=True)


def check_idx_list(idxList):  # upstream's argument name
    """Validates a split-by-index list.

    Args:
      idxList: non-empty list of ints in [0, 2**32 - 1], strictly ascending.
    Returns:
      The values as a tuple.
    Raises:
      ValueError: with upstream's wording ("idxList length is 0", "idx in idxList is not ascending").
    """
    if not isinstance(idxList, (list, tuple)):
        raise NpuArgumentError(f"idxList must be a python list of ints, got {type(idxList).__name__} {idxList!r}")
    if not idxList:
        raise NpuArgumentError("idxList length is 0")
    for i, idx in enumerate(idxList):
        if isinstance(idx, bool) or not isinstance(idx, int):
            raise NpuArgumentError(f"idxList[{i}] must be a python int, got {type(idx).__name__} {idx!r}")
        if not 0 <= idx <= MAX_SPLIT_INDEX:
            raise NpuArgumentError(
                f"idxList[{i}]={idx} is out of range; gradient indices must be in [0, {MAX_SPLIT_INDEX}]"
            )
        if i and idx <= idxList[i - 1]:
            raise NpuArgumentError(
                f"idx in idxList is not ascending: idxList[{i}]={idx} follows "
                f"idxList[{i - 1}]={idxList[i - 1]}; indices must be strictly ascending"
            )
    return tuple(idxList)


def check_size_list(dataSizeList):  # upstream's argument name
    """Validates a split-by-size list.

    Args:
      dataSizeList: non-empty list of at most 8 finite numbers >= 0 that sum to 100.
    Returns:
      The values as a tuple.
    Raises:
      ValueError: with upstream's wording ("size percentage list sum is not 100%") for a bad sum.
    """
    if not isinstance(dataSizeList, (list, tuple)):
        raise NpuArgumentError(
            f"dataSizeList must be a python list of numbers, got {type(dataSizeList).__name__} {dataSizeList!r}"
        )
    if not dataSizeList:
        raise NpuArgumentError("dataSizeList length is 0")
    if len(dataSizeList) > MAX_SIZE_SEGMENTS:
        raise NpuArgumentError(
            f"dataSizeList has {len(dataSizeList)} segments; at most {MAX_SIZE_SEGMENTS} are allowed"
        )
    for i, size in enumerate(dataSizeList):
        if isinstance(size, bool) or not isinstance(size, (int, float)) or not math.isfinite(size):
            raise NpuArgumentError(
                f"dataSizeList[{i}] must be a python int or float, got {type(size).__name__} {size!r}"
            )
        if size < 0:
            raise NpuArgumentError(f"dataSizeList[{i}]={size} is negative; percentages must be >= 0")
    total = math.fsum(dataSizeList)
    if abs(total - 100) > SIZE_SUM_TOLERANCE:
        raise NpuArgumentError(f"size percentage list sum is not 100%: {list(dataSizeList)} sums to {total:g}")
    return tuple(dataSizeList)


def set_split_strategy_by_idx(idxList, group=groups.WORLD_GROUP):
    """Sets the split points of ``group``'s gradient fusion by gradient index.

    Before the NPU system is initialized the setting is kept for the world group of the next initialization.

    Args:
      idxList: see ``check_idx_list``.
      group: an existing group name; before initialization only the world group.
    Raises:
      ValueError: a bad list, or no such group.
    """
    _set(group, BY_INDEX, check_idx_list(idxList))


def set_split_strategy_by_size(dataSizeList, group=groups.WORLD_GROUP):
    """Sets the split points of ``group``'s gradient fusion by percentage of gradient bytes.

    Before the NPU system is initialized the setting is kept for the world group of the next initialization.

    Args:
      dataSizeList: see ``check_size_list``.
      group: an existing group name; before initialization only the world group.
    Raises:
      ValueError: a bad list, or no such group.
    """
    _set(group, BY_SIZE, check_size_list(dataSizeList))


def get_split_strategy(group=groups.WORLD_GROUP):
    """Returns the split strategy in force for ``group`` (rules in the module docstring).

    Args:
      group: an existing group name.
    Returns:
      A ``SplitStrategy``.
    Raises:
      ValueError: no such group.
      NotInitializedError: the NPU system is not initialized.
    """
    return _resolve(groups.registry().split_settings(group))


def strategy_in_force(group=groups.WORLD_GROUP):
    """Returns the split strategy for gradients built now, before or after initialization.

    Args:
      group: a group name.
    Returns:
      ``get_split_strategy(group)`` once the NPU system is initialized; before that, the strategy set for
      ``group`` so far (``DEFAULT`` when none was).
    Raises:
      ValueError: the system is initialized and there is no such group.
    """
    if system.is_initialized():
        return get_split_strategy(group)
    return _resolve(pending_split.settings(group))


def _set(group, kind, values):
    if system.is_initialized():
        groups.registry().set_split(group, kind, values)
        return
    groups.check_group_name(group)
    if group != groups.WORLD_GROUP:
        raise NpuArgumentError(
            f"split error: group {group!r} does not exist; before the NPU system is initialized only the world "
            f"group {groups.WORLD_GROUP!r} exists, so set the split strategy of group {group!r} after "
            "initialization, once create_group has made it"
        )
    pending_split.put(group, kind, values)


def _resolve(settings):
    for kind in (BY_SIZE, BY_INDEX):
        if kind in settings:
            return SplitStrategy(kind, settings[kind])
    return DEFAULT
