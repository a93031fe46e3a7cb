"""Derives the table of ``tensorflow.python.*`` modules and names TensorFlow 1.15 / 2.6 had and 2.21 moved.

Two steps, so that the table can be regenerated from files checked in to this repository:

``extract`` reads the two public trees and the model zoo (nothing is downloaded here: pass local copies) and writes
``tools/legacy_paths_sources.tsv``: every module ``tensorflow/python/**.py`` of TensorFlow 1.15 and 2.6 (tests
left out) with the public names it defines, and every ``tensorflow.python.*`` path the zoo's training scripts name,
with the number of model directories naming it (TensorFlow/ for TF1, TensorFlow2/ for TF2)::

    python tools/derive_legacy_paths.py extract \\
        --tf115 /work/.mirror/uve+tensorflow/repo/.git@v1.15.0 \\
        --tf26 tensorflow_cpu-2.6.0-cp39-cp39-manylinux2010_x86_64.whl \\
        --zoo /work/.mirror/Ascend+ModelZoo-TensorFlow/repo@HEAD

A tree is a git directory with ``@<revision>``, a wheel (``.whl``) or a directory holding ``tensorflow/python``.

``table`` reads that file and the TensorFlow 2.21 / tf_keras installed here and writes
``npu_bridge/core/runtime/legacy_paths_table.tsv`` (``--check``: exit 1 when the file differs)::

    python tools/derive_legacy_paths.py table

For each old module TensorFlow 2.21 has no file for, the table gives its new home (the ``legacy_paths`` hand
overrides first, then the 2.21 modules that define most of its names), or says why there is none; for each module
2.21 still has, the names it lost and where each is now. Rows are ordered by the zoo's use (model directories),
then by path. Keras paths (``tensorflow.python.keras.*``) are served by the Keras rule of ``legacy_paths`` (the
route gives tf_keras): their rows say which tf_keras module answers.
"""

import argparse
import ast
import collections
import csv
import importlib
import importlib.util
import io
import os
import re
import subprocess
import sys
import warnings
import zipfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCES = os.path.join(REPO, "tools", "legacy_paths_sources.tsv")
TABLE = os.path.join(REPO, "npu_bridge", "core", "runtime", "legacy_paths_table.tsv")
PREFIX = "tensorflow.python"
KERAS = "tensorflow.python.keras"
ZOO_NAMES = os.path.join(REPO, "tests", "data", "tf1", "zoo_names.tsv")
# a home of a moved module must define at least this share of the old module's public names
MIN_COVERAGE = 0.5
# the 2.21 packages homes are looked for in (and the prefix each module name gets)
HOME_PACKAGES = (("tensorflow/python", "tensorflow.python"), ("tf_keras/src", "tf_keras.src"))


# ----------------------------------------------------------------------------------------------- extract


def _tree_files(tree):
    """{relative path: bytes-loader} of the ``tensorflow/python/**.py`` files of a tree (see the module doc)."""
    if tree.endswith(".whl"):
        archive = zipfile.ZipFile(tree)
        names = [n for n in archive.namelist() if n.startswith("tensorflow/python/") and n.endswith(".py")]
        return {n: (lambda n=n: archive.read(n)) for n in names}
    if "@" in tree and os.path.isdir(tree.rsplit("@", 1)[0]):
        git_dir, rev = tree.rsplit("@", 1)
        listing = _git(git_dir, "ls-tree", "-r", "--name-only", rev, "tensorflow/python").splitlines()
        names = [n for n in listing if n.endswith(".py")]
        return {n: (lambda n=n: _git_bytes(git_dir, "show", f"{rev}:{n}")) for n in names}
    found = {}
    for root, _, files in os.walk(os.path.join(tree, "tensorflow", "python")):
        for file in files:
            if file.endswith(".py"):
                path = os.path.join(root, file)
                found[os.path.relpath(path, tree).replace(os.sep, "/")] = lambda p=path: open(p, "rb").read()
    return found


def _git(git_dir, *args):
    return _git_bytes(git_dir, *args).decode("utf-8", "replace")


