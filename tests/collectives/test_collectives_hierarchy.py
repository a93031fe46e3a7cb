"""A reduction, an all-gather or a broadcast over a group that spans hosts goes by host: which groups do, the
subgroups, the order of the gathered blocks, the ops built and the run's collective graph key (every rank computes
the same).
Two-host runs: tests/launch/test_two_hosts.py."""

import os

import pytest
import tensorflow as tf
from helpers.collectives import collective_op_types

from npu_bridge.core.collectives import hierarchy, membership, primitives, registry, shm_segment
from npu_bridge.core.collectives import keys as instance_keys
from npu_bridge.core.world import groups, world
from npu_bridge.core.world.rank_table import RankInfo

WORLD = "hccl_world_group"


def _world(servers, me):
    """The world of rank ``me`` when rank r runs on ``servers[r]``."""
    ranks = tuple(RankInfo(r, s, r, None, None) for r, s in enumerate(servers))
    local = [r for r, s in enumerate(servers) if s == servers[me]]
    return world.World(len(servers), me, me, len(local), local.index(me), servers[me], ranks, "rank_table")


def _members(ranks, me, name=WORLD):
    ranks = tuple(ranks)
    return membership.Members(name, ranks, groups.group_key(name, ranks), ranks.index(me))


@pytest.fixture
def segment(monkeypatch):
    """This process has a segment (a memfd named as npu-run names it); returns a function that sets the world."""
    fd = os.memfd_create(shm_segment.MEMFD_NAME, os.MFD_ALLOW_SEALING)
    monkeypatch.setenv(shm_segment.FD_VARIABLE, str(fd))
    monkeypatch.delenv(shm_segment.PATH_VARIABLE, raising=False)
    yield lambda servers, me: monkeypatch.setattr(world, "environment_world", lambda: _world(servers, me))
    os.close(fd)


def test_a_group_with_equal_shares_on_several_hosts_splits_by_host(segment):
    segment(["a", "a", "b", "b"], 1)
    split = hierarchy.split(_members(range(4), 1))
    assert (split.scatter.ranks, split.scatter.rank, split.gather.ranks, split.gather.rank) == ((0, 1), 1, (0, 1), 1)
    assert (split.peers.ranks, split.peers.rank) == ((1, 3), 0)
    assert len({split.scatter.key, split.gather.key, split.peers.key, groups.group_key(WORLD, range(4))}) == 4
    segment(["a", "b", "a", "b"], 2)  # ranks spread over the hosts in turn
    split = hierarchy.split(_members(range(4), 2))
    assert (split.scatter.ranks, split.peers.ranks, split.peers.rank) == ((0, 2), (2, 3), 0)


@pytest.mark.parametrize(
    "servers", [["a", "a", "b", "b"], ["a", "b", "a", "b"], ["a", "b", "b", "a", "c", "c"], ["b", "a", "a", "b"]]
)
def test_the_blocks_of_a_gather_by_host_come_back_in_group_rank_order(segment, servers):
    """Simulates the two steps on every rank with each rank's block its own rank: across hosts among the peers of
    a place, then among a host's members; ``order`` must then give 0, 1, 2, ... on every rank."""
    splits = {}
    for rank in range(len(servers)):
        segment(servers, rank)
        splits[rank] = hierarchy.split(_members(range(len(servers)), rank))
    for rank, split in splits.items():
        across = {r: list(splits[r].peers.ranks) for r in split.gather.ranks}  # each host member's first step
        blocks = [block for member in split.gather.ranks for block in across[member]]
        assert [blocks[i] for i in split.order] == list(range(len(servers))), (servers, rank)


@pytest.mark.parametrize(
    "servers, ranks, why",
    [
        (["a", "a", "b"], range(3), "unequal shares"),
        (["a", "b"], range(2), "one member per host"),
        (["a", "a", "b", "b"], (0, 2), "a subgroup with one member per host"),
        (["a", "a", "b", "b"], (0, 1), "one host: the segment alone"),
    ],
)
def test_other_groups_reduce_in_one_piece(segment, servers, ranks, why):
    segment(servers, 0)
    assert hierarchy.split(_members(ranks, 0)) is None, why


