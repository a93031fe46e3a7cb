"""Reads and validates a rank table file (``RANK_TABLE_FILE``, Ascend's "hccl.json").

Two layouts exist (docs/multi_host.md shows both):

Template 1, server based (version "1.0"; "1.2" adds ``host_ip``, ``super_device_id``, ``super_pod_list``
and more, which are accepted and ignored unless named below)::

    {"status": "completed", "version": "1.0", "server_count": "1",
     "server_list": [{"server_id": "10.0.0.10", "host_ip": "10.0.0.10",
                      "device": [{"device_id": "0", "device_ip": "192.168.1.8", "rank_id": "0"}]}]}

Template 2, pod based (legacy)::

    {"status": "completed", "group_count": "1",
     "group_list": [{"group_name": "job", "instance_count": "1", "device_count": "1",
                     "instance_list": [{"pod_name": "pod-0", "rank_id": "0", "server_id": "10.0.0.10",
                                        "devices": [{"device_id": "0", "device_ip": "192.168.1.8"}]}]}]}

Rules enforced (each violation raises ``RankTableError`` naming the file, the JSON location, the bad value
and what is allowed):
  * the file is readable UTF-8 JSON whose top level is an object with exactly one of ``server_list`` /
    ``group_list``;
  * ``status`` is "completed" ("initializing" means the cluster scheduler has not finished the table:
    ``load_completed`` reads it again until it is, as Volcano / MindCluster fill a mounted table once every pod
    is scheduled);
  * counts that are present agree with the lists (``server_count``, ``group_count``, ``instance_count``,
    ``device_count`` / ``device_num``, ``server_num``); template 1 requires ``server_count``;
  * integers are non-negative and written as strings ("0", as upstream writes them) or JSON numbers;
  * rank ids are unique and contiguous from 0; device ids are unique per server; template 1 server ids and
    template 2 pod names are unique; ``device_ip``, ``host_ip`` and ``container_ip`` are IP addresses when
    present and non-empty; server ids are non-empty strings, except in a template 1 table with a single server
    (zoo wrappers fill ``server_id`` from ``ifconfig`` / ``/etc/hccn.conf``, which give nothing off an Ascend
    host);
  * template 2 has exactly one group. Its ranks are the devices of its instances: an instance's
    ``rank_id`` is the rank of its first device and its k-th device has rank ``rank_id + k``; without
    ``rank_id`` on any instance, ranks are numbered in file order. Some instances with and some without a
    ``rank_id`` is an error.

Atlas training topology rules (1, 2, 4 or 8 devices per server, the same count on every server, 2 or 4
devices inside one 4-chip cluster 0-3 / 4-7) are hardware constraints: a violation is logged as a warning.

Host address of a rank (where its process can be reached by the collective runtime):
  * a table with a single server: 127.0.0.1. Every rank then runs on this machine, and loopback works
    even when the table was written for another machine (a copied example), where its addresses would not;
  * otherwise the server's ``container_ip`` when present (the pod's address: MindCluster's Ascend Operator writes
    it, next to the node's ``host_ip`` and a ``server_id`` that need not be an address, for the pods of a
    Kubernetes job), else its ``host_ip``, else its ``server_id`` when that is an IP address or a resolvable host
    name; anything else is an error, since the other servers' processes could not be reached.
"""

import dataclasses
import functools
import ipaddress
import json
import socket
import time
from typing import Optional

from npu_bridge.core.runtime import bounded_files, log
from npu_bridge.core.runtime.errors import RankTableError, shortened_text

LOOPBACK = "127.0.0.1"
COMPLETED = "completed"
KNOWN_VERSIONS = ("1.0", "1.2")
ATLAS_DEVICES_PER_SERVER = (1, 2, 4, 8)
ATLAS_CLUSTER_SIZE = 4
MAX_DEVICE_ID = 15  # Ascend servers hold 8 or 16 NPUs
_INT_ALLOWED = 'must be an integer >= 0, written as a string such as "0" (a JSON number is accepted too)'


