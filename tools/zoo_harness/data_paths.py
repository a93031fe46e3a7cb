"""Makes the paths a training script names under its data path lead to the synthetic data.

Zoo wrappers hand their scripts paths such as ``--data_dir=${data_path}/ILSVRC2012`` or
``--input_file=${data_path}/data/news_1.tfrecord``. For each such path not in the data folder already, a folder name
(no suffix) becomes a folder holding links to the kit's files and folders (only those, as loaders that read every
file of a folder want); a file name whose suffix is one the kit wrote (``.tfrecord``, ``.json``, ``.txt``, ...)
becomes a link to the kit's file of that kind (with the same name, else the first). A path one level above the
data folder (``--input_files_dir=${data_path}/../wikipedia_128``) is made in the entry's own folder, which the
harness owns, when nothing there has that name yet (so never in the model's copy). Nothing else outside the data
folder is touched, and a path that climbs further (``../..``) or holds shell syntax the harness cannot read
(``$x``, ``*``) is left alone.
"""

import os
import re

_REFERENCE = re.compile(r"\$\{?data_path\}?/+([^\s\"'`;|&>)]+)")
# Suffixes that name one file of a kind; a name without any is a folder.
_FILE_SUFFIXES = (
    ".tfrecord",
    ".tfrecords",
    ".record",
    ".json",
    ".txt",
    ".npz",
    ".npy",
    ".mat",
    ".csv",
    ".pkl",
    ".h5",
    ".hdf5",
)


def referenced(script_text):
    """The relative paths ``script_text`` names under ``$data_path`` / ``${data_path}``, in order, once each."""
    found = []
    for match in _REFERENCE.finditer(script_text):
        path = match.group(1).rstrip("/,")
        parts = path.split("/")
        if parts[0] == ".." and len(parts) > 1:
            parts = parts[1:]  # one level up: the entry's own folder
        if not path or any(p in ("", ".", "..") for p in parts) or re.search(r"[$*?{}\[\]\\]", path):
            continue
        if path not in found:
            found.append(path)
    return found


_SHARD = re.compile(r"-\d{5}-of-\d{5}$")


def _kind(name):
    """The kind of file a name is: its suffix, "shard" for ``train-00000-of-00002``, else ""."""
    suffix = next((s for s in _FILE_SUFFIXES if name.endswith(s)), "")
    return suffix or ("shard" if _SHARD.search(name) else "")


def _kit_files(data_dir):
    files = {}
    for name in sorted(os.listdir(data_dir)):
        if os.path.isfile(os.path.join(data_dir, name)) and _kind(name):
            files.setdefault(_kind(name), []).append(name)
    return files


def _file_for(name, kit_files):
    kind = _kind(name)
    candidates = kit_files.get(kind, [])
    if not candidates and kind in (".tfrecord", ".tfrecords", ".record"):
        candidates = [n for k in (".tfrecord", ".tfrecords", ".record", "shard") for n in kit_files.get(k, [])]
    return name if name in candidates else (candidates[0] if candidates else None)


def _kit_entries(root):
    """The kit's files and folders at the top of the data folder (not its alias links): (name, real path) pairs."""
    entries = []
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name)
        if not (os.path.islink(path) and os.readlink(path) == "."):
            entries.append((name, os.path.realpath(path)))
    return entries


def _fill(folder, entries):
    os.mkdir(folder)
    for name, path in entries:
        os.symlink(path, os.path.join(folder, name))


def link(script_text, data_dir):
    """Creates the folders and links described above in ``data_dir``; returns the relative paths it made."""
    root = os.path.realpath(data_dir)
    kit_files, entries = _kit_files(root), _kit_entries(root)
    made = []
    for path in referenced(script_text):
        parts = path.split("/")
        base, prefix = root, ""
        if parts[0] == "..":
            base, prefix, parts = os.path.dirname(root), "../", parts[1:]
            if os.path.lexists(os.path.join(base, parts[0])):
                continue  # the entry's folder has it already (the model's copy, the data folder, ...)
        folder = base
        for index, part in enumerate(parts):
            target = os.path.join(folder, part)
            if not os.path.lexists(target):
                if index < len(parts) - 1 or not _kind(part) and "." not in part:
                    _fill(target, entries)  # a folder holding the kit's files
                else:
                    source = _file_for(part, kit_files)
                    if source is None:
                        break
                    os.symlink(os.path.realpath(os.path.join(root, source)), target)
                made.append(prefix + "/".join(parts[: index + 1]))
            folder = os.path.realpath(target)
            if not os.path.isdir(folder) or os.path.commonpath([base, folder]) != base:
                break  # a file, or a link out of the folder it started in: nothing below it is made
    return made
