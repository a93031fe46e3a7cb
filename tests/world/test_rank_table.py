"""Rank table parsing: both templates, host addresses, and what a user sees for malformed tables."""

import copy
import json
import logging
import os

import pytest
from helpers.paths import TESTS_DIR

from npu_bridge.core.runtime.errors import RankTableError
from npu_bridge.core.world import rank_table

DATA = os.path.join(TESTS_DIR, "data", "rank_tables")


def data_file(name):
    return os.path.join(DATA, name)


def template1(servers=(("10.0.0.10", 2),)):
    rank = 0
    server_list = []
    for server_id, count in servers:
        devices = []
        for device in range(count):
            devices.append(
                {
                    "device_id": str(device),
                    "device_ip": f"192.168.{len(server_list)}.{device + 8}",
                    "rank_id": str(rank),
                }
            )
            rank += 1
        server_list.append({"server_id": server_id, "device": devices})
    return {"status": "completed", "version": "1.0", "server_count": str(len(servers)), "server_list": server_list}


def template2(pods=2):
    instances = [
        {
            "pod_name": f"pod-{i}",
            "rank_id": str(i),
            "server_id": "10.0.0.10",
            "devices": [{"device_id": str(i), "device_ip": f"192.168.1.{i + 8}"}],
        }
        for i in range(pods)
    ]
    return {
        "status": "completed",
        "group_count": "1",
        "group_list": [
            {"group_name": "job", "instance_count": str(pods), "device_count": str(pods), "instance_list": instances}
        ],
    }


@pytest.fixture
def npu_log(caplog):
    """Captures the npu_bridge logger's warnings (it does not propagate to the root logger)."""
    logger = logging.getLogger("npu_bridge")
    logger.addHandler(caplog.handler)
    caplog.set_level(logging.WARNING, logger="npu_bridge")
    yield caplog
    logger.removeHandler(caplog.handler)


@pytest.fixture
def write(tmp_path):
    def write_table(content, name="hccl.json"):
        path = tmp_path / name
        path.write_text(content if isinstance(content, str) else json.dumps(content, indent=2), encoding="utf-8")
        return str(path)

    return write_table


def load_error(path):
    with pytest.raises(RankTableError) as info:
        rank_table.load(path)
    return str(info.value)


def test_template1_two_servers_on_this_machine():
    table = rank_table.load(data_file("template1_2servers.json"))
    assert (table.template, table.server_count, table.rank_size) == (1, 2, 4)
    assert [(r.rank_id, r.server_id, r.device_id, r.host) for r in table.ranks] == [
        (0, "127.0.0.1", 0, "127.0.0.1"),
        (1, "127.0.0.1", 1, "127.0.0.1"),
        (2, "localhost", 0, "localhost"),
        (3, "localhost", 1, "localhost"),
    ]
    assert table.ranks[2].device_ip == "192.168.2.8"
    assert table.ranks[0].pod_name is None


def test_single_server_table_is_reached_over_loopback():
    table = rank_table.load(data_file("template1_single_server.json"))
    assert table.server_count == 1
    assert {r.host for r in table.ranks} == {"127.0.0.1"}
    assert [r.device_id for r in table.ranks] == [0, 1, 2, 3]


def test_version_1_2_uses_host_ip_and_ignores_extra_fields():
    table = rank_table.load(data_file("template1_v1.2.json"))
    assert [(r.server_id, r.host) for r in table.ranks] == [
        ("node_0", "10.0.0.10"),
        ("node_0", "10.0.0.10"),
        ("node_1", "10.0.0.11"),
        ("node_1", "10.0.0.11"),
    ]


def test_the_pods_of_a_mindcluster_table_are_reached_at_their_container_ip(write):
    data = template1((("node-a-uuid", 2), ("node-b-uuid", 2)))  # server ids that are not addresses
    for index, server in enumerate(data["server_list"]):
        server.update(host_ip=f"10.0.0.{index + 1}", container_ip=f"172.16.{index}.5", hardware_type="800T-A2")
    table = rank_table.load(write(data))
    assert [(r.server_id, r.host) for r in table.ranks] == [
        ("node-a-uuid", "172.16.0.5"),
        ("node-a-uuid", "172.16.0.5"),
        ("node-b-uuid", "172.16.1.5"),
        ("node-b-uuid", "172.16.1.5"),
    ]


