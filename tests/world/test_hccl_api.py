"""hccl.manage.api and hccl.split.api as a script sees them: before and after initialization."""

import os

import pytest
from helpers.paths import TESTS_DIR

from hccl.manage import api as manage
from hccl.split import api as split
from npu_bridge.core.runtime import system
from npu_bridge.core.runtime.errors import NotInitializedError
from npu_bridge.core.world import groups, split_strategy

TWO_SERVERS = os.path.join(TESTS_DIR, "data", "rank_tables", "template1_2servers.json")


@pytest.fixture
def initialized():
    """Initializes the real NPU system, as ``npu_resource_init`` does; shuts it down afterwards."""
    system.initialize({}, "resource_init", is_global=True)
    yield
    system.shutdown(force=True)


@pytest.fixture
def four_ranks(monkeypatch):
    """This process is rank 1 of a 4-rank RANK_SIZE/RANK_ID world."""
    monkeypatch.setenv("RANK_SIZE", "4")
    monkeypatch.setenv("RANK_ID", "1")
    monkeypatch.setenv("ASCEND_DEVICE_ID", "1")


@pytest.fixture
def two_servers(monkeypatch):
    """This process is rank 3 of the two-server rank table (ranks 0-1 and 2-3 share a server)."""
    monkeypatch.setenv("RANK_TABLE_FILE", TWO_SERVERS)
    monkeypatch.setenv("RANK_ID", "3")


CALLS = [
    ("create_group", lambda: manage.create_group("g", 1, [0])),
    ("destroy_group", lambda: manage.destroy_group("g")),
    ("get_rank_size", manage.get_rank_size),
    ("get_rank_id", manage.get_rank_id),
    ("get_local_rank_size", manage.get_local_rank_size),
    ("get_local_rank_id", manage.get_local_rank_id),
    ("get_world_rank_from_group_rank", lambda: manage.get_world_rank_from_group_rank("hccl_world_group", 0)),
    ("get_group_rank_from_world_rank", lambda: manage.get_group_rank_from_world_rank(0, "hccl_world_group")),
]


@pytest.mark.parametrize("name, call", CALLS, ids=[name for name, _ in CALLS])
def test_every_function_needs_initialization(name, call):
    with pytest.raises(NotInitializedError) as info:
        call()
    assert str(info.value) == f"{name}: the NPU system is not initialized; {system.INIT_HINT}."
    assert isinstance(info.value, ValueError)


def test_single_rank_world(initialized):
    assert (manage.get_rank_size(), manage.get_rank_id()) == (1, 0)
    assert (manage.get_local_rank_size(), manage.get_local_rank_id()) == (1, 0)
    assert manage.get_world_rank_from_group_rank("hccl_world_group", 0) == 0
    assert manage.get_group_rank_from_world_rank(0, "hccl_world_group") == 0


def test_env_world(four_ranks, initialized):
    assert (manage.get_rank_size(), manage.get_rank_id()) == (4, 1)
    assert (manage.get_local_rank_size(), manage.get_local_rank_id()) == (4, 1)
    assert manage.get_rank_size("hccl_world_group") == 4


def test_rank_table_world(two_servers, initialized):
    assert (manage.get_rank_size(), manage.get_rank_id()) == (4, 3)
    assert (manage.get_local_rank_size(), manage.get_local_rank_id()) == (2, 1)


def test_user_group(four_ranks, initialized):
    manage.create_group("pair", 2, [3, 1])
    assert manage.get_rank_size("pair") == 2
    assert manage.get_rank_id("pair") == 0
    assert (manage.get_local_rank_size("pair"), manage.get_local_rank_id("pair")) == (2, 0)
    assert manage.get_world_rank_from_group_rank("pair", 1) == 3
    assert manage.get_group_rank_from_world_rank(3, "pair") == 1
    manage.destroy_group("pair")
    with pytest.raises(ValueError) as info:
        manage.get_rank_size("pair")
    assert str(info.value) == (
        "get rank size error: group 'pair' does not exist; create it with create_group "
        "first (existing groups: ['hccl_world_group'])"
    )