def _git_bytes(git_dir, *args):
    return subprocess.run(["git", "--git-dir", git_dir, *args], check=True, capture_output=True).stdout


def _is_test(path):
    base = path.rsplit("/", 1)[-1]
    return base.endswith("_test.py") or "/testdata/" in path or base.endswith("_benchmark.py")


def module_name(path):
    """``tensorflow/python/ops/nn.py`` -> ``tensorflow.python.ops.nn``; ``.../__init__.py`` -> the package."""
    name = path[: -len(".py")].replace("/", ".")
    return name[: -len(".__init__")] if name.endswith(".__init__") else name


def public_names(source):
    """The names a module's source binds at its top level: ``name`` for its public defs, classes and assignments,
    ``name=source`` for what it imports from TensorFlow (``source`` is the dotted module or module attribute)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            return set()
    names = set()
    for node in _top_level(tree.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("tensorflow"):
            for alias in node.names:
                if alias.name == "*":
                    names.add(f"*={node.module}")  # a module that re-exports another one
                elif not (alias.asname or alias.name).startswith("_"):
                    names.add(f"{alias.asname or alias.name}={node.module}.{alias.name}")
    return {n for n in names if not n.startswith("_")}


def _top_level(body):
    for node in body:
        yield node
        if isinstance(node, ast.If):
            yield from _top_level(node.body)
            yield from _top_level(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                yield from _top_level(block)


def _modules_of(tree):
    files = {p: load for p, load in _tree_files(tree).items() if not _is_test(p)}
    return {module_name(path): public_names(load()) for path, load in sorted(files.items())}


_REFERENCE = re.compile(r"tensorflow\.python(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_FROM = re.compile(r"^\s*from\s+(tensorflow\.python[A-Za-z0-9_.]*)\s+import\s+(\([^)]*\)|[^\n#;]*)", re.M)
_ALIAS = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)(?:\s+as\s+[A-Za-z_][A-Za-z0-9_]*)?\s*")


def _model_directory(path):
    parts = path.split("/")
    for index, part in enumerate(parts[:-1]):
        if index >= 2 and ("_for_TensorFlow" in part or re.search(r"_ID\d+", part)):
            return "/".join(parts[: index + 1])
    return "/".join(parts[: min(4, len(parts) - 1)])


def zoo_references(zoo):
    """{``tensorflow.python...`` path: number of model directories naming it} of the zoo's .py files."""
    git_dir, rev = zoo.rsplit("@", 1)
    listing = _git(git_dir, "ls-tree", "-r", "--name-only", rev, "TensorFlow", "TensorFlow2").splitlines()
    files = [p for p in listing if p.endswith(".py")]
    users = collections.defaultdict(set)
    batch = subprocess.run(
        ["git", "--git-dir", git_dir, "cat-file", "--batch"],
        input="".join(f"{rev}:{p}\n" for p in files).encode(),
        capture_output=True,
        check=True,
    ).stdout
    stream = io.BytesIO(batch)
    for path in files:
        header = stream.readline().split()
        if len(header) < 3:  # missing object
            continue
        text = stream.read(int(header[2])).decode("utf-8", "replace")
        stream.readline()
        if "tensorflow.python" not in text:
            continue
        directory = _model_directory(path)
        found = set(_REFERENCE.findall(text))
        for module, imported in _FROM.findall(text):
            for alias in imported.strip("()").split(","):
                match = _ALIAS.fullmatch(alias.strip().replace("\\", "").strip() or "-")
                if match:
                    found.add(f"{module}.{match.group(1)}")
        for reference in found:
            users[reference].add(directory)
    return {reference: len(directories) for reference, directories in users.items()}


