"""``hccl.manage.api``: communication groups and rank queries, with upstream's names and argument order.

Every function needs an initialized NPU system (``sess.run(npu_ops.initialize_system())``,
``init_resource()`` or ``npu_plugin.npu_resource_init()``) and raises ``NotInitializedError`` (a
``ValueError``, as upstream) before that. The world comes from the environment (``npu_bridge.core.world.world``:
rank table, ``RANK_SIZE``/``RANK_ID``, ``CM_*``, or a single rank); groups are ``npu_bridge.core.world.groups``.

Differences from Ascend: with no rank variables at all the world has one rank (upstream fails); errors
say what is wrong instead of returning a library code (``ret[...]``).
"""

from npu_bridge.core.runtime import system
from npu_bridge.core.world import groups

__all__ = [
    "create_group",
    "destroy_group",
    "get_rank_size",
    "get_rank_id",
    "get_local_rank_size",
    "get_local_rank_id",
    "get_world_rank_from_group_rank",
    "get_group_rank_from_world_rank",
]

WORLD_GROUP = groups.WORLD_GROUP


def create_group(group, rank_num, rank_ids):
    """Creates a communication group of world ranks.

    Args:
      group: the group name, a non-empty str of at most 127 characters, not "hccl_world_group".
      rank_num: the number of members, an int > 0.
      rank_ids: list of ``rank_num`` distinct world rank ids. Group ranks number them in ascending order.
    Raises:
      NotInitializedError: the NPU system is not initialized.
      ValueError: a bad argument or an existing group name.
    """
    system.require_initialized("create_group")
    groups.registry().create(group, rank_num, rank_ids)


def destroy_group(group):
    """Destroys a group made by ``create_group``.

    Args:
      group: the group name.
    Raises:
      NotInitializedError: the NPU system is not initialized.
      ValueError: no such group, or the world group.
    """
    system.require_initialized("destroy_group")
    groups.registry().destroy(group)


def get_rank_size(group=WORLD_GROUP):
    """Returns the number of ranks in ``group``.

    Args:
      group: the group name.
    Returns:
      An int > 0.
    Raises:
      NotInitializedError: the NPU system is not initialized.
      ValueError: no such group.
    """
    system.require_initialized("get_rank_size")
    return groups.registry().rank_size(group)


def get_rank_id(group=WORLD_GROUP):
    """Returns this process's rank in ``group``.

    Args:
      group: the group name.
    Returns:
      An int in [0, get_rank_size(group)).
    Raises:
      NotInitializedError: the NPU system is not initialized.
      ValueError: no such group, or this process is not a member.
    """
    system.require_initialized("get_rank_id")
    return groups.registry().rank_id(group)


def get_local_rank_size(group=WORLD_GROUP):
    """Returns the number of members of ``group`` on this process's server.

    Args:
      group: the group name.
    Returns:
      An int > 0.
    Raises:
      NotInitializedError: the NPU system is not initialized.
      ValueError: no such group, or this process is not a member.
    """
    system.require_initialized("get_local_rank_size")
    return groups.registry().local_rank_size(group)


def get_local_rank_id(group=WORLD_GROUP):
    """Returns this process's rank among the members of ``group`` on its server.

    Args:
      group: the group name.
    Returns:
      An int in [0, get_local_rank_size(group)).
    Raises:
      NotInitializedError: the NPU system is not initialized.
      ValueError: no such group, or this process is not a member.
    """
    system.require_initialized("get_local_rank_id")
    return groups.registry().local_rank_id(group)


def get_world_rank_from_group_rank(group, group_rank_id):
    """Returns the world rank of a group rank.

    Args:
      group: the group name.
      group_rank_id: a rank of ``group``, an int in [0, get_rank_size(group)).
    Returns:
      The world rank id.
    Raises:
      NotInitializedError: the NPU system is not initialized.
      ValueError: no such group, or ``group_rank_id`` out of range.
    """
    system.require_initialized("get_world_rank_from_group_rank")
    return groups.registry().world_rank_from_group_rank(group, group_rank_id)


def get_group_rank_from_world_rank(world_rank_id, group):
    """Returns the group rank of a world rank (note the argument order, as upstream).

    Args:
      world_rank_id: a world rank id that is a member of ``group``.
      group: the group name.
    Returns:
      The rank of ``world_rank_id`` in ``group``.
    Raises:
      NotInitializedError: the NPU system is not initialized.
      ValueError: no such group, or ``world_rank_id`` is not a member.
    """
    system.require_initialized("get_group_rank_from_world_rank")
    return groups.registry().group_rank_from_world_rank(world_rank_id, group)