def test_no_segment_tensorflows_path_or_gpu_tensors_reduce_in_one_piece(segment, monkeypatch):
    segment(["a", "a", "b", "b"], 0)
    members = _members(range(4), 0)
    assert hierarchy.split(members, host_tensors=False) is None
    assert hierarchy.split(members, environ={shm_segment.PATH_VARIABLE: "tf"}) is None
    # a process a rank started: the variable without its descriptor
    assert hierarchy.split(members, environ={shm_segment.FD_VARIABLE: "999999"}) is None
    # ranks started one by one (no npu-run) get each host's segment from its keeper: by host too
    assert hierarchy.split(members, environ={}) is not None


def test_the_steps_of_a_reduction_by_host_share_one_graph_key_on_every_rank(segment):
    runs = []
    for rank in range(4):
        segment(["a", "a", "b", "b"], rank)
        with tf.Graph().as_default() as graph:
            x = tf.fill([7], float(rank))  # a length the host's two members do not divide
            y = primitives.all_reduce(x, _members(range(4), rank), "Add")
            assert y.shape == [7]
            assert collective_op_types(y) == ["CollectiveReduce", "HcomShmAllGather", "HcomShmReduceScatter"]
            runs.append(registry.for_run(graph, y))
    assert {run.ranks for run in runs} == {frozenset(range(4))}  # each step waits for the whole group
    assert len({run.graph_key for run in runs}) == 1 and runs[0].graph_key > 0


def test_an_all_gather_by_host_crosses_hosts_first_and_keeps_the_shape(segment):
    runs = []
    for rank in range(4):
        segment(["a", "b", "a", "b"], rank)
        with tf.Graph().as_default() as graph:
            x = tf.fill([2, 3], float(rank))
            y = primitives.all_gather(x, _members(range(4), rank))
            assert y.shape == [8, 3]
            assert collective_op_types(y) == ["CollectiveGather", "HcomShmAllGather"]
            gather = next(op for op in graph.get_operations() if op.type == "CollectiveGather")
            assert gather.get_attr("group_size") == 2  # one member of each host
            runs.append(registry.for_run(graph, y))
    assert {run.ranks for run in runs} == {frozenset(range(4))}
    assert len({run.graph_key for run in runs}) == 1


def test_a_broadcast_by_host_crosses_hosts_at_the_roots_place_then_goes_through_each_segment(segment):
    servers, root = ["a", "b", "a", "b"], 1  # the root is host b's first rank; rank 0 shares its place on host a
    expected = {
        0: ["CollectiveBcastRecv", "HcomShmBroadcastSend"],
        1: ["CollectiveBcastSend", "HcomShmBroadcastSend"],
        2: ["HcomShmBroadcastRecv"],
        3: ["HcomShmBroadcastRecv"],
    }
    runs = []
    for rank in range(4):
        segment(servers, rank)
        with tf.Graph().as_default() as graph:
            members = _members(range(4), rank)
            key = instance_keys.instance_key(members.key)
            if rank == root:
                y = primitives.broadcast_send(tf.fill([5], 7.0), members, key, root=root)
            else:
                y = primitives.broadcast_recv(tf.TensorShape([5]), tf.float32, members, key, root=root)
            assert y.shape == [5] and collective_op_types(y) == expected[rank], rank
            runs.append(registry.for_run(graph, y))
    assert {run.ranks for run in runs} == {frozenset(range(4))}


def test_groups_of_other_members_next_to_each_other_get_one_graph_key_on_every_rank(monkeypatch):
    keys = {}
    for rank in range(4):
        monkeypatch.setattr(instance_keys, "_counters", {})  # each rank a process of its own: its own counts
        with tf.Graph().as_default() as graph:
            parity = _members((rank % 2, rank % 2 + 2), rank, "parity")  # {0, 2} and {1, 3}
            fetches = [
                primitives.all_reduce(tf.ones([6]), parity, "Add"),
                primitives.all_reduce(tf.ones([1]), _members(range(4), rank), "Add"),
            ]
            keys[rank] = (registry.for_run(graph, fetches).graph_key, registry.for_run(graph, fetches[0]).graph_key)
    assert len({both for both, _ in keys.values()}) == 1 and keys[0][0] > 0
    # A group alone: the key TensorFlow would derive, the same for the members of each group, another per group
    alone = [keys[rank][1] for rank in range(4)]
    assert alone[0] == alone[2] != alone[1] == alone[3] and min(alone) > 0