def test_bad_container_ip(write):
    data = template1((("10.0.0.1", 1), ("10.0.0.2", 1)))
    data["server_list"][1]["container_ip"] = "pod-b"
    path = write(data)
    assert load_error(path) == (
        f'rank table {path}: server_list[1].container_ip has invalid value "pod-b": must be '
        'an IPv4 or IPv6 address such as "192.168.1.8"'
    )


def test_template2_pods():
    table = rank_table.load(data_file("template2_pods.json"))
    assert (table.template, table.server_count, table.rank_size) == (2, 1, 4)
    assert [(r.rank_id, r.pod_name, r.device_id) for r in table.ranks] == [
        (0, "pod-a", 0),
        (1, "pod-b", 1),
        (2, "pod-c", 2),
        (3, "pod-d", 3),
    ]


def test_template2_rank_ids_follow_file_order_without_rank_id(write):
    data = template2(3)
    for instance in data["group_list"][0]["instance_list"]:
        del instance["rank_id"]
    data["group_list"][0]["instance_list"].reverse()
    table = rank_table.load(write(data))
    assert [r.pod_name for r in table.ranks] == ["pod-2", "pod-1", "pod-0"]


def test_template2_instance_with_several_devices(write):
    data = template2(2)
    instances = data["group_list"][0]["instance_list"]
    instances[0]["devices"].append({"device_id": "4"})
    instances[1]["rank_id"] = "2"
    data["group_list"][0]["device_count"] = "3"
    table = rank_table.load(write(data))
    assert [(r.rank_id, r.pod_name, r.device_id) for r in table.ranks] == [
        (0, "pod-0", 0),
        (1, "pod-0", 4),
        (2, "pod-1", 1),
    ]


def test_rank_ids_as_json_numbers_and_sorted_by_rank(write):
    data = template1()
    data["server_count"] = 1
    devices = data["server_list"][0]["device"]
    devices[0]["rank_id"], devices[1]["rank_id"] = 1, 0
    table = rank_table.load(write(data))
    assert [(r.rank_id, r.device_id) for r in table.ranks] == [(0, 1), (1, 0)]


def test_empty_device_ip_counts_as_absent(write):
    data = template1()
    data["server_list"][0]["device"][0]["device_ip"] = ""
    assert rank_table.load(write(data)).ranks[0].device_ip is None


def test_an_empty_server_id_is_accepted_only_in_a_single_server_table(write):
    # Zoo wrappers fill server_id from `ifconfig` and device_ip from /etc/hccn.conf: off an Ascend host, both are ""
    data = template1((("10.0.0.10", 1),))
    data["server_list"][0]["server_id"] = ""
    data["server_list"][0]["device"][0]["device_ip"] = ""
    (rank,) = rank_table.load(write(data)).ranks
    assert (rank.server_id, rank.host, rank.device_ip) == ("", "127.0.0.1", None)
    data = template1((("10.0.0.10", 1), ("10.0.0.11", 1)))
    data["server_list"][1]["server_id"] = ""
    path = write(data)
    assert load_error(path) == (
        f'rank table {path}: server_list[1].server_id has invalid value "": must be a non-empty string'
    )


def test_atlas_topology_is_a_warning(write, npu_log):
    path = write(template1((("10.0.0.10", 3),)))
    table = rank_table.load(path)
    assert table.rank_size == 3
    assert npu_log.messages == [
        f'rank table {path} breaks Atlas training topology rules: server "10.0.0.10" has 3 devices (allowed: 1, 2, '
        "4 or 8). Real hardware would reject it; it runs here anyway"
    ]


def test_two_devices_across_clusters_and_unequal_servers_warn(write, npu_log):
    data = template1((("127.0.0.1", 2), ("localhost", 4)))
    data["server_list"][0]["device"][1]["device_id"] = "5"
    rank_table.load(write(data))
    assert 'server "127.0.0.1" uses devices [0, 5], which span both 4-chip clusters (0-3, 4-7)' in npu_log.text
    assert "servers have different device counts [2, 4] (must be equal)" in npu_log.text


def test_valid_atlas_topology_does_not_warn(npu_log):
    rank_table.load(data_file("template1_2servers.json"))
    assert npu_log.messages == []


