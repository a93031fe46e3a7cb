"""Finding the artifacts in a dump directory tree.

A tree is anything from a dump_path down to one step directory, written here or by Ascend's runtime:
{dump_path}/{time}/{device_id}/{model_name}/{model_id}/{step}/{files}. Golden and converted .npy
directories work too. The step and model of a file are read from the directories that hold it.
"""

import dataclasses
import os
from typing import Optional

from npu_bridge.core.dump import dump_names
from npu_bridge.core.runtime.errors import DumpTreeError

_IGNORED = (dump_names.MAPPING_FILE, dump_names.STATISTICS_FILE)


@dataclasses.dataclass(frozen=True)
class Artifact:
    """One artifact file in a tree.

    Attributes:
      path: the file.
      name: what its (original) file name says (``dump_names.DumpName``).
      step: the step directory's number, None when the file is not in a numbered directory.
      model: "{model_name}/{model_id}" when the step directory sits in one, else None.
    """

    path: str
    name: dump_names.DumpName
    step: Optional[int]
    model: Optional[str]


MAX_DEPTH = 32  # directory levels below a root that scan() walks


def scan(root):
    """Lists the artifacts under ``root`` (or ``root`` itself when it is a file).

    Args:
      root: a directory or a file.
    Returns:
      A list of ``Artifact`` sorted by path; files that are not artifacts are skipped.
    Raises:
      DumpTreeError: ``root`` does not exist.
      ValueError: a mapping.csv is malformed.
    """
    root = os.fspath(root)
    if not os.path.exists(root):
        raise DumpTreeError(f"no such dump directory or file: {root}")
    if os.path.isfile(root):
        directory, base = os.path.split(os.path.abspath(root))
        artifact = _artifact(directory, base, dump_names.read_mapping(directory))
        return [artifact] if artifact else []
    found = []
    for directory, files in walk(root):
        mapping = dump_names.read_mapping(directory)
        for base in sorted(files):
            artifact = _artifact(directory, base, mapping)
            if artifact:
                found.append(artifact)
    return found


def walk(root):
    """Yields (directory, file names) below ``root`` in sorted order, without recursion or symlinked directories.

    Raises:
      DumpTreeError: a directory lies more than ``MAX_DEPTH`` levels below ``root`` (no dump tree is that deep).
    """
    pending = [(root, 0)]
    while pending:
        directory, depth = pending.pop()
        if depth > MAX_DEPTH:
            raise DumpTreeError(
                f"{directory} is more than {MAX_DEPTH} directory levels below {root}; a dump tree "
                "({dump_path}/{time}/{device}/{model}/{model id}/{step}) is not that deep"
            )
        files, subdirectories = [], []
        with os.scandir(directory) as entries:
            for entry in entries:
                (subdirectories if entry.is_dir(follow_symlinks=False) else files).append(entry.name)
        yield directory, files
        pending.extend((os.path.join(directory, d), depth + 1) for d in sorted(subdirectories, reverse=True))


def side_files(root, file_name, above_tree=True):
    """The paths of ``file_name`` (a side file the sessions write, such as op_sources.json) that may hold facts about
    the tree ``root``. Only paths that exist (as any kind of file) are listed, above the tree only this user's or
    root's; the reader checks what they are.

    Args:
      root: the tree (a directory or a file in one).
      file_name: the side file's name.
      above_tree: False lists none above the tree.
    Returns:
      (above, inside): the paths in the directories above the tree, nearest last, and those in its tree (its own
      directory included), in walking order.
    """
    root = os.path.abspath(os.fspath(root))
    directory = root if os.path.isdir(root) else os.path.dirname(root)
    above, parent = [], directory
    while True:
        above.append(os.path.join(parent, file_name))
        if os.path.dirname(parent) == parent:
            break
        parent = os.path.dirname(parent)
    inside = [os.path.join(d, file_name) for d, files in walk(directory) if file_name in files]
    mine_above = [path for path in above[:0:-1] if _own_file(path)] if above_tree else []
    return mine_above, [path for path in inside if os.path.lexists(path)]


def _own_file(path):
    """Whether ``path`` exists and belongs to this user or root: a directory above the tree, such as /tmp, may hold
    files other users planted."""
    try:
        return os.lstat(path).st_uid in (os.getuid(), 0)
    except OSError:
        return False


def _artifact(directory, base, mapping):
    if base.startswith(".") or base in _IGNORED:
        return None
    name = dump_names.parse(mapping.get(base, base))
    if name is None:
        return None
    step_dir = os.path.basename(directory)
    step = int(step_dir) if step_dir.isdigit() else None
    model = None
    if step is not None:
        model_id_dir = os.path.dirname(directory)
        model_id = os.path.basename(model_id_dir)
        if model_id.isdigit():
            model = f"{os.path.basename(os.path.dirname(model_id_dir))}/{model_id}"
    return Artifact(os.path.join(directory, base), name, step, model)


def require_artifacts(root, artifacts, what="dump artifacts"):
    """Raises DumpTreeError naming ``root`` when ``artifacts`` is empty; returns them otherwise."""
    if not artifacts:
        raise DumpTreeError(f"{root} holds no {what} (dump files, Opdebug records or golden .npy files)")
    return artifacts