def extract(args):
    old = {"1.15": _modules_of(args.tf115), "2.6": _modules_of(args.tf26)}
    rows = []
    for name in sorted(set(old["1.15"]) | set(old["2.6"])):
        versions = [v for v in old if name in old[v]]
        names = set().union(*(old[v][name] for v in versions))
        rows.append((name, "module", ",".join(versions), " ".join(sorted(names))))
    for reference, dirs in sorted(zoo_references(args.zoo).items()):
        rows.append((reference, "zoo", str(dirs), ""))
    with open(args.out, "w", encoding="utf-8", newline="") as f:
        f.write("# tools/derive_legacy_paths.py extract: TensorFlow 1.15 / 2.6 modules, and the zoo's paths\n")
        writer = csv.writer(f, delimiter="\t", lineterminator="\n")
        writer.writerow(("path", "kind", "value", "names"))
        writer.writerows(rows)
    counts = collections.Counter(kind for _, kind, _, _ in rows)
    print(f"wrote {args.out}: {counts['module']} modules, {counts['zoo']} zoo paths")


# ------------------------------------------------------------------------------------------------- table


def read_sources(path=SOURCES):
    """(modules {name: (versions, names)}, zoo {path: dirs}) from the extracted sources file."""
    modules, zoo = {}, {}
    with open(path, encoding="utf-8") as f:
        rows = csv.DictReader((line for line in f if not line.startswith("#")), delimiter="\t")
        for row in rows:
            if row["kind"] == "module":
                modules[row["path"]] = (row["value"], set(row["names"].split()))
            else:
                zoo[row["path"]] = int(row["value"])
    return modules, zoo


def installed_modules():
    """Every module file of the installed TensorFlow and tf_keras, by dotted name (nothing is imported)."""
    found = set()
    for top in ("tensorflow", "tf_keras"):
        spec = importlib.util.find_spec(top)
        base = os.path.dirname(os.path.dirname(spec.origin))
        for root, dirs, files in os.walk(os.path.join(base, top)):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            for file in files:
                stem = file.split(".", 1)[0]
                if file.endswith(".py") or file.endswith(".so"):
                    relative = os.path.relpath(os.path.join(root, stem), base).replace(os.sep, ".")
                    found.add(relative[: -len(".__init__")] if relative.endswith(".__init__") else relative)
    return found


_DEFINITION = re.compile(
    r"^(?:def|class)\s+([A-Za-z_][A-Za-z0-9_]*)|^([A-Za-z_][A-Za-z0-9_]*)\s*(?::[^=\n]*)?=[^=]", re.M
)


def definitions():
    """{name: [installed modules defining it at top level]} (read from the source text, nothing imported)."""
    index = collections.defaultdict(list)
    for directory, prefix in HOME_PACKAGES:
        top = directory.split("/")[0]
        base = os.path.dirname(os.path.dirname(importlib.util.find_spec(top).origin))
        root_dir = os.path.join(base, directory)
        for root, dirs, files in os.walk(root_dir):
            dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", "tests", "testdata"))
            for file in sorted(files):
                if not file.endswith(".py") or file.endswith("_test.py"):
                    continue
                relative = os.path.relpath(os.path.join(root, file[:-3]), root_dir).replace(os.sep, ".")
                module = f"{prefix}.{relative}".removesuffix(".__init__")
                with open(os.path.join(root, file), encoding="utf-8", errors="replace") as f:
                    for match in _DEFINITION.finditer(f.read()):
                        index[match.group(1) or match.group(2)].append(module)
    return index