def test_missing_file(tmp_path):
    path = str(tmp_path / "absent.json")
    assert load_error(path) == f"rank table {path}: cannot read the file: No such file or directory"


def test_a_path_past_path_max_is_named_shortened(tmp_path):
    path = str(tmp_path / "/".join(["a" * 200] * 25))
    message = load_error(path)
    assert message.startswith(f"rank table {path[:200]}... ({len(path)} characters): cannot read the file: ")
    assert len(message) < 400


def test_bad_json_names_the_line(write):
    path = write('{\n  "status": "completed",\n  "server_count": "1"\n  "server_list": []\n}')
    assert load_error(path) == (f"rank table {path}: is not valid JSON: Expecting ',' delimiter at line 4 column 3")


def test_top_level_not_an_object(write):
    path = write("[1, 2]")
    assert load_error(path) == f"rank table {path}: the top level must be a JSON object, got a JSON array"


def test_status_initializing(write):
    data = template1()
    data["status"] = "initializing"
    path = write(data)
    assert load_error(path) == (
        f'rank table {path}: status is "initializing", must be "completed" (\'initializing\' means the '
        "cluster scheduler has not finished writing the table; wait for it or use a finished table)"
    )


def test_status_missing(write):
    data = template1()
    del data["status"]
    path = write(data)
    assert load_error(path) == f'rank table {path}: has no "status" field'


def test_server_count_mismatch(write):
    data = template1()
    data["server_count"] = "2"
    path = write(data)
    assert load_error(path) == f'rank table {path}: server_count is "2", but server_list has 1 servers'


def test_rank_id_not_an_integer(write):
    data = template1((("127.0.0.1", 2), ("localhost", 2)))
    data["server_list"][1]["device"][0]["rank_id"] = "two"
    path = write(data)
    assert load_error(path) == (
        f'rank table {path}: server_list[1].device[0].rank_id has invalid value "two": must be an integer >= 0, '
        'written as a string such as "0" (a JSON number is accepted too)'
    )


def test_negative_rank_id(write):
    data = template1()
    data["server_list"][0]["device"][1]["rank_id"] = -1
    path = write(data)
    assert "server_list[0].device[1].rank_id has invalid value -1: must be an integer >= 0" in load_error(path)


def test_duplicate_rank_id(write):
    data = template1((("127.0.0.1", 2), ("localhost", 2)))
    data["server_list"][1]["device"][1]["rank_id"] = "1"
    path = write(data)
    assert load_error(path) == (
        f"rank table {path}: server_list[1].device[1].rank_id is 1, already the rank of "
        "server_list[0].device[1]; rank ids must be unique"
    )


def test_rank_ids_with_a_gap(write):
    data = template1((("127.0.0.1", 2), ("localhost", 2)))
    data["server_list"][1]["device"][0]["rank_id"] = "7"
    path = write(data)
    assert load_error(path) == (
        f"rank table {path}: server_list[1].device[0].rank_id is 7, but the table has 4 "
        "ranks, so rank ids must be 0..3 without gaps (missing: [2])"
    )


def test_duplicate_device_id_on_a_server(write):
    data = template1((("10.0.0.10", 2),))
    data["server_list"][0]["device"][1]["device_id"] = "0"
    path = write(data)
    assert load_error(path) == (
        f"rank table {path}: server_list[0].device[1].device_id is 0, already used by "
        'server_list[0].device[0] on server "10.0.0.10"; device ids must be unique per '
        "server"
    )


@pytest.mark.parametrize("device_id", ["16", "99", "100000000000000000000", 99])
def test_device_ids_beyond_a_servers_npus_are_refused(write, device_id):
    data = template1((("10.0.0.10", 1),))
    data["server_list"][0]["device"][0]["device_id"] = device_id
    path = write(data)
    assert "server_list[0].device[0].device_id has invalid value" in load_error(path)
    assert "device ids are 0..15" in load_error(path)


def test_same_device_id_on_two_servers_is_fine(write):
    table = rank_table.load(write(template1((("127.0.0.1", 1), ("localhost", 1)))))
    assert [r.device_id for r in table.ranks] == [0, 0]


