"""Communication groups: the world group "hccl_world_group" and groups made with ``create_group``.

A group is a set of world ranks. Group ranks number its members in ascending world-rank order (group rank
i is the i-th smallest member), whatever order ``rank_ids`` was given in. Collective results that depend
on member order (gather, broadcast and send/receive peers) are indexed by group rank in this order.

Every group has a ``key``, an integer in [1, 2**31 - 1] computed from its name and members only
(``group_key``), so every rank computes the same key without talking to the others. Collective ops use it
as TensorFlow's ``group_key``. The world group's key is ``group_key("hccl_world_group", range(rank_size))``.
Creating a group whose key equals the key of another group of this process is an error (a 1 in 2**31
chance per pair; groups that only other ranks created are not seen).

Groups live for one initialization of the NPU system: after a shutdown and re-initialization only the
world group exists again. The registry also holds each group's gradient split settings
(``npu_bridge.core.world.split_strategy``), which disappear with the group; a registry starts with the world
group's settings made before the initialization (``npu_bridge.core.world.pending_split``).

Errors are ``ValueError`` (as upstream); their text starts with upstream's wording ("create group
error:<group>", "get rank id error", ...) followed by what was wrong and what is allowed.
"""

import dataclasses
import hashlib
import threading

from npu_bridge.core.runtime.errors import NpuArgumentError
from npu_bridge.core.world import pending_split, world

WORLD_GROUP = "hccl_world_group"
MAX_GROUP_NAME_LENGTH = 127
MAX_GROUP_RANKS = 32768
_KEY_MODULUS = 2**31 - 1


@dataclasses.dataclass(frozen=True)
class Group:
    """A communication group.

    Attributes:
      name: the group name.
      ranks: the members' world rank ids, ascending; group rank i is ``ranks[i]``.
      key: the collective group key (see ``group_key``).
    """

    name: str
    ranks: tuple
    key: int

    @property
    def size(self):
        """The number of members."""
        return len(self.ranks)


def group_key(name, ranks):
    """Returns the collective group key of a group; identical on every rank.

    Args:
      name: the group name.
      ranks: the members' world rank ids (any order).
    Returns:
      An int in [1, 2**31 - 1].
    """
    text = name + "\0" + ",".join(str(r) for r in sorted(ranks))
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return 1 + int.from_bytes(digest[:8], "big") % _KEY_MODULUS


def check_group_name(group):
    """Validates a group name argument.

    Args:
      group: the value passed as ``group``.
    Raises:
      ValueError: not a str, empty, or longer than 127 characters.
    """
    if not isinstance(group, str):
        raise NpuArgumentError(f"group must be a python str, got {type(group).__name__} {group!r}")
    if not group:
        raise NpuArgumentError("group name is empty.")
    if len(group) > MAX_GROUP_NAME_LENGTH:
        raise NpuArgumentError(
            f"group name is invalid: it has {len(group)} characters, at most "
            f"{MAX_GROUP_NAME_LENGTH} are allowed ({group[:40]!r}...)"
        )


