"""Extracts every TensorFlow name each TF1 training model of the Ascend model zoo uses, per model directory.

    python3 tools/zoo_names.py --zoo PATH [--out tests/data/tf1/zoo_dir_names.tsv]
                               [--names tests/data/tf1/zoo_names.tsv] [--every-file] [--list] [--check]

PATH is a checkout of Ascend/ModelZoo-TensorFlow (a work tree, or a git directory with ``@<revision>``, e.g.
``/work/.mirror/Ascend+ModelZoo-TensorFlow/repo@HEAD``); nothing is downloaded.

A TF1 model directory is a folder under ``TensorFlow/`` with a ``test/`` folder holding a training script
(``test/train*.sh``: ``train_full_1p.sh``, ``train_performance_1p.sh``, ...), or, for the models that keep their
scripts elsewhere, a model folder (one level below a domain folder: ``TensorFlow/contrib/cv/<model>``; two for
``TensorFlow/built-in/cv/<task>/<model>``) holding a shell script whose name starts with ``train`` or a Python
file with ``train`` in its name. A folder holding such a directory is not one itself, and one inside another
counts once, as the outer one. (At a2c3332a6 that is 463 directories: 407 by their ``test/`` folder.)

A directory's names are those of the files its training runs: the ``.py`` files its ``train*.sh`` scripts start
(``python3.7 ${cur_path}/../train.py``; without one, its ``.py`` files with ``train`` in their name, else the ones
its other shell scripts start, else all of them), and the directory's modules these import, transitively (looked
up from the importing file's folder and every folder above it, as the scripts' ``sys.path`` additions make them
importable; relative imports too). Exports, freezing, inference and unit tests the training does not import are
left out; ``--every-file`` takes every ``.py`` file instead. Imports by computed strings are not followed.

The names of a file are found on its syntax tree (files that do not parse as Python 3, mostly Python 2
scripts, are counted and skipped):

- ``import tensorflow as tf``, ``import tensorflow.compat.v1 as tf``: ``tensorflow`` (compat.v1 is the TF1 API
  the mode gives, so its names are written as ``tensorflow.NAME``, as ``zoo_names.tsv`` writes them);
  ``import tensorflow.contrib.slim as slim``, ``import tensorflow.python.ops.math_ops``: the module;
- ``from tensorflow.x import y [as z]``: ``tensorflow.x.y`` (``tensorflow.compat.v1.x`` -> ``tensorflow.x``);
- ``from npu_bridge.npu_init import *`` binds what upstream's npu_init exports (``tf`` is compat.v1,
  ``RewriterConfig``, ...; read from this repository's facade), unless the file binds that name itself;
- an attribute chain on a name bound as above (``tf.contrib.slim.conv2d``, ``slim.arg_scope``): the whole chain,
  not its prefixes;
- ``NAME = <such a chain>`` binds ``NAME`` to it too (``flags = tf.app.flags``, ``FLAGS = flags.FLAGS``, so
  ``FLAGS.batch_size`` is ``tensorflow.app.flags.FLAGS.batch_size``: a flag the script defines; the names tests
  skip names with ``.FLAGS.``).

``--out`` gets one row per (directory, name), and a row with an empty name for a directory using none;
``--names`` (optional) the names with the number of directories using each
(``tests/data/tf1/zoo_names.tsv``, whose third column, ``resolves_today_compat_v1``, is kept for the names it
already has and is empty for new ones). ``--check`` writes nothing and exits 1 when either file differs.
``--list`` prints the model directories and exits.
"""

import argparse
import ast
import collections
import csv
import fnmatch
import io
import os
import re
import subprocess
import sys
import warnings

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIR_NAMES = os.path.join(REPO, "tests", "data", "tf1", "zoo_dir_names.tsv")
NAMES = os.path.join(REPO, "tests", "data", "tf1", "zoo_names.tsv")
ROOT = "TensorFlow"
# Module prefixes that are the TF1 API itself: their names are written from ``tensorflow``.
SAME_AS_TENSORFLOW = ("tensorflow.compat.v1",)
NPU_INIT = "npu_bridge.npu_init"
NPU_INIT_FILE = os.path.join(REPO, "npu_bridge", "npu_init.py")
_CATEGORY_DOMAINS = ("TensorFlow/built-in/cv",)  # domains whose folders are tasks, each holding models


# ------------------------------------------------------------------------------------------------ the tree