def test_user_group_across_servers(two_servers, initialized):
    manage.create_group("odd", 2, [1, 3])
    assert (manage.get_rank_size("odd"), manage.get_rank_id("odd")) == (2, 1)
    assert (manage.get_local_rank_size("odd"), manage.get_local_rank_id("odd")) == (1, 0)


def test_non_member_queries(four_ranks, initialized):
    manage.create_group("others", 2, [0, 2])
    assert manage.get_rank_size("others") == 2
    assert manage.get_world_rank_from_group_rank("others", 1) == 2
    for call, error in [
        (manage.get_rank_id, "get rank id error"),
        (manage.get_local_rank_size, "get local rank size error"),
        (manage.get_local_rank_id, "get local rank id error"),
    ]:
        with pytest.raises(ValueError) as info:
            call("others")
        assert str(info.value) == (
            f"{error}: this process (world rank 1) is not a member of group 'others' (world ranks [0, 2])"
        )
    with pytest.raises(ValueError) as info:
        manage.get_group_rank_from_world_rank(1, "others")
    assert str(info.value) == (
        "get group rank from world rank error: world rank 1 is not a member of group 'others' (world ranks [0, 2])"
    )


@pytest.mark.parametrize(
    "args, message",
    [
        ((5, 1, [0]), "group must be a python str, got int 5"),
        (("", 1, [0]), "group name is empty."),
        (
            ("x" * 128, 1, [0]),
            f"group name is invalid: it has 128 characters, at most 127 are allowed ({'x' * 40!r}...)",
        ),
        (
            ("hccl_world_group", 1, [0]),
            "create group error:hccl_world_group: the world group always exists and cannot be created",
        ),
        (("g", 0, []), "rank_num[0] is less than 0 or equal to 0"),
        (("g", -1, [0]), "rank_num[-1] is less than 0 or equal to 0"),
        (("g", "2", [0, 1]), "rank_num must be a python int, got str '2'"),
        (("g", 2, [0]), "rank_num[2] not equal to rank_ids len[1]."),
        (("g", 2, "01"), "rank_ids must be a python list of ints, got str '01'"),
        (("g", 2, [0, 4]), "create group error:g: rank_ids[1]=4 is not a rank of the world, which has ranks 0..3"),
        (("g", 2, [0, -1]), "create group error:g: rank_ids[1]=-1 is not a rank of the world, which has ranks 0..3"),
        (("g", 2, [0, 1.0]), "create group error:g: rank_ids[1] must be a python int, got float 1.0"),
        (("g", 3, [2, 0, 2]), "create group error:g: rank_ids[2]=2 is listed twice (also rank_ids[0])"),
    ],
)
def test_create_group_errors(four_ranks, initialized, args, message):
    with pytest.raises(ValueError) as info:
        manage.create_group(*args)
    assert str(info.value) == message


def test_duplicate_group_and_destroy_errors(four_ranks, initialized):
    manage.create_group("g", 2, [0, 1])
    with pytest.raises(ValueError) as info:
        manage.create_group("g", 1, [2])
    assert str(info.value) == (
        "create group error:g: a group with this name already exists (world ranks [0, 1]); destroy it first"
    )
    with pytest.raises(ValueError) as info:
        manage.destroy_group("hccl_world_group")
    assert str(info.value) == "destroy group error :hccl_world_group: the world group cannot be destroyed"
    with pytest.raises(ValueError) as info:
        manage.destroy_group("nope")
    assert str(info.value) == (
        "destroy group error :nope: group 'nope' does not exist; create it with "
        "create_group first (existing groups: ['hccl_world_group', 'g'])"
    )