def _hand_overrides():
    """``legacy_paths`` and the hand overrides {old module: (homes, where)}: ``legacy_paths.TF_MOVED``'s own
    entries, and the modules the TF1 mode adds (``tf1/internal_paths.MOVED``). The files are loaded on their own:
    npu_bridge is not switched on here, so TensorFlow 2.21 is seen as it is."""
    stubs = {}
    for name in ("npu_bridge", "npu_bridge.core", "npu_bridge.core.runtime"):
        stubs[name] = sys.modules.get(name)
        sys.modules[name] = type(sys)(name)
    for name in ("npu_bridge.core.runtime.errors", "npu_bridge.core.runtime.legacy_paths"):
        stubs[name] = sys.modules.get(name)  # loaded from their files below, then put back as they were
    try:
        errors = _load("npu_bridge.core.runtime.errors", ("core", "runtime", "errors.py"))  # legacy_paths raises these
        sys.modules["npu_bridge.core.runtime"].errors = errors
        legacy_paths = _load("npu_bridge.core.runtime.legacy_paths", ("core", "runtime", "legacy_paths.py"))
        sys.modules["npu_bridge.core.runtime"].legacy_paths = legacy_paths
        internal = _load("_internal_paths_for_table", ("core", "tf1", "internal_paths.py"))
    finally:
        for name, module in stubs.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
    hand = {old: (legacy_paths.TF_MOVED[old], "legacy_paths.TF_MOVED") for old in legacy_paths.TF_MOVED_BY_HAND}
    if internal is not None:
        for old, new in internal.MOVED.items():
            hand.setdefault(old, (new, "tf1/internal_paths.MOVED (the TF1 mode)"))
    aliases = _load("_aliases_for_table", ("core", "tf1", "aliases.py"))
    return legacy_paths, hand, dict(aliases.MOVED) if aliases is not None else {}


def _load(name, parts):
    path = os.path.join(REPO, "npu_bridge", *parts)
    if not os.path.exists(path):
        return None
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _has(module, name):
    try:
        getattr(module, name)
    except Exception:  # noqa: BLE001 - a lazy attribute that fails to load is not there
        return False
    return True


def _import(name):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return importlib.import_module(name)
    except Exception:  # noqa: BLE001 - a module that fails to import here is no home
        return None


def _closeness(old, new, name=None):
    """Sort key of a candidate home ``new`` for ``old`` (or for its ``name``): a module named after the name first
    (``control_flow_ops.cond`` -> ``cond``), then the same package, then the longest shared prefix of the last
    component (``array_ops`` -> ``array_ops_stack``), then TensorFlow's own, then the shortest name."""
    old_package, _, old_base = old.rpartition(".")
    new_package, _, new_base = new.rpartition(".")
    shared = len(os.path.commonprefix([old_base, new_base]))
    return (new_base != name, new_package != old_package, -shared, not new.startswith(PREFIX), len(new), new)


def _usable_home(module):
    # TensorFlow 2.21's partial copy of Keras is no home: user code gets tf_keras for tensorflow.python.keras
    return not (module == KERAS or module.startswith(KERAS + ".")) and module != "tensorflow.python.util.tf_export"


def module_home(name, names, index, installed, packages=("tensorflow.python.", "tf_keras.src."), wanted=()):
    """The 2.21 modules that define most of a moved module's public names (each adds some), or every name the zoo
    takes from it, or (None, reason)."""
    defined = {n for n in names if "=" not in n}
    base = name.rpartition(".")[2]
    if not defined:
        same = sorted(m for m in installed if m.rpartition(".")[2] == base and m.startswith(packages))
        if len(same) == 1 and base.startswith(("gen_", "pywrap_", "_pywrap_")):
            return [same[0]], "the generated module of that name"
        return None, "defines no names of its own, and no 2.21 module of that name holds them"
    counts = collections.Counter()
    for public in defined:
        for module in set(index.get(public, ())):
            if module != name and module.startswith(packages) and _usable_home(module):
                counts[module] += 1
    homes, covered = [], set()
    for module in sorted(counts, key=lambda m: (-counts[m], _closeness(name, m)))[:8]:
        if len(homes) == 3:
            break
        holds = {n for n in defined - covered if module in index.get(n, ())}
        if len(holds) < max(1, 0.1 * len(defined)):
            continue
        real = _import(module)
        holds = {n for n in holds if real is not None and _has(real, n)}
        if len(holds) >= max(1, 0.1 * len(defined)):
            homes.append(module)
            covered |= holds
    share = len(covered) / len(defined)
    same_base = bool(homes) and homes[0].rpartition(".")[2] == base
    if homes and share >= MIN_COVERAGE and (len(covered) >= 2 or same_base):
        return homes, f"defines {len(covered)} of its {len(defined)} public names"
    used = set(wanted) & defined
    if homes and used and used <= covered:
        return homes, f"defines the names the zoo takes from it ({len(covered)} of its {len(defined)} public names)"
    return None, f"no 2.21 module defines half of its {len(defined)} public names (best: {share:.0%})"