class Tree:
    """The files of a checkout: a work tree or ``GIT_DIR@REVISION``."""

    def __init__(self, location):
        self.git = None
        if "@" in location and os.path.isdir(location.rsplit("@", 1)[0]):
            self.git, self.revision = location.rsplit("@", 1)
            listing = subprocess.run(
                ["git", "--git-dir", self.git, "ls-tree", "-r", "--name-only", self.revision, ROOT],
                check=True,
                capture_output=True,
            ).stdout.decode("utf-8", "surrogateescape")
            self.paths = sorted(listing.splitlines())
        elif os.path.isdir(os.path.join(location, ROOT)):
            self.root = location
            found = []
            for directory, subdirs, files in os.walk(os.path.join(location, ROOT)):
                subdirs.sort()
                rel = os.path.relpath(directory, location).replace(os.sep, "/")
                found.extend(f"{rel}/{name}" for name in files)
            self.paths = sorted(found)
        else:
            raise FileNotFoundError(f"--zoo {location!r}: neither a checkout with {ROOT}/ nor GIT_DIR@REVISION")

    def read(self, paths):
        """{path: text} of the given files (undecodable bytes replaced)."""
        if self.git is None:
            texts = {}
            for path in paths:
                with open(os.path.join(self.root, path), "rb") as f:
                    texts[path] = f.read().decode("utf-8", "replace")
            return texts
        batch = subprocess.run(
            ["git", "--git-dir", self.git, "cat-file", "--batch"],
            input="".join(f"{self.revision}:{p}\n" for p in paths).encode("utf-8", "surrogateescape"),
            capture_output=True,
            check=True,
        ).stdout
        stream = io.BytesIO(batch)
        texts = {}
        for path in paths:
            header = stream.readline().split()
            if len(header) < 3:  # missing object (a submodule, an absent large file)
                continue
            texts[path] = stream.read(int(header[2])).decode("utf-8", "replace")
            stream.readline()
        return texts


def _model_folder(path):
    """The folder one level below a domain folder (two for the task folders of ``_CATEGORY_DOMAINS``) that a
    path is in, or None."""
    parts = path.split("/")
    depth = 5 if "/".join(parts[:3]) in _CATEGORY_DOMAINS else 4
    return "/".join(parts[:depth]) if len(parts) > depth else None


def model_dirs(paths):
    """The TF1 model directories (see the module doc) of a checkout's file list, sorted."""
    found = set()
    for path in paths:
        parts = path.split("/")
        if len(parts) >= 3 and parts[-2] == "test" and fnmatch.fnmatch(parts[-1], "train*.sh"):
            found.add("/".join(parts[:-2]))
    by_folder = collections.defaultdict(list)
    for path in paths:
        if _model_folder(path):
            by_folder[_model_folder(path)].append(path.rsplit("/", 1)[-1])
    for folder, files in by_folder.items():
        if any(d == folder or d.startswith(folder + "/") or folder.startswith(d + "/") for d in found):
            continue
        if any(fnmatch.fnmatch(f, "train*.sh") or (f.endswith(".py") and "train" in f) for f in files):
            found.add(folder)
    # a directory inside another one (a model keeping a second model under it) counts once, as the outer one
    return sorted(d for d in found if not any(d.startswith(o + "/") for o in found))


# ------------------------------------------------------------------------------------------------ the names


def _normalized(name):
    for prefix in SAME_AS_TENSORFLOW:
        if name == prefix or name.startswith(prefix + "."):
            return "tensorflow" + name[len(prefix) :]
    return name


def _chain(node):
    """``a.b.c`` -> ["a", "b", "c"] for a chain of attributes on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return parts[::-1]


def _parse(source):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ast.parse(source)
        except (SyntaxError, ValueError):
            return None


def _is_tensorflow(module):
    return module == "tensorflow" or module.startswith("tensorflow.")


def _own_bindings(tree):
    """The names a module binds by assignment, loop, ``with``, definition or as an argument."""
    own = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            own.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own.add(node.name)
        elif isinstance(node, ast.arg):
            own.add(node.arg)
    return own


def _bindings(tree, star_aliases):
    """({local name: dotted TensorFlow name}, names the imports use) of a module's syntax tree."""
    aliases = {}  # local name -> dotted TensorFlow name
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if not _is_tensorflow(alias.name):
                    continue
                full = _normalized(alias.name)
                names.add(full)
                if alias.asname:
                    aliases[alias.asname] = full
                else:
                    aliases["tensorflow"] = "tensorflow"
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == NPU_INIT:  # upstream's npu_init hands scripts tf, RewriterConfig, ...
                for alias in node.names:
                    if alias.name == "*":  # what the module binds itself shadows it (session = tf.Session())
                        own = _own_bindings(tree)
                        aliases.update((k, v) for k, v in star_aliases.items() if k not in own)
                    elif alias.name in star_aliases:
                        aliases[alias.asname or alias.name] = star_aliases[alias.name]
                continue
            if not _is_tensorflow(node.module):
                continue
            for alias in node.names:
                if alias.name == "*":
                    names.add(_normalized(node.module))
                    continue
                full = _normalized(f"{node.module}.{alias.name}")
                names.add(full)
                aliases[alias.asname or alias.name] = full
    # NAME = <chain on a bound name>: bind NAME too, until nothing changes (FLAGS = flags.FLAGS after flags = ...)
    assignments = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            parts = _chain(node.value)
            if parts is not None:
                assignments.append((node.targets[0].id, parts))
    changed = True
    while changed:
        changed = False
        for target, parts in assignments:
            if target not in aliases and parts[0] in aliases and parts[0] != target:
                aliases[target] = ".".join([aliases[parts[0]], *parts[1:]])
                changed = True
    return aliases, names


