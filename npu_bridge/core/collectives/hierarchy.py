"""How a collective over a group that spans hosts splits into same-host and cross-host parts.

A group whose members sit on several hosts, the same number m >= 2 on each, reduces in three steps (see
``primitives.all_reduce``): a reduce-scatter among the m members of this host through the shared-memory segment,
TensorFlow's collective across hosts among the members with the same place on their host (the host's share,
1/m of the bytes), and an all-gather among this host's members through the segment. Every member then holds the
same values: the cross-host step gives its peers identical results and the gathers put them together alike.

It gathers in two (``primitives.all_gather``): TensorFlow's all-gather across hosts among the members with the same
place, then an all-gather of those among this host's members through the segment, whose blocks (by place, then by
host in each place's peer order) are put in group-rank order (``Split.order``). TensorFlow's runtime carries each
member's tensor to the other hosts once, and nothing between members of one host.

A broadcast goes in two as well (``primitives.broadcast_send`` / ``broadcast_recv``): TensorFlow's broadcast
across hosts among the members with the root's place, then the segment's broadcast on each host from that place.

Groups with one member per host, with hosts of unequal counts, on the gpu backend (whose tensors take NCCL), without
the segment, or under ``NPU_BRIDGE_COLLECTIVES=tf`` use one TensorFlow collective over the whole group.
"""

import dataclasses
import os
from typing import Tuple

from npu_bridge.core.collectives import shm_keeper, shm_segment
from npu_bridge.core.collectives.membership import Members
from npu_bridge.core.world import groups, world


@dataclasses.dataclass(frozen=True)
class Split:
    """The subgroups of a group whose collectives go by host.

    Attributes:
      scatter: the group's members on this host (group rank order), for the segment's reduce-scatter.
      peers: one member per host, those with this process's place on their host, for TensorFlow's step.
      gather: the same members as ``scatter`` under another key, for the segment's all-gather.
      order: for each member in group-rank order, the index of its block in an all-gather by host, whose blocks
        come by place on the host, and within a place in the order of that place's peers.
      places: the world ranks at each place, one per host, sorted (``places[q]`` are the peers of place q).

    The two segment steps take two channels: each channel runs its collectives in the order its leader starts
    them, and hosts may start them in different orders. On one channel a host could then wait in a gather whose
    cross-host step needs a scatter that the other host queued behind a gather of its own. On two channels a
    scatter never waits for a gather, so every scatter ends, then every cross-host step, then every gather.
    """

    scatter: Members
    peers: Members
    gather: Members
    order: Tuple[int, ...]
    places: Tuple[Tuple[int, ...], ...]

    def place_of(self, world_rank):
        """The place on its host of the member with ``world_rank``."""
        return next(q for q, ranks in enumerate(self.places) if world_rank in ranks)


def split(members, environ=None, host_tensors=True):
    """Returns the ``Split`` of ``members`` when its reductions, all-gathers and broadcasts go by host, else None
    (see the module docstring).

    Args:
      members: the group's ``Members``.
      host_tensors: False on the gpu backend.
    """
    environ = os.environ if environ is None else environ
    if not host_tensors or shm_segment.path_choice(environ) == "tf":
        return None
    current = world.environment_world()
    if not shm_keeper.available(current, environ):
        return None
    by_server = {}
    for rank in members.ranks:
        by_server.setdefault(current.ranks[rank].server_id, []).append(rank)
    counts = {len(ranks) for ranks in by_server.values()}
    if len(by_server) < 2 or len(counts) != 1 or counts == {1}:
        return None
    mine = tuple(by_server[current.server_id])
    place = mine.index(members.world_rank)
    peers_at = [tuple(sorted(ranks[q] for ranks in by_server.values())) for q in range(len(mine))]
    peers = peers_at[place]
    blocks = [rank for at in peers_at for rank in at]
    return Split(
        Members(members.group, mine, groups.group_key(f"\0host-scatter\0{members.group}", mine), place),
        Members(
            members.group,
            peers,
            groups.group_key(f"\0peers\0{members.group}", peers),
            peers.index(members.world_rank),
        ),
        Members(members.group, mine, groups.group_key(f"\0host-gather\0{members.group}", mine), place),
        tuple(blocks.index(rank) for rank in members.ranks),
        tuple(peers_at),
    )