def test_rank_conversion_errors(four_ranks, initialized):
    with pytest.raises(ValueError) as info:
        manage.get_world_rank_from_group_rank("hccl_world_group", 4)
    assert str(info.value) == (
        "get world rank from group rank error: group_rank_id 4 is not a rank of group "
        "'hccl_world_group', which has ranks 0..3"
    )
    with pytest.raises(ValueError) as info:
        manage.get_group_rank_from_world_rank("1", "hccl_world_group")
    assert str(info.value) == "get group rank from world rank error: world_rank_id must be a python int, got str '1'"


def test_groups_are_cleared_by_reinitialization(four_ranks, initialized):
    manage.create_group("g", 2, [0, 1])
    split.set_split_strategy_by_idx([3])
    system.shutdown(force=True)
    system.initialize({}, "resource_init", is_global=True)
    assert groups.registry().names() == ("hccl_world_group",)
    assert split_strategy.get_split_strategy() == split_strategy.DEFAULT
    manage.create_group("g", 1, [2])


def test_group_keys_are_deterministic(four_ranks, initialized):
    manage.create_group("a", 2, [2, 0])
    registry = groups.registry()
    key = registry.get("a").key
    assert key == groups.group_key("a", [0, 2]) == groups.group_key("a", (2, 0))
    assert 1 <= key <= 2**31 - 1
    assert registry.get("hccl_world_group").key == groups.group_key("hccl_world_group", range(4))
    assert (
        len(
            {
                groups.group_key("a", [0, 2]),
                groups.group_key("b", [0, 2]),
                groups.group_key("a", [0, 1]),
                groups.group_key("hccl_world_group", range(4)),
            }
        )
        == 4
    )
    manage.destroy_group("a")
    manage.create_group("a", 2, [0, 2])
    assert groups.registry().get("a").key == key


def test_split_strategy_default_and_precedence(four_ranks, initialized):
    assert split_strategy.get_split_strategy() == split_strategy.SplitStrategy("size", (96.54, 3.46), True)
    split.set_split_strategy_by_idx([20, 100, 159])
    assert split_strategy.get_split_strategy() == split_strategy.SplitStrategy("idx", (20, 100, 159))
    split.set_split_strategy_by_size([60, 20, 20])
    split.set_split_strategy_by_idx([5])
    assert split_strategy.get_split_strategy("hccl_world_group") == split_strategy.SplitStrategy("size", (60, 20, 20))


def test_split_strategy_per_group(four_ranks, initialized):
    manage.create_group("g", 2, [0, 1])
    split.set_split_strategy_by_size([33.3, 33.3, 33.4], "g")
    assert split_strategy.get_split_strategy("g").values == (33.3, 33.3, 33.4)
    assert split_strategy.get_split_strategy().is_default
    manage.destroy_group("g")
    manage.create_group("g", 2, [0, 1])
    assert split_strategy.get_split_strategy("g").is_default
    with pytest.raises(ValueError) as info:
        split.set_split_strategy_by_idx([1], "nope")
    assert str(info.value).startswith("split error: group 'nope' does not exist")


def test_split_strategy_set_before_initialization_goes_to_the_world_group(four_ranks):
    split.set_split_strategy_by_idx([20, 100, 159])
    split.set_split_strategy_by_size([60, 20, 20])
    system.initialize({}, "resource_init", is_global=True)
    assert split_strategy.get_split_strategy() == split_strategy.SplitStrategy("size", (60, 20, 20))
    split.set_split_strategy_by_size([50, 50])
    assert split_strategy.get_split_strategy().values == (50, 50)
    system.shutdown(force=True)
    system.initialize({}, "resource_init", is_global=True)
    assert split_strategy.get_split_strategy().is_default


def test_split_strategy_by_idx_before_initialization(four_ranks):
    split.set_split_strategy_by_idx([3, 7])
    system.initialize({}, "resource_init", is_global=True)
    assert split_strategy.get_split_strategy() == split_strategy.SplitStrategy("idx", (3, 7))


def test_split_strategy_of_another_group_before_initialization_fails_at_once():
    with pytest.raises(ValueError) as info:
        split.set_split_strategy_by_idx([1], "g")
    assert str(info.value) == (
        "split error: group 'g' does not exist; before the NPU system is initialized only the world group "
        "'hccl_world_group' exists, so set the split strategy of group 'g' after initialization, once "
        "create_group has made it"
    )
    with pytest.raises(ValueError) as info:
        split.set_split_strategy_by_size([50, 50], "")
    assert str(info.value) == "group name is empty."


