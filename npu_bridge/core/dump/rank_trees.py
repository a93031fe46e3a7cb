"""The rank trees of a multi-rank job's dump: one {dump_path}/{time}/{device_id} directory per rank.

Every rank of a job dumps into its own device directory ({time} is when that rank first dumped, so the ranks of
one job may sit under different {time} directories). ``find`` takes a job's dump_path, a {time} directory, device
directories, or several of these, and returns one ``RankTree`` per device id. A device id found in two
directories means dumps of several jobs (or runs) under one path, and so does a different ``HCCL_IF_BASE_PORT``
in two ranks' run_config.json (npu-run gives every rank of a job the same): both are refused, naming the
directories, as is a path that holds no rank tree.
"""

import dataclasses
import os
from typing import List

from npu_bridge.core.dump import dump_tree, run_config
from npu_bridge.core.runtime.errors import DumpTreeError, shortened_text

LAYOUT = "{dump_path}/{time}/{device_id}/{model_name}/{model_id}/{step}"
JOB_VARIABLE = "HCCL_IF_BASE_PORT"  # the same for every rank of one npu-run job, different between jobs


@dataclasses.dataclass
class RankTree:
    """One rank's dump.

    Attributes:
      device_id: the name of its device directory (the rank's DEVICE_ID; npu-run gives rank r device r).
      root: the device directory.
      artifacts: the ``dump_tree.Artifact`` of its step directories, sorted by path.
    """

    device_id: int
    root: str
    artifacts: List[dump_tree.Artifact]


def find(paths):
    """Finds the rank trees under ``paths``.

    Args:
      paths: directories, each a dump_path, a {time} directory or a device directory.
    Returns:
      ``RankTree`` list sorted by device id.
    Raises:
      DumpTreeError: a path does not exist, holds no rank tree or lies inside one; a device id has two trees; two
        trees belong to different jobs.
    """
    trees = {}
    for path in paths:
        for root, artifacts in _device_directories(path).items():
            trees.setdefault(root, artifacts)  # a tree given twice (a path and a directory above it) counts once
    by_device = {}
    for root, artifacts in sorted(trees.items()):
        device = int(os.path.basename(root))
        other = by_device.get(device)
        if other is not None:
            raise DumpTreeError(
                f"device {device} has two dump trees, {shortened_text(other.root)} and {shortened_text(root)}: "
                "dumps of several jobs (or runs) under one path; give the device directories of one job "
                f"(npu-dump origin {shortened_text(other.root)} ...)"
            )
        by_device[device] = RankTree(device, root, artifacts)
    ranks = [by_device[device] for device in sorted(by_device)]
    _require_one_job(ranks)
    return ranks


def device_directory(path):
    """The device directory of a file in a step directory ({device}/{model name}/{model id}/{step}/{file})."""
    for _ in range(4):
        path = os.path.dirname(path)
    return path


def _device_directories(path):
    """{device directory: its artifacts} of the step directories under ``path``."""
    path = os.path.abspath(os.fspath(path))
    if not os.path.isdir(path):
        if not os.path.exists(path):
            raise DumpTreeError(f"no such dump directory: {shortened_text(path)}")
        raise DumpTreeError(f"{shortened_text(path)} is not a directory; give a job's dump_path ({LAYOUT})")
    found = {}
    for artifact in dump_tree.scan(path):
        if artifact.model is None or artifact.name.kind not in ("dump", "opdebug"):
            continue
        found.setdefault(device_directory(artifact.path), []).append(artifact)
    if not found:
        raise DumpTreeError(
            f"{shortened_text(path)} holds no rank trees: no dump files in {LAYOUT} directories; give a job's "
            "dump_path, one of its {time} directories or device directories"
        )
    for root in found:
        name = os.path.basename(root)
        if not (name.isascii() and name.isdigit()):
            raise DumpTreeError(
                f"{shortened_text(root)} holds model directories but is not named by a device id; give a job's "
                f"dump_path ({LAYOUT})"
            )
        if root != path and not root.startswith(path.rstrip(os.sep) + os.sep):
            raise DumpTreeError(
                f"{shortened_text(path)} lies inside the rank tree {shortened_text(root)}; give that device "
                "directory or a directory above it"
            )
    return found


def _require_one_job(ranks):
    seen = []
    for rank in ranks:
        _, config = run_config.read(rank.root)
        value = (config or {}).get("environment", {}).get(JOB_VARIABLE)
        if value is None:
            continue
        for other, other_value in seen:
            if other_value != value:
                raise DumpTreeError(
                    f"the dumps of device {other.device_id} ({shortened_text(other.root)}) and device "
                    f"{rank.device_id} ({shortened_text(rank.root)}) come from different jobs ({JOB_VARIABLE} "
                    f"{shortened_text(other_value)} and {shortened_text(value)} in their run_config.json); give the "
                    "device directories of one job"
                )
        seen.append((rank, value))
