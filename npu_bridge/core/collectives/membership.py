"""Resolves a group name to the ranks a collective runs among and this process's place in them."""

import dataclasses

from npu_bridge.core.runtime import system
from npu_bridge.core.runtime.errors import NpuArgumentError
from npu_bridge.core.world import groups, world


@dataclasses.dataclass(frozen=True)
class Members:
    """The members of a group as a collective sees them.

    Attributes:
      group: the group name.
      ranks: the members' world ranks, ascending (group rank i is ``ranks[i]``).
      key: the group's collective key.
      rank: this process's group rank.
    """

    group: str
    ranks: tuple
    key: int
    rank: int

    @property
    def size(self):
        """The number of members."""
        return len(self.ranks)

    @property
    def world_rank(self):
        """This process's world rank."""
        return self.ranks[self.rank]


def resolve(group, api_name):
    """Returns the ``Members`` of ``group`` for a collective built now.

    The world group works before the NPU system is initialized (graphs are usually built first); its ranks
    come from the environment then. Groups made by ``create_group`` exist only after initialization.

    Args:
      group: the group name.
      api_name: the calling function, named in errors.
    Raises:
      ValueError: bad group name, no such group, or this process is not a member.
      NotInitializedError: a group other than the world group before initialization.
    """
    groups.check_group_name(group)
    if system.is_initialized():
        registry = groups.registry()
        found = registry.get(group, f"{api_name} error")
        return Members(group, found.ranks, found.key, _my_rank(found, registry.world.rank_id, api_name))
    if group != groups.WORLD_GROUP:
        system.require_initialized(f"{api_name} (group {group!r})")
    current = world.environment_world()
    ranks = tuple(range(current.rank_size))
    return Members(group, ranks, groups.group_key(group, ranks), current.rank_id)


def _my_rank(group, world_rank, api_name):
    if world_rank not in group.ranks:
        raise NpuArgumentError(
            f"{api_name}: this process (world rank {world_rank}) is not a member of group "
            f"{group.name!r} (world ranks {list(group.ranks)}); only members may call it"
        )
    return group.ranks.index(world_rank)