@pytest.mark.parametrize("initialize", [False, True], ids=["before_init", "after_init"])
@pytest.mark.parametrize(
    "idx_list, message",
    [
        ([], "idxList length is 0"),
        (
            (1, 2, 2),
            "idx in idxList is not ascending: idxList[2]=2 follows idxList[1]=2; indices must be strictly ascending",
        ),
        (
            [3, 1],
            "idx in idxList is not ascending: idxList[1]=1 follows idxList[0]=3; indices must be strictly ascending",
        ),
        ([0, 2**32], "idxList[1]=4294967296 is out of range; gradient indices must be in [0, 4294967295]"),
        ([-1], "idxList[0]=-1 is out of range; gradient indices must be in [0, 4294967295]"),
        ([1, "2"], "idxList[1] must be a python int, got str '2'"),
        ([True], "idxList[0] must be a python int, got bool True"),
        ("1,2", "idxList must be a python list of ints, got str '1,2'"),
    ],
)
def test_split_by_idx_errors(initialize, idx_list, message):
    if initialize:
        system.initialize({}, "resource_init", is_global=True)
    with pytest.raises(ValueError) as info:
        split.set_split_strategy_by_idx(idx_list)
    assert str(info.value) == message


@pytest.mark.parametrize("initialize", [False, True], ids=["before_init", "after_init"])
@pytest.mark.parametrize(
    "sizes, message",
    [
        ([], "dataSizeList length is 0"),
        ([50, 40], "size percentage list sum is not 100%: [50, 40] sums to 90"),
        ([10.5] * 9 + [5.5], "dataSizeList has 10 segments; at most 8 are allowed"),
        ([110, -10], "dataSizeList[1]=-10 is negative; percentages must be >= 0"),
        ([50, "50"], "dataSizeList[1] must be a python int or float, got str '50'"),
        ([float("nan"), 100], "dataSizeList[0] must be a python int or float, got float nan"),
        (100, "dataSizeList must be a python list of numbers, got int 100"),
    ],
)
def test_split_by_size_errors(initialize, sizes, message):
    if initialize:
        system.initialize({}, "resource_init", is_global=True)
    with pytest.raises(ValueError) as info:
        split.set_split_strategy_by_size(sizes)
    assert str(info.value) == message


def test_split_by_size_accepts_zero_segments_and_at_most_eight(initialized):
    split.set_split_strategy_by_size([0, 100])
    split.set_split_strategy_by_size([12.5] * 8)
    assert split_strategy.get_split_strategy().values == (12.5,) * 8


def test_bad_split_is_not_recorded(initialized):
    split.set_split_strategy_by_idx([1, 2])
    with pytest.raises(ValueError):
        split.set_split_strategy_by_idx([2, 1])
    assert split_strategy.get_split_strategy().values == (1, 2)


def test_bad_split_before_initialization_is_not_recorded():
    split.set_split_strategy_by_idx([1, 2])
    with pytest.raises(ValueError):
        split.set_split_strategy_by_idx([2, 1])
    with pytest.raises(ValueError):
        split.set_split_strategy_by_size([50, 40])
    system.initialize({}, "resource_init", is_global=True)
    assert split_strategy.get_split_strategy() == split_strategy.SplitStrategy("idx", (1, 2))


def test_bad_rank_table_fails_the_first_query(monkeypatch, initialized, tmp_path):
    path = tmp_path / "hccl.json"
    path.write_text("{")
    monkeypatch.setenv("RANK_TABLE_FILE", str(path))
    with pytest.raises(ValueError) as info:
        manage.get_rank_size()
    assert str(info.value) == (
        f"rank table {path}: is not valid JSON: Expecting property name enclosed in double quotes at line 1 column 2"
    )