def test_duplicate_server_id(write):
    data = template1((("10.0.0.10", 1), ("10.0.0.10", 1)))
    path = write(data)
    assert load_error(path) == (
        f'rank table {path}: server_list[1].server_id "10.0.0.10" is also the server_id '
        "of server_list[0]; server ids must be unique"
    )


def test_bad_device_ip(write):
    data = template1()
    data["server_list"][0]["device"][1]["device_ip"] = "192.168.1.300"
    path = write(data)
    assert load_error(path) == (
        f"rank table {path}: server_list[0].device[1].device_ip has invalid value "
        '"192.168.1.300": must be an IPv4 or IPv6 address such as "192.168.1.8"'
    )


def test_bad_host_ip(write):
    data = template1()
    data["server_list"][0]["host_ip"] = "host-a"
    path = write(data)
    assert load_error(path) == (
        f'rank table {path}: server_list[0].host_ip has invalid value "host-a": must be '
        'an IPv4 or IPv6 address such as "192.168.1.8"'
    )


def test_missing_device_id(write):
    data = template1()
    del data["server_list"][0]["device"][0]["device_id"]
    path = write(data)
    assert load_error(path) == f'rank table {path}: server_list[0].device[0] has no "device_id" field'


def test_empty_server_list(write):
    data = template1()
    data["server_list"] = []
    path = write(data)
    assert load_error(path) == f"rank table {path}: server_list must be a non-empty JSON array, got []"


def test_device_not_an_object(write):
    data = template1()
    data["server_list"][0]["device"][0] = "0"
    path = write(data)
    assert load_error(path) == f"rank table {path}: server_list[0].device[0] must be a JSON object, got a string"


def test_unreachable_server_name_in_a_multi_server_table(write):
    path = write(template1((("127.0.0.1", 1), ("node-1.invalid", 1))))
    assert load_error(path) == (
        f'rank table {path}: server_list[1].server_id "node-1.invalid" is neither an IP address nor a resolvable '
        "host name, and the table has 2 servers, so the processes of its ranks cannot be reached; use the "
        'server\'s IP address as server_id or add a "host_ip"'
    )


def test_both_layouts(write):
    data = template1()
    data["group_list"] = template2()["group_list"]
    path = write(data)
    assert load_error(path) == (
        f'rank table {path}: has both "server_list" (template 1) and "group_list" (template 2); use one layout'
    )


def test_neither_layout(write):
    path = write({"status": "completed"})
    assert load_error(path) == (
        f'rank table {path}: has neither "server_list" (template 1) nor "group_list" (template 2)'
    )


def test_template2_duplicate_pod_name(write):
    data = template2(2)
    data["group_list"][0]["instance_list"][1]["pod_name"] = "pod-0"
    path = write(data)
    assert load_error(path) == (
        f'rank table {path}: group_list[0].instance_list[1].pod_name "pod-0" is also the '
        "pod_name of group_list[0].instance_list[0]; pod names must be unique"
    )


def test_template2_some_instances_without_rank_id(write):
    data = template2(3)
    del data["group_list"][0]["instance_list"][2]["rank_id"]
    path = write(data)
    assert load_error(path) == (
        f'rank table {path}: group_list[0].instance_list[2] has no "rank_id", but '
        "group_list[0].instance_list[0] has one; give every instance a rank_id or none"
    )


def test_template2_device_count_mismatch(write):
    data = template2(2)
    data["group_list"][0]["device_count"] = "8"
    path = write(data)
    assert load_error(path) == (
        f'rank table {path}: group_list[0].device_count is "8", but the instances list 2 devices'
    )


def test_template2_two_groups(write):
    data = template2(1)
    data["group_list"].append(copy.deepcopy(data["group_list"][0]))
    data["group_count"] = "2"
    path = write(data)
    assert load_error(path) == (
        f"rank table {path}: group_list has 2 groups; a template 2 rank table must have exactly one"
    )


def test_template2_duplicate_rank_through_several_devices(write):
    data = template2(2)
    data["group_list"][0]["instance_list"][0]["devices"].append({"device_id": "4"})
    data["group_list"][0]["device_count"] = "3"
    path = write(data)
    assert load_error(path) == (
        f"rank table {path}: group_list[0].instance_list[1].rank_id is 1, already the "
        "rank of group_list[0].instance_list[0].devices[1]; rank ids must be unique"
    )