class GroupRegistry:
    """The groups of one initialization, seen from this process's rank of ``world``."""

    def __init__(self, world, split=None):
        """Creates a registry holding only the world group.

        Args:
          world: the ``world.World`` of this process.
          split: optional dict of split settings made before initialization, group name -> {kind: values};
            only the world group's entry can apply (no other group exists yet).
        """
        self.world = world
        self._lock = threading.Lock()
        ranks = tuple(range(world.rank_size))
        self._groups = {WORLD_GROUP: Group(WORLD_GROUP, ranks, group_key(WORLD_GROUP, ranks))}
        self._split = {group: dict(kinds) for group, kinds in (split or {}).items() if group in self._groups}

    def names(self):
        """Returns the names of the existing groups, the world group first."""
        return tuple(self._groups)

    def get(self, group, error="get group error"):
        """Returns an existing group.

        Args:
          group: the group name.
          error: upstream's wording for the failing call, starts the error message.
        Returns:
          The ``Group``.
        Raises:
          ValueError: bad name, or no such group.
        """
        check_group_name(group)
        if group not in self._groups:
            raise NpuArgumentError(
                f"{error}: group {group!r} does not exist; create it with create_group first "
                f"(existing groups: {list(self._groups)})"
            )
        return self._groups[group]

    def create(self, group, rank_num, rank_ids):
        """Creates a user group.

        Args:
          group: the new group's name.
          rank_num: the number of members, an int > 0.
          rank_ids: list of the members' world rank ids, ``rank_num`` distinct ints within the world.
        Returns:
          The new ``Group``.
        Raises:
          ValueError: a bad argument, an existing name, or the world group's name.
        """
        with self._lock:
            return self._create(group, rank_num, rank_ids)

    def _create(self, group, rank_num, rank_ids):
        check_group_name(group)
        error = f"create group error:{group}"
        if group == WORLD_GROUP:
            raise NpuArgumentError(f"{error}: the world group always exists and cannot be created")
        if group in self._groups:
            raise NpuArgumentError(
                f"{error}: a group with this name already exists (world ranks "
                f"{list(self._groups[group].ranks)}); destroy it first"
            )
        if isinstance(rank_num, bool) or not isinstance(rank_num, int):
            raise NpuArgumentError(f"rank_num must be a python int, got {type(rank_num).__name__} {rank_num!r}")
        if rank_num <= 0:
            raise NpuArgumentError(f"rank_num[{rank_num}] is less than 0 or equal to 0")
        if rank_num > MAX_GROUP_RANKS:
            raise NpuArgumentError(f"rank_num[{rank_num}] is greater than {MAX_GROUP_RANKS}, the maximum group size")
        if not isinstance(rank_ids, (list, tuple)):
            raise NpuArgumentError(
                f"rank_ids must be a python list of ints, got {type(rank_ids).__name__} {rank_ids!r}"
            )
        if len(rank_ids) != rank_num:
            raise NpuArgumentError(f"rank_num[{rank_num}] not equal to rank_ids len[{len(rank_ids)}].")
        size = self.world.rank_size
        first_index = {}
        for i, rank in enumerate(rank_ids):
            if isinstance(rank, bool) or not isinstance(rank, int):
                raise NpuArgumentError(
                    f"{error}: rank_ids[{i}] must be a python int, got {type(rank).__name__} {rank!r}"
                )
            if not 0 <= rank < size:
                raise NpuArgumentError(
                    f"{error}: rank_ids[{i}]={rank} is not a rank of the world, which has ranks 0..{size - 1}"
                )
            if rank in first_index:
                raise NpuArgumentError(
                    f"{error}: rank_ids[{i}]={rank} is listed twice (also rank_ids[{first_index[rank]}])"
                )
            first_index[rank] = i
        ranks = tuple(sorted(rank_ids))
        key = group_key(group, ranks)
        for other in self._groups.values():
            if other.key == key:
                raise NpuArgumentError(
                    f"{error}: its group key {key} equals the key of group {other.name!r}; choose another group name"
                )
        self._groups[group] = Group(group, ranks, key)
        return self._groups[group]

    def destroy(self, group):
        """Destroys a user group and its split settings.

        Args:
          group: the group name.
        Raises:
          ValueError: bad name, the world group, or no such group.
        """
        check_group_name(group)
        error = f"destroy group error :{group}"
        if group == WORLD_GROUP:
            raise NpuArgumentError(f"{error}: the world group cannot be destroyed")
        with self._lock:
            self.get(group, error)
            del self._groups[group]
            self._split.pop(group, None)

    def rank_size(self, group):
        """Returns the number of ranks in ``group``.

        Raises:
          ValueError: bad name or no such group.
        """
        return self.get(group, "get rank size error").size

    def rank_id(self, group):
        """Returns this process's group rank in ``group``.

        Raises:
          ValueError: bad name, no such group, or this process is not a member.
        """
        return self._my_group_rank(self.get(group, "get rank id error"), "get rank id error")

    def local_rank_size(self, group):
        """Returns the number of members of ``group`` on this process's server.

        Raises:
          ValueError: bad name, no such group, or this process is not a member.
        """
        return len(self._local_members(group, "get local rank size error"))

    def local_rank_id(self, group):
        """Returns this process's position, in rank order, among the members of ``group`` on its server.

        Raises:
          ValueError: bad name, no such group, or this process is not a member.
        """
        return self._local_members(group, "get local rank id error").index(self.world.rank_id)

    def world_rank_from_group_rank(self, group, group_rank_id):
        """Returns the world rank of group rank ``group_rank_id`` of ``group``.

        Raises:
          ValueError: bad name, no such group, or ``group_rank_id`` not an int in [0, group size).
        """
        error = "get world rank from group rank error"
        g = self.get(group, error)
        if isinstance(group_rank_id, bool) or not isinstance(group_rank_id, int):
            raise NpuArgumentError(
                f"{error}: group_rank_id must be a python int, got {type(group_rank_id).__name__} {group_rank_id!r}"
            )
        if not 0 <= group_rank_id < g.size:
            raise NpuArgumentError(
                f"{error}: group_rank_id {group_rank_id} is not a rank of group {group!r}, which "
                f"has ranks 0..{g.size - 1}"
            )
        return g.ranks[group_rank_id]

    def group_rank_from_world_rank(self, world_rank_id, group):
        """Returns the group rank of world rank ``world_rank_id`` in ``group``.

        Raises:
          ValueError: bad name, no such group, or ``world_rank_id`` is not a member of ``group``.
        """
        error = "get group rank from world rank error"
        g = self.get(group, error)
        if isinstance(world_rank_id, bool) or not isinstance(world_rank_id, int):
            raise NpuArgumentError(
                f"{error}: world_rank_id must be a python int, got {type(world_rank_id).__name__} {world_rank_id!r}"
            )
        if world_rank_id not in g.ranks:
            raise NpuArgumentError(
                f"{error}: world rank {world_rank_id} is not a member of group {group!r} (world ranks {list(g.ranks)})"
            )
        return g.ranks.index(world_rank_id)

    def set_split(self, group, kind, values):
        """Records a split setting of an existing group (validated by ``npu_bridge.core.world.split_strategy``).

        Args:
          group: the group name.
          kind: "idx" or "size".
          values: the validated tuple of split values.
        Raises:
          ValueError: bad name or no such group.
        """
        with self._lock:
            self.get(group, "split error")
            self._split.setdefault(group, {})[kind] = values

    def split_settings(self, group):
        """Returns the split settings of an existing group.

        Args:
          group: the group name.
        Returns:
          A dict with keys among "idx" and "size", each mapped to its tuple of values.
        Raises:
          ValueError: bad name or no such group.
        """
        self.get(group, "split error")
        return dict(self._split.get(group, {}))

    def _my_group_rank(self, g, error):
        if self.world.rank_id not in g.ranks:
            raise NpuArgumentError(
                f"{error}: this process (world rank {self.world.rank_id}) is not a member of group "
                f"{g.name!r} (world ranks {list(g.ranks)})"
            )
        return g.ranks.index(self.world.rank_id)

    def _local_members(self, group, error):
        g = self.get(group, error)
        self._my_group_rank(g, error)
        local = set(self.world.local_rank_ids)
        return [r for r in g.ranks if r in local]


@world.once_per_initialization("hccl group registry")
def registry():
    """Returns the ``GroupRegistry`` of the current initialization of the NPU system.

    The first call of an initialization applies the split settings made before it (``pending_split``).

    Raises:
      NotInitializedError: the system is not initialized.
    """
    return GroupRegistry(world.current_world(), pending_split.take())