@dataclasses.dataclass(frozen=True)
class RankInfo:
    """One rank of the world.

    Attributes:
      rank_id: the global rank id.
      server_id: the server (machine) the rank runs on; ranks with equal server_id are local to each other.
      device_id: the rank's device id on its server; None when the world's description does not say.
      device_ip: the device's NIC address from the rank table, None when absent (no effect here).
      host: address (IP or host name) where the rank's process can be reached; None when the world's
        description does not say.
      pod_name: the rank's pod (template 2 rank tables), else None.
    """

    rank_id: int
    server_id: str
    device_id: Optional[int]
    device_ip: Optional[str]
    host: Optional[str]
    pod_name: Optional[str] = None


@dataclasses.dataclass(frozen=True)
class RankTable:
    """A validated rank table.

    Attributes:
      path: the file it was read from.
      template: 1 (server based) or 2 (pod based).
      server_count: the number of distinct servers.
      ranks: tuple of ``RankInfo`` ordered by rank id, so ``ranks[i].rank_id == i``.
    """

    path: str
    template: int
    server_count: int
    ranks: tuple

    @property
    def rank_size(self):
        """The number of ranks."""
        return len(self.ranks)


@dataclasses.dataclass
class _Device:
    location: str
    rank_location: str
    rank_id: int
    server_id: str
    server_location: str
    host_ip: Optional[str]
    device_id: int
    device_ip: Optional[str]
    pod_name: Optional[str]


def load(path):
    """Reads and validates a rank table file.

    Args:
      path: the rank table file (the value of ``RANK_TABLE_FILE``).
    Returns:
      A ``RankTable``.
    Raises:
      RankTableError: the file is unreadable, not JSON, or breaks a rule listed in the module docstring.
    """
    return _Parser(path).parse()


def load_completed(path, timeout_seconds, poll_seconds=0.5, clock=time.monotonic, sleep=time.sleep):
    """Reads a rank table, waiting while its ``status`` is "initializing".

    Args:
      path: the rank table file.
      timeout_seconds: how long to wait for "completed" (``HCCL_CONNECT_TIMEOUT``).
      poll_seconds: how often to read the file again.
      clock, sleep: time functions (tests pass their own).
    Returns:
      A ``RankTable``.
    Raises:
      RankTableError: as ``load``; or the table was still "initializing" after ``timeout_seconds``.
    """
    deadline = clock() + timeout_seconds
    told = False
    while True:
        parser = _Parser(path)
        data = parser.read()
        if data.get("status") != "initializing":  # judged on this read: the file may be replaced any moment
            return parser.parse(data)
        if clock() >= deadline:
            raise RankTableError(
                f'rank table {shortened_text(path)}: status is still "initializing" after {timeout_seconds} s '
                f'(HCCL_CONNECT_TIMEOUT), and must be "{COMPLETED}": the scheduler has not filled it in; check that '
                "every pod of the job was scheduled, or raise HCCL_CONNECT_TIMEOUT"
            )
        if not told:
            log.logger.warning(
                'rank table %s: status is "initializing"; waiting up to %s s (HCCL_CONNECT_TIMEOUT) for the '
                "scheduler to complete it",
                shortened_text(path),
                timeout_seconds,
            )
            told = True
        sleep(poll_seconds)


