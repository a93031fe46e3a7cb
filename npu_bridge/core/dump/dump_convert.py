"""Converting dump files to .npy, named as msaccucmp names them: {dump file}.{input|output}.{index}.npy.

Tensors are written in their logical layout (device formats undone, see dump_layouts). Opdebug records
become {record}.output.0.json with the decoded overflow block. The directories below a converted tree are
kept. Damaged files do not stop the conversion: they are listed in the result.

Safe by default (``safe_paths``): the output directory is taken as given, every directory below it is created by
this process or must be a real directory of this user (a symlink or another user's directory is refused for the
files that belong there), and every file is written to a new file under an unpredictable name, created without
following symlinks, and renamed into place (a symlink planted at its name is replaced, never written through). The
files hold tensor data: they are owner-only (``safe_paths.data_mode``, ``NPU_BRIDGE_DATA_MODE``), and so are the
directories created for them.
"""

import dataclasses
import json
import os
from typing import List, Tuple

import numpy as np

from npu_bridge.core.dump import dump_file, dump_tree
from npu_bridge.core.runtime import safe_paths
from npu_bridge.core.runtime.errors import DumpFormatError


@dataclasses.dataclass
class ConvertResult:
    """What ``convert`` did.

    Attributes:
      written: the files written.
      failures: (path, message) of every file that could not be converted.
      skipped: tensors without numeric values (strings, resources), as "file: input 0".
    """

    written: List[str] = dataclasses.field(default_factory=list)
    failures: List[Tuple[str, str]] = dataclasses.field(default_factory=list)
    skipped: List[str] = dataclasses.field(default_factory=list)


def convert(sources, output_dir, progress=None):
    """Converts dump files and trees.

    Args:
      sources: a path or a list of paths (dump files, Opdebug records or directories).
      output_dir: where the .npy/.json files go (created when missing).
      progress: optional callable(done, total).
    Returns:
      A ``ConvertResult``.
    Raises:
      DumpTreeError: a source does not exist, or the sources hold no dump files.
      EnvironmentVariableError: ``NPU_BRIDGE_DATA_MODE`` is malformed.
    """
    if isinstance(sources, (str, os.PathLike)):
        sources = [sources]
    work = []
    for source in sources:
        base = source if os.path.isdir(source) else os.path.dirname(os.path.abspath(source))
        artifacts = [a for a in dump_tree.scan(source) if a.name.kind in ("dump", "opdebug")]
        work.extend((artifact, os.path.relpath(os.path.dirname(artifact.path), base)) for artifact in artifacts)
    dump_tree.require_artifacts(", ".join(map(str, sources)), work, "dump files")
    file_mode = safe_paths.data_mode()
    result = ConvertResult()
    for done, (artifact, relative) in enumerate(work, 1):
        try:
            target_dir = safe_paths.make_dirs(output_dir, relative, mode=safe_paths.directory_mode(file_mode))
            _convert_one(artifact, target_dir, result, file_mode)
        except (DumpFormatError, OSError) as e:
            result.failures.append((artifact.path, str(e)))
        if progress:
            progress(done, len(work))
    return result


def _convert_one(artifact, target_dir, result, file_mode):
    loaded = dump_file.load(artifact.path, artifact.name)
    base = os.path.join(target_dir, os.path.basename(artifact.path))
    if loaded.overflow is not None:
        path = f"{base}.output.0.json"
        safe_paths.write_file(path, json.dumps(loaded.overflow, indent=1), file_mode)
        result.written.append(path)
        return
    for tensor in loaded.tensors:
        array, _ = tensor.logical_array()
        if array is None:
            result.skipped.append(f"{artifact.path}: {tensor.io} {tensor.index} ({tensor.dtype_name})")
            continue
        path = f"{base}.{tensor.io}.{tensor.index}.npy"
        with safe_paths.open_new(path, file_mode) as (f, _):
            np.save(f, array)
        result.written.append(path)
