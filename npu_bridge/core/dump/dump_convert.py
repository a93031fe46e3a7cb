"""Converting dump files to .npy, named as msaccucmp names them: {dump file}.{input|output}.{index}.npy.

Tensors are written in their logical layout (device formats undone, see dump_layouts). Opdebug records
become {record}.output.0.json with the decoded overflow block. The directories below a converted tree are
kept. Damaged files do not stop the conversion: they are listed in the result.
"""

import dataclasses
import json
import os
from typing import List, Tuple

import numpy as np

from npu_bridge.core.dump import dump_file, dump_tree
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
    """
    if isinstance(sources, (str, os.PathLike)):
        sources = [sources]
    work = []
    for source in sources:
        base = source if os.path.isdir(source) else os.path.dirname(os.path.abspath(source))
        artifacts = [a for a in dump_tree.scan(source) if a.name.kind in ("dump", "opdebug")]
        work.extend((artifact, os.path.relpath(os.path.dirname(artifact.path), base)) for artifact in artifacts)
    dump_tree.require_artifacts(", ".join(map(str, sources)), work, "dump files")
    result = ConvertResult()
    for done, (artifact, relative) in enumerate(work, 1):
        target_dir = os.path.normpath(os.path.join(output_dir, relative))
        try:
            _convert_one(artifact, target_dir, result)
        except (DumpFormatError, OSError) as e:
            result.failures.append((artifact.path, str(e)))
        if progress:
            progress(done, len(work))
    return result


def _convert_one(artifact, target_dir, result):
    loaded = dump_file.load(artifact.path, artifact.name)
    os.makedirs(target_dir, exist_ok=True)
    base = os.path.join(target_dir, os.path.basename(artifact.path))
    if loaded.overflow is not None:
        path = f"{base}.output.0.json"
        with open(path, "w", encoding="utf-8") as f:
            json.dump(loaded.overflow, f, indent=1)
        result.written.append(path)
        return
    for tensor in loaded.tensors:
        array, _ = tensor.logical_array()
        if array is None:
            result.skipped.append(f"{artifact.path}: {tensor.io} {tensor.index} ({tensor.dtype_name})")
            continue
        path = f"{base}.{tensor.io}.{tensor.index}.npy"
        np.save(path, array)
        result.written.append(path)