class _Parser:
    """Parses one file; every error names ``path`` and a JSON location like ``server_list[1].device[0]``."""

    def __init__(self, path):
        self.path = path

    def error(self, message):
        return RankTableError(f"rank table {shortened_text(self.path)}: {message}")

    def parse(self, data=None):
        """Validates the table (``data``: its JSON object when already read); returns a ``RankTable``."""
        data = self.read() if data is None else data
        status = self._field(data, "status", "")
        if status != COMPLETED:
            hint = (
                " ('initializing' means the cluster scheduler has not finished writing the table; "
                "wait for it or use a finished table)"
                if status == "initializing"
                else ""
            )
            raise self.error(f'status is {_short(status)}, must be "{COMPLETED}"{hint}')
        has_servers, has_groups = "server_list" in data, "group_list" in data
        if has_servers and has_groups:
            raise self.error('has both "server_list" (template 1) and "group_list" (template 2); use one layout')
        if has_servers:
            template, devices = 1, self._template1(data)
        elif has_groups:
            template, devices = 2, self._template2(data)
        else:
            raise self.error('has neither "server_list" (template 1) nor "group_list" (template 2)')
        self._check_rank_ids(devices)
        self._check_device_ids(devices)
        hosts = self._hosts(devices)
        _warn_atlas_topology(self.path, devices)
        ranks = tuple(
            RankInfo(
                rank_id=d.rank_id,
                server_id=d.server_id,
                device_id=d.device_id,
                device_ip=d.device_ip,
                host=hosts[d.server_id],
                pod_name=d.pod_name,
            )
            for d in sorted(devices, key=lambda d: d.rank_id)
        )
        return RankTable(path=self.path, template=template, server_count=len(hosts), ranks=ranks)

    def read(self):
        """The file's top-level JSON object."""
        try:
            text = bounded_files.read_text(self.path)
        except OSError as e:
            raise self.error(f"cannot read the file: {e.strerror or e}") from None
        try:
            data = bounded_files.parse_json(text)
        except json.JSONDecodeError as e:
            raise self.error(f"is not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
        if not isinstance(data, dict):
            raise self.error(f"the top level must be a JSON object, got {_json_type(data)}")
        return data

    # Field readers. `location` is the JSON path of the containing object ("" for the top level).

    def _field(self, obj, key, location):
        if key not in obj:
            where = f"{location} has" if location else "has"
            raise self.error(f'{where} no "{key}" field')
        return obj[key]

    def _object(self, value, location):
        if not isinstance(value, dict):
            raise self.error(f"{location} must be a JSON object, got {_json_type(value)}")
        return value

    def _list(self, value, location):
        if not isinstance(value, list) or not value:
            raise self.error(f"{location} must be a non-empty JSON array, got {_short(value)}")
        return value

    def _text(self, value, location):
        if not isinstance(value, str) or not value:
            raise self.error(f"{location} has invalid value {_short(value)}: must be a non-empty string")
        return value

    def _int(self, value, location):
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
        if isinstance(value, str) and value.isascii() and value.isdigit():
            return int(value)
        raise self.error(f"{location} has invalid value {_short(value)}: {_INT_ALLOWED}")

    def _optional_ip(self, obj, key, location):
        value = obj.get(key, "")
        if value == "":
            return None
        if not isinstance(value, str) or not is_ip(value):
            raise self.error(
                f"{_join(location, key)} has invalid value {_short(value)}: must be an IPv4 or IPv6 "
                f'address such as "192.168.1.8"'
            )
        return value

    def _count(self, obj, key, location, actual, what, required=False):
        """Checks an optional (or required) count field; `what` formats the actual count for the error."""
        if key not in obj and not required:
            return
        count = self._int(self._field(obj, key, location), _join(location, key))
        if count != actual:
            raise self.error(f"{_join(location, key)} is {_short(obj[key])}, but {what.format(actual)}")

    # Layouts.

    def _template1(self, data):
        if "version" not in data:
            log.warn_once(
                ("rank_table_version", self.path),
                'rank table %s has no "version"; reading it as template 1 version 1.0',
                self.path,
            )
        elif data["version"] not in KNOWN_VERSIONS:
            log.warn_once(
                ("rank_table_version", self.path),
                "rank table %s has version %s; known versions are %s. Reading it as template 1",
                shortened_text(self.path),
                _short(data["version"]),
                ", ".join(KNOWN_VERSIONS),
            )
        servers = self._list(self._field(data, "server_list", ""), "server_list")
        self._count(data, "server_count", "", len(servers), "server_list has {} servers", required=True)
        devices = []
        first_location_of_server = {}
        for i, server in enumerate(servers):
            location = f"server_list[{i}]"
            self._object(server, location)
            server_id = self._field(server, "server_id", location)
            if not (server_id == "" and len(servers) == 1):  # one server: its ranks use loopback, whatever its id
                server_id = self._text(server_id, f"{location}.server_id")
            if server_id in first_location_of_server:
                raise self.error(
                    f"{location}.server_id {_short(server_id)} is also the server_id of "
                    f"{first_location_of_server[server_id]}; server ids must be unique"
                )
            first_location_of_server[server_id] = location
            # A pod's address (MindCluster's tables for Kubernetes jobs) is where its ranks are reached, not its node's
            host_ip = self._optional_ip(server, "container_ip", location) or self._optional_ip(
                server, "host_ip", location
            )
            for j, device in enumerate(self._list(self._field(server, "device", location), f"{location}.device")):
                device_location = f"{location}.device[{j}]"
                self._object(device, device_location)
                devices.append(
                    _Device(
                        location=device_location,
                        rank_location=f"{device_location}.rank_id",
                        rank_id=self._int(
                            self._field(device, "rank_id", device_location), f"{device_location}.rank_id"
                        ),
                        server_id=server_id,
                        server_location=location,
                        host_ip=host_ip,
                        device_id=self._device_id(device, device_location),
                        device_ip=self._optional_ip(device, "device_ip", device_location),
                        pod_name=None,
                    )
                )
        return devices

    def _template2(self, data):
        groups = self._list(self._field(data, "group_list", ""), "group_list")
        self._count(data, "group_count", "", len(groups), "group_list has {} groups")
        if len(groups) != 1:
            raise self.error(f"group_list has {len(groups)} groups; a template 2 rank table must have exactly one")
        group = self._object(groups[0], "group_list[0]")
        instances = self._list(self._field(group, "instance_list", "group_list[0]"), "group_list[0].instance_list")
        self._count(group, "instance_count", "group_list[0]", len(instances), "instance_list has {} instances")
        with_rank_id = [i for i, inst in enumerate(instances) if isinstance(inst, dict) and "rank_id" in inst]
        devices = []
        pods = {}
        for i, instance in enumerate(instances):
            location = f"group_list[0].instance_list[{i}]"
            self._object(instance, location)
            server_id = self._text(self._field(instance, "server_id", location), f"{location}.server_id")
            pod_name = None
            if "pod_name" in instance:
                pod_name = self._text(instance["pod_name"], f"{location}.pod_name")
                if pod_name in pods:
                    raise self.error(
                        f"{location}.pod_name {_short(pod_name)} is also the pod_name of "
                        f"{pods[pod_name]}; pod names must be unique"
                    )
                pods[pod_name] = location
            if with_rank_id and "rank_id" not in instance:
                raise self.error(
                    f'{location} has no "rank_id", but group_list[0].instance_list[{with_rank_id[0]}] '
                    "has one; give every instance a rank_id or none"
                )
            first_rank = self._int(instance["rank_id"], f"{location}.rank_id") if with_rank_id else len(devices)
            for k, device in enumerate(self._list(self._field(instance, "devices", location), f"{location}.devices")):
                device_location = f"{location}.devices[{k}]"
                self._object(device, device_location)
                if with_rank_id:
                    rank_location = f"{location}.rank_id" + (f" + {k} (devices[{k}])" if k else "")
                else:
                    rank_location = f"{device_location} (ranks numbered in file order)"
                devices.append(
                    _Device(
                        location=device_location,
                        rank_location=rank_location,
                        rank_id=first_rank + k,
                        server_id=server_id,
                        server_location=location,
                        host_ip=None,
                        device_id=self._device_id(device, device_location),
                        device_ip=self._optional_ip(device, "device_ip", device_location),
                        pod_name=pod_name,
                    )
                )
        for key in ("device_count", "device_num"):
            self._count(group, key, "group_list[0]", len(devices), "the instances list {} devices")
        self._count(
            group,
            "server_num",
            "group_list[0]",
            len({d.server_id for d in devices}),
            "the instances are on {} distinct servers",
        )
        return devices

    def _device_id(self, device, location):
        device_id = self._int(self._field(device, "device_id", location), f"{location}.device_id")
        if device_id > MAX_DEVICE_ID:
            raise self.error(
                f"{location}.device_id has invalid value {_short(device_id)}: an Ascend server holds at most "
                f"{MAX_DEVICE_ID + 1} NPUs, so device ids are 0..{MAX_DEVICE_ID}"
            )
        return device_id

    # Checks across entries.

    def _check_rank_ids(self, devices):
        size = len(devices)
        seen = {}
        for d in devices:
            if d.rank_id in seen:
                raise self.error(
                    f"{d.rank_location} is {d.rank_id}, already the rank of {seen[d.rank_id]}; rank ids must be unique"
                )
            seen[d.rank_id] = d.location
        for d in devices:
            if d.rank_id >= size:
                missing = sorted(set(range(size)) - set(seen))
                raise self.error(
                    f"{d.rank_location} is {d.rank_id}, but the table has {size} ranks, so rank ids must "
                    f"be 0..{size - 1} without gaps (missing: {missing})"
                )

    def _check_device_ids(self, devices):
        seen = {}
        for d in devices:
            key = (d.server_id, d.device_id)
            if key in seen:
                raise self.error(
                    f"{d.location}.device_id is {d.device_id}, already used by {seen[key]} on server "
                    f"{_short(d.server_id)}; device ids must be unique per server"
                )
            seen[key] = d.location

    def _hosts(self, devices):
        servers = {}
        for d in devices:
            servers.setdefault(d.server_id, d)
        if len(servers) == 1:
            return {server_id: LOOPBACK for server_id in servers}
        hosts = {}
        for server_id, d in servers.items():
            if d.host_ip:
                hosts[server_id] = d.host_ip
            elif is_ip(server_id) or _resolvable(server_id):
                hosts[server_id] = server_id
            else:
                raise self.error(
                    f"{d.server_location}.server_id {_short(server_id)} is neither an IP address nor a resolvable "
                    f"host name, and the table has {len(servers)} servers, so the processes of its ranks cannot be "
                    'reached; use the server\'s IP address as server_id or add a "host_ip"'
                )
        return hosts


_TOPOLOGY_PROBLEMS_SHOWN = 3


def _warn_atlas_topology(path, devices):
    per_server = {}
    for d in devices:
        per_server.setdefault(d.server_id, []).append(d.device_id)
    problems = []
    for server_id, ids in per_server.items():
        if len(ids) not in ATLAS_DEVICES_PER_SERVER:
            problems.append(f"server {_short(server_id)} has {len(ids)} devices (allowed: 1, 2, 4 or 8)")
        elif len(ids) in (2, 4) and len({i // ATLAS_CLUSTER_SIZE for i in ids}) > 1:
            problems.append(
                f"server {_short(server_id)} uses devices {sorted(ids)}, which span both 4-chip clusters (0-3, 4-7)"
            )
    counts = sorted({len(ids) for ids in per_server.values()})
    if len(counts) > 1:
        problems.append(f"servers have different device counts {counts} (must be equal)")
    if problems:
        shown = problems[:_TOPOLOGY_PROBLEMS_SHOWN]
        if len(problems) > len(shown):
            shown.append(f"and {len(problems) - len(shown)} more")
        log.warn_once(
            ("rank_table_topology", path, tuple(problems)),
            "rank table %s breaks Atlas training topology rules: %s. Real hardware would reject it; "
            "it runs here anyway",
            path,
            "; ".join(shown),
        )


def is_ip(text):
    """True when ``text`` is an IPv4 or IPv6 address (not a host name)."""
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


@functools.lru_cache(maxsize=256)
def _resolvable(name):
    try:
        socket.getaddrinfo(name, None)
    except (OSError, UnicodeError):
        return False
    return True


def _join(location, key):
    return f"{location}.{key}" if location else key


def _json_type(value):
    names = {
        dict: "a JSON object",
        list: "a JSON array",
        str: "a string",
        bool: "a boolean",
        type(None): "null",
        int: "a number",
        float: "a number",
    }
    return names.get(type(value), type(value).__name__)


def _short(value):
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."