def npu_init_aliases(path=NPU_INIT_FILE):
    """The TensorFlow names ``from npu_bridge.npu_init import *`` binds (its ``__all__``), read from this
    repository's facade, which exports what upstream's does (``tf`` is ``tensorflow.compat.v1``)."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    aliases, _ = _bindings(tree, {})
    exported = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            exported = set(ast.literal_eval(node.value))
    return {name: value for name, value in aliases.items() if name in exported}


def names_of_source(source, star_aliases=None):
    """The TensorFlow names a module's source uses (see the module doc), or None when it is not Python 3.

    Args:
      source: the module's text.
      star_aliases: what ``from npu_bridge.npu_init import *`` binds (default: ``npu_init_aliases()``).
    """
    tree = _parse(source)
    if tree is None:
        return None
    aliases, names = _bindings(tree, npu_init_aliases() if star_aliases is None else star_aliases)
    inner = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute):
            inner.add(id(node.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and id(node) not in inner:
            parts = _chain(node)
            if parts is not None and parts[0] in aliases:
                names.add(_normalized(".".join([aliases[parts[0]], *parts[1:]])))
    return {n for n in names if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*", n)}


_PYTHON_RUN = re.compile(r"python[0-9.]*\s+(?:-[uBO]+\s+)*(?:(-m)\s+)?([^\s;|&><`'\"]+)")


def _entry_files(directory, files, texts):
    """The .py files a model directory's training scripts run (``python3 ${cur_path}/../train.py``), else the
    .py files with ``train`` in their name, else the ones its other shell scripts run, else all of them."""
    py = [f for f in files if f.endswith(".py")]
    training = [f for f in files if fnmatch.fnmatch(f.rsplit("/", 1)[-1], "train*.sh")]
    found = _run_by(training, py, directory, texts)
    found = found or {f for f in py if "train" in f.rsplit("/", 1)[-1]}
    found = found or _run_by([f for f in files if f.endswith(".sh")], py, directory, texts)
    return found or set(py)


def _run_by(scripts, py, directory, texts):
    found = set()
    for script in scripts:
        for module_flag, target in _PYTHON_RUN.findall(texts.get(script, "")):
            if module_flag:
                target = target.replace(".", "/") + ".py"
            if not target.endswith(".py"):
                continue
            target = re.sub(r"^(\$\{?[A-Za-z_]+\}?/|\.\./|\./)+", "", target)
            if "$" in target:
                target = target.rsplit("/", 1)[-1]
            matches = [f for f in py if f == f"{directory}/{target}" or f.endswith("/" + target)]
            if matches:
                shallowest = min(m.count("/") for m in matches)
                found.update(m for m in matches if m.count("/") == shallowest)
    return found


def _imports(source, path):
    """The dotted modules a source imports (``from a import b``: ``a`` and ``a.b``); relative ones resolved
    against ``path``'s folder, as ``/``-paths relative to the checkout starting with ``./``."""
    tree = _parse(source)
    if tree is None:
        return set()
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = path.rsplit("/", 1)[0].split("/")
                base = base[: len(base) - (node.level - 1)]
                prefix = "./" + "/".join(base + (node.module.split(".") if node.module else []))
                found.add(prefix)
                found.update(f"{prefix}/{alias.name}" for alias in node.names)
            elif node.module:
                found.add(node.module)
                found.update(f"{node.module}.{alias.name}" for alias in node.names if alias.name != "*")
    return found


def training_files(directory, files, texts):
    """The .py files of a model directory its training runs: the entry scripts and, transitively, the
    directory's modules they import (looked up from the importing file's folder and every folder above it up to
    the model directory, as the scripts' ``sys.path`` additions make them importable)."""
    py = {f for f in files if f.endswith(".py")}
    todo = sorted(_entry_files(directory, files, texts))
    seen = set(todo)
    while todo:
        path = todo.pop()
        folders = []
        folder = path.rsplit("/", 1)[0]
        while folder == directory or folder.startswith(directory + "/"):
            folders.append(folder)
            folder = folder.rsplit("/", 1)[0]
        for module in _imports(texts.get(path, ""), path):
            if module.startswith("./"):
                relatives = [module[2:]]
            else:
                if module.split(".")[0] == "tensorflow":
                    continue
                relatives = [f"{root}/{module.replace('.', '/')}" for root in folders]
            for rel in relatives:
                parts = rel.split("/")
                candidates = [f"{rel}.py", f"{rel}/__init__.py"]
                candidates += [f"{'/'.join(parts[:end])}/__init__.py" for end in range(len(parts) - 1, 0, -1)]
                for candidate in candidates:
                    if candidate in py and candidate not in seen:
                        seen.add(candidate)
                        todo.append(candidate)
    return seen