def name_home(module, name, source, index, installed):
    """Where a name a module lost is now: ``module:name`` or a module's path (the name was a module), or None."""
    if source:  # imported: from the module it came from, or the module itself
        if source in installed and _usable_home(source):
            return source
        home, _, attr = source.rpartition(".")
        if home in installed and _usable_home(home) and _has(_import(home), attr):
            return f"{home}:{attr}"
    generated = module.rpartition(".")[2].startswith("gen_")
    for candidate in sorted(set(index.get(name, ())), key=lambda m: _closeness(module, m, name)):
        if candidate == module or not _usable_home(candidate):
            continue
        if not generated and candidate.rpartition(".")[2].startswith("gen_"):
            continue  # a Python function is not the raw op of the same name (variable_scope.variable)
        home = _import(candidate)
        if not _has(home, name):
            continue
        if (
            candidate.startswith("tf_keras.")
            and not module.startswith(KERAS)
            and not isinstance(getattr(home, name), type)
        ):
            continue  # classes moved to Keras (RNN cells, feature-column layers); a function there is another one
        return f"{candidate}:{name}"
    return None


def zoo_use(zoo, zoo_names=ZOO_NAMES):
    """{path: model directories using it}: the larger of the two counts (the zoo's imports and references,
    ``tests/data/tf1/zoo_names.tsv``); a path counts for each module above it too."""
    counts = dict(zoo)
    with open(zoo_names, encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if row["name"].startswith(PREFIX + "."):
                counts[row["name"]] = max(counts.get(row["name"], 0), int(row["dirs"]))
    use = collections.Counter()
    for reference, dirs in counts.items():
        parts = reference.split(".")
        for end in range(3, len(parts) + 1):
            prefix = ".".join(parts[:end])
            use[prefix] = max(use[prefix], dirs)
    return counts, use


def build_table(modules, zoo):
    """The table's rows: (path, kind, zoo_dirs, tf, status, target, note), ordered by use then path."""
    legacy_paths, hand, hand_names = _hand_overrides()
    installed = installed_modules()
    index = definitions()
    references, use = zoo_use(zoo)
    wanted = collections.defaultdict(set)  # module -> names the zoo takes from it
    for reference in references:
        parent, _, leaf = reference.rpartition(".")
        if parent in modules and reference not in modules:
            wanted[parent].add(leaf)
    rows = []
    for name, (versions, tokens) in sorted(modules.items()):
        if name == KERAS or name.startswith(KERAS + "."):
            rows.append((name, "module", versions, *_keras_row(name, tokens, legacy_paths, installed, index)))
            continue
        if name in hand:
            homes, where = hand[name]
            rows.append((name, "module", versions, "hand", ",".join(homes), f"hand override in {where}"))
            continue
        if name not in installed:
            homes, why = module_home(name, tokens, index, installed, wanted=wanted[name])
            if homes is not None:
                rows.append((name, "module", versions, "moved", ",".join(homes), why))
            elif any(other.startswith(name + ".") for other in modules):
                rows.append((name, "module", versions, "package", "", "a package: its moved modules are served"))
            else:
                rows.append((name, "module", versions, "missing", "", why))
            continue
        real = _import(name)
        if real is None:
            continue
        package = _is_package(name, modules)
        sources = {}
        for token in sorted(tokens):  # a definition ("x") before an import of the same name ("x=...")
            public, _, source = token.partition("=")
            if public == "*" or f"{name}.{public}" in modules:
                continue  # a submodule: served as a module
            if not source or package or public in wanted[name]:
                sources.setdefault(public, source)
        for public in wanted[name]:  # a private name the zoo takes (a public one not listed was never there)
            if (public.startswith("_") or (name, public) in hand_names) and f"{name}.{public}" not in modules:
                sources.setdefault(public, "")
        for public in sorted(sources):
            if _has(real, public):
                continue
            if (name, public) in hand_names:
                home, new_name = hand_names[(name, public)]
                target = f"{home}:{new_name}"
                rows.append(
                    (f"{name}.{public}", "name", versions, "hand", target, "hand override in tf1/aliases.MOVED")
                )
                continue
            home = name_home(name, public, sources[public], index, installed)
            path = f"{name}.{public}"
            if home is None:
                rows.append((path, "name", versions, "missing", "", "no 2.21 module defines it"))
            else:
                rows.append((path, "name", versions, "moved", home, ""))
    rows = _follow_star_imports(rows, modules, installed)
    table = [(p, kind, str(use[p]), versions, status, target, note) for p, kind, versions, status, target, note in rows]
    return sorted(table, key=lambda row: (-int(row[2]), row[0]))


def _follow_star_imports(rows, modules, installed):
    """A missing module that only re-exported another one (``from tensorflow.python.distribute.x import *``) has
    that module's home: the module itself where 2.21 has it, else the home the table gives it."""
    homes = {row[0]: row[4] for row in rows if row[1] == "module" and row[3] in ("moved", "hand") and row[4]}
    result = []
    for row in rows:
        path, kind, versions, status, _, _ = row
        stars = [t[2:] for t in modules.get(path, ("", ()))[1] if t.startswith("*=")] if kind == "module" else []
        if status == "missing" and len(stars) == 1 and not path.startswith(KERAS):
            source = stars[0]
            if source in homes:
                row = (path, kind, versions, "moved", homes[source], f"re-exported {source}")
            elif source in installed and _usable_home(source):
                row = (path, kind, versions, "moved", source, f"re-exported {source}")
        result.append(row)
    return result


def _is_package(name, modules):
    return any(other.startswith(name + ".") for other in modules)


def _keras_row(name, tokens, legacy_paths, installed, index):
    """(status, target, note) of a tensorflow.python.keras module: what the Keras rule gives, else a home."""
    found = [c for c in legacy_paths.keras_rule(name) if c in installed]
    if found:
        return "keras", found[0], "the Keras rule of legacy_paths"
    homes, why = module_home(name, tokens, index, installed, packages=("tf_keras.src.",))
    if homes is not None:
        return "moved", ",".join(homes), why
    return "missing", "", f"tf_keras 2.21 has no module of that name; {why}"


HEADER = ("path", "kind", "zoo_dirs", "tf", "status", "target", "note")


def render(table):
    out = io.StringIO()
    out.write("# generated by tools/derive_legacy_paths.py table from tools/legacy_paths_sources.tsv: do not edit\n")
    writer = csv.writer(out, delimiter="\t", lineterminator="\n")
    writer.writerow(HEADER)
    writer.writerows(table)
    return out.getvalue()


def table(args):
    modules, zoo = read_sources(args.sources)
    text = render(build_table(modules, zoo))
    if args.check:
        with open(args.out, encoding="utf-8") as f:
            same = f.read() == text
        print("up to date" if same else f"{args.out} differs from what the sources give")
        return 0 if same else 1
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {args.out}")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    extracting = commands.add_parser("extract", help="read the trees and the zoo into the sources file")
    extracting.add_argument("--tf115", required=True, help="TensorFlow 1.15: GIT_DIR@REV, a wheel or a directory")
    extracting.add_argument("--tf26", required=True, help="TensorFlow 2.6: GIT_DIR@REV, a wheel or a directory")
    extracting.add_argument("--zoo", required=True, help="the model zoo: GIT_DIR@REV")
    extracting.add_argument("--out", default=SOURCES)
    tabling = commands.add_parser("table", help="write the table from the sources file and TensorFlow 2.21")
    tabling.add_argument("--sources", default=SOURCES)
    tabling.add_argument("--out", default=TABLE)
    tabling.add_argument("--check", action="store_true", help="exit 1 when the table differs from what it gives")
    args = parser.parse_args(argv)
    if args.command == "extract":
        extract(args)
        return 0
    return table(args)


if __name__ == "__main__":
    sys.exit(main())