def directory_names(tree, dirs, every_file=False):
    """({directory: set of names}, stats) for the given directories: the names of the files their training
    runs (``training_files``), or of all their .py files (``every_file``)."""
    owner = {}
    ordered = sorted(dirs, key=len, reverse=True)
    for path in tree.paths:
        for directory in ordered:
            if path.startswith(directory + "/"):
                owner[path] = directory
                break
    members = collections.defaultdict(list)
    for path, directory in owner.items():
        members[directory].append(path)
    texts = tree.read(sorted(p for p in owner if p.endswith(".py") or p.endswith(".sh")))
    found = {d: set() for d in dirs}
    stats = collections.Counter()
    star_aliases = npu_init_aliases()
    for directory in dirs:
        files = members[directory]
        chosen = {f for f in files if f.endswith(".py")} if every_file else training_files(directory, files, texts)
        stats["files"] += len(chosen)
        for path in chosen:
            names = names_of_source(texts.get(path, ""), star_aliases)
            if names is None:
                stats["skipped"] += 1
                stats[f"skipped:{directory}"] = 1
                continue
            found[directory] |= names
    stats["skipped_dirs"] = sum(1 for k in stats if k.startswith("skipped:"))
    return found, stats


# ------------------------------------------------------------------------------------------------ the files


def _dir_rows(found):
    """(dir, names) rows, the names sorted and space-separated (empty for a directory using no TensorFlow name)."""
    return [(d, " ".join(sorted(found[d]))) for d in sorted(found)]


def _name_rows(found, old_rows):
    counts = collections.Counter(n for names in found.values() for n in names)
    resolves = {row["name"]: row.get("resolves_today_compat_v1", "") for row in old_rows}
    ordered = sorted(counts, key=lambda n: (-counts[n], n))
    return [(n, str(counts[n]), resolves.get(n, "")) for n in ordered]


def _render(header, rows):
    out = io.StringIO()
    writer = csv.writer(out, delimiter="\t", lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


def read_dir_names(path=DIR_NAMES):
    """{directory: set of names} of a file ``--out`` wrote."""
    found = collections.defaultdict(set)
    with open(path, encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            found[row["dir"]].update(row["names"].split())
    return dict(found)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="zoo_names", description=__doc__.split("\n\n")[0])
    parser.add_argument("--zoo", required=True, help="a checkout of Ascend/ModelZoo-TensorFlow, or GIT_DIR@REV")
    parser.add_argument("--out", default=DIR_NAMES, help="the per-directory names file to write")
    parser.add_argument("--names", help=f"also write the names with their directory counts here (e.g. {NAMES})")
    parser.add_argument(
        "--every-file", action="store_true", help="every .py file of a directory, not the ones its training runs"
    )
    parser.add_argument("--list", action="store_true", help="print the model directories and exit")
    parser.add_argument("--check", action="store_true", help="exit 1 when the files differ; write nothing")
    args = parser.parse_args(argv)
    tree = Tree(args.zoo)
    dirs = model_dirs(tree.paths)
    if args.list:
        print("\n".join(dirs))
        return 0
    found, stats = directory_names(tree, dirs, every_file=args.every_file)
    outputs = {args.out: _render(("dir", "names"), _dir_rows(found))}
    if args.names:
        old_rows = []
        if os.path.exists(args.names):
            with open(args.names, encoding="utf-8") as f:
                old_rows = list(csv.DictReader(f, delimiter="\t"))
        outputs[args.names] = _render(("name", "dirs", "resolves_today_compat_v1"), _name_rows(found, old_rows))
    print(
        f"{len(dirs)} model directories ({sum(1 for d in found if found[d])} using TensorFlow), {stats['files']} .py"
        f" files, {stats['skipped']} not Python 3 (skipped, in {stats['skipped_dirs']} directories)"
    )
    differ = []
    for path, text in outputs.items():
        current = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if current != text:
            differ.append(path)
            if not args.check:
                with open(path, "w", encoding="utf-8", newline="") as f:
                    f.write(text)
    for path in differ:
        print(f"{'differs' if args.check else 'wrote'}: {os.path.relpath(path)}")
    return 1 if args.check and differ else 0


if __name__ == "__main__":
    sys.exit(main())
