"""The layout keeps its promises: upstream paths are thin facades over ``npu_bridge.core``, core never imports a
facade, imports go down the layers of ``npu_bridge.core.LAYERS``, there are no import cycles, the launcher imports
no TensorFlow, and the C++ tree keeps op registration, kernels, runtime services and rewrite passes apart."""

import ast
import importlib
import pathlib
import re

import pytest
from helpers.paths import REPO_ROOT, python_files
from helpers.processes import run_python

from npu_bridge import core
from npu_bridge.core.runtime import api_surface

ROOT = pathlib.Path(REPO_ROOT)
# Facade modules that define functions of their own: upstream's signatures with an argument check or a
# one-line delegation.
FACADES_WITH_FUNCTIONS = {
    "hccl/manage/api.py",
    "hccl/split/api.py",
    "npu_bridge/experimental/hccl.py",
    "npu_bridge/estimator/npu/util.py",
}


def module_name(path):
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def facade_files():
    return [
        p
        for p in python_files("npu_bridge", "hccl")
        if "core" not in p.relative_to(ROOT).parts and p != ROOT / "npu_bridge" / "__init__.py"
    ]


def imported_modules(tree, known, module_level_only):
    """Yields the modules of ``known`` that ``tree`` imports (``from a import b`` imports a.b when that is a
    module, else a)."""
    if module_level_only:
        nodes = [
            n
            for top in tree.body
            for n in (
                [top]
                if isinstance(top, (ast.Import, ast.ImportFrom))
                else ast.walk(top)
                if isinstance(top, (ast.If, ast.Try))
                else []
            )
        ]
    else:
        nodes = ast.walk(tree)
    for node in nodes:
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if full in known:
                    yield full
                elif node.module in known:
                    yield node.module


def project_modules():
    return {module_name(p): p for p in python_files("npu_bridge", "hccl")}


@pytest.mark.parametrize("name", api_surface.UPSTREAM_MODULES)
def test_every_upstream_path_exports_an_explicit_all(name):
    module = importlib.import_module(name)
    if name == "npu_bridge":
        return  # the package itself exports nothing but __version__
    assert isinstance(module.__all__, list), name
    missing = [n for n in module.__all__ if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ names what it does not have: {missing}"


def test_facades_hold_no_implementation():
    offenders = []
    for path in facade_files():
        rel = path.relative_to(ROOT).as_posix()
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef) or (
                isinstance(node, ast.FunctionDef) and rel not in FACADES_WITH_FUNCTIONS
            ):
                offenders.append(f"{rel}: {node.name}")
    assert not offenders, f"implementation in facades (move it into npu_bridge/core): {offenders}"


def test_core_never_imports_a_facade():
    facades = {module_name(p) for p in facade_files()} - {"npu_bridge"}
    known = set(project_modules())
    offenders = []
    for path in python_files("npu_bridge/core"):
        for imported in imported_modules(ast.parse(path.read_text()), known, module_level_only=False):
            if imported in facades or imported.split(".")[0] == "hccl":
                offenders.append(f"{path.relative_to(ROOT)} imports {imported}")
    assert not offenders


def find_cycle(graph):
    """Returns one import cycle of ``graph`` ({module: modules it imports}) as a list, or None."""
    state = {}

    def visit(node, trail):
        state[node] = "open"
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                return trail[trail.index(nxt) :] + [nxt]
            if nxt not in state:
                found = visit(nxt, trail + [nxt])
                if found:
                    return found
        state[node] = "done"
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start, [start])
            if found:
                return found
    return None


def import_graph():
    files = project_modules()
    return {
        name: set(imported_modules(ast.parse(path.read_text()), files, module_level_only=True)) - {name}
        for name, path in files.items()
    }


_CORE_STRING = re.compile(r"[\"'](npu_bridge\.core\.[A-Za-z0-9_.]+)")


def core_imports(path):
    """Every ``npu_bridge.core`` module ``path`` imports: at module level, inside functions, through strings."""
    source = path.read_text()
    targets = set(_CORE_STRING.findall(source))
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            targets |= {alias.name for alias in node.names if alias.name.startswith("npu_bridge.core.")}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("npu_bridge.core"):
            names = [f"{node.module}.{alias.name}" for alias in node.names]
            targets |= set(names) if node.module in ("npu_bridge.core",) else {node.module}
    return targets


def layer_violations(paths, layers):
    """[(importer, imported)] against ``layers``: an import of a higher layer, or of another folder on the same
    layer."""
    rank = {folder: index for index, folders in enumerate(layers) for folder in folders}

    def layer(module):
        parts = module.split(".")
        return rank.get(parts[2]) if len(parts) > 2 else None

    violations = []
    for path in paths:
        importer = module_name(path)
        for imported in sorted(core_imports(path)):
            if imported.split(".")[:3] == importer.split(".")[:3] or layer(imported) is None:
                continue
            low, high = layer(imported), layer(importer)
            if low >= high:
                violations.append((importer, imported))
    return violations


def core_files():
    return [p for p in python_files("npu_bridge") if "core" in p.relative_to(ROOT).parts]


def test_every_core_folder_has_a_layer():
    layered = {folder for folders in core.LAYERS for folder in folders}
    folders = {p.relative_to(ROOT / "npu_bridge" / "core").parts[0].removesuffix(".py") for p in core_files()}
    assert folders - {"__init__"} == layered


def test_imports_go_down_the_layers():
    assert layer_violations(core_files(), core.LAYERS) == []


def test_the_layer_check_finds_an_import_upwards_and_across():
    paths = core_files()
    swapped = list(core.LAYERS)
    runtime, plan = swapped.index(("runtime",)), swapped.index(("plan",))
    swapped[runtime], swapped[plan] = swapped[plan], swapped[runtime]  # runtime above plan: plan imports upwards
    assert any(importer.startswith("npu_bridge.core.plan.") for importer, _ in layer_violations(paths, swapped))
    merged = [("runtime", "plan")] + [layer for layer in core.LAYERS if layer not in (("runtime",), ("plan",))]
    assert any(importer.startswith("npu_bridge.core.plan.") for importer, _ in layer_violations(paths, merged))


def test_no_module_level_import_cycles():
    assert find_cycle(import_graph()) is None


def test_the_cycle_check_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]


@pytest.mark.slow
def test_launcher_and_artifact_readers_import_without_tensorflow():
    result = run_python("""
        import sys
        import npu_bridge
        import npu_bridge.core.launch.cli
        assert "tensorflow" not in sys.modules, "the launcher imported TensorFlow"
        print("ok")
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


@pytest.mark.slow
def test_npu_bridge_switches_on_when_tensorflow_comes_after_it():
    result = run_python("""
        import npu_bridge
        import tensorflow as tf
        from tensorflow.python.client import session
        from npu_bridge.core.runtime import native_library
        print(native_library.is_loaded(), hasattr(session.BaseSession.__init__, "_npu_bridge_wrapped"))
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "True"]


def cpp_files(folder):
    return sorted((ROOT / folder).glob("*.cc"))


def test_cpp_tree_keeps_registration_kernels_services_and_passes_apart():
    for path in cpp_files("ops/registration"):
        text = path.read_text()
        assert "REGISTER_OP(" in text and "OpKernel" not in text, path
    for path in cpp_files("ops/kernels"):
        text = path.read_text()
        assert "REGISTER_KERNEL_BUILDER" in text and "REGISTER_OP(" not in text, path
    for path in cpp_files("ops/runtime"):
        text = path.read_text()
        assert "REGISTER_OP(" not in text and "REGISTER_KERNEL_BUILDER" not in text, path
    for path in cpp_files("optimizers/passes"):
        assert "REGISTER_NPU_REWRITE_PASS" in path.read_text(), path
    loose = {p.name for p in (ROOT / "ops").glob("*.cc")}
    assert not loose, f"ops/ files outside registration/, kernels/, runtime/: {loose}"


def test_every_kernel_and_c_function_keeps_exceptions_inside_the_library():
    # Kernels derive from NpuOpKernel or NpuAsyncOpKernel (ops/runtime/no_throw.h); C functions Python calls run
    # their body through NoThrowValue, or say why they cannot throw.
    for path in cpp_files("ops/kernels"):
        bases = re.findall(r"class \w+ : public ([\w:]+)", path.read_text())
        assert bases and set(bases) <= {"NpuOpKernel", "NpuAsyncOpKernel"}, (path, bases)
    sources = [
        p for folder in ("ops/kernels", "ops/runtime", "optimizers", "optimizers/graph") for p in cpp_files(folder)
    ]
    for path in sources:
        text = path.read_text()
        for match in re.finditer(r'^(?:extern "C" )?\w+ (npu_bridge_\w+)\([^)]*\) \{(.*?)\}$', text, re.M | re.S):
            body = match.group(2)
            assert (
                "NoThrowValue" in body
                or "cannot throw" in text[max(0, match.start() - 200) : match.start()]
                or ("an atomic" in body)
            ), (path, match.group(1))
    optimizer = (ROOT / "optimizers/npu_optimizer.cc").read_text()
    assert optimizer.count("NoThrow(") == 3  # Init, Optimize and every pass's Run


@pytest.mark.parametrize("doc", ["docs/architecture.md", "CONTRIBUTING.md"])
def test_paths_named_in_the_developer_docs_exist(doc):
    text = (ROOT / doc).read_text()
    named = set(re.findall(r"`((?:npu_bridge|ops|optimizers|tests|hccl)/[\w/.]*\w)`", text))
    assert named, doc
    missing = sorted(p for p in named if not (ROOT / p).exists())
    assert not missing, f"{doc} names paths that do not exist: {missing}"


def test_cpp_includes_go_from_optimizers_to_ops_only():
    # The passes may use what ops/runtime/ declares; kernels and registrations never depend on a pass.
    offenders = [
        f"{path.relative_to(ROOT)}: {line.strip()}"
        for path in sorted((ROOT / "ops").rglob("*"))
        if path.suffix in (".cc", ".h")
        for line in path.read_text().splitlines()
        if re.match(r'\s*#\s*include\s+"optimizers/', line)
    ]
    assert not offenders, f"ops/ includes optimizers/: {offenders}"


def module_import_names(sources, known, packages=()):
    """{module: {name: [importers]}}: the names each module of ``known`` is bound to where it is imported.

    ``import a.b as n`` and ``from a import b [as n]`` (b a module, also relative) bind a module to a name; a
    leading underscore (a private binding, e.g. in ``npu_bridge/__init__.py``) is not part of the name, and a
    facade's re-export under a name in its ``__all__`` (upstream's module names) is not counted.

    Args:
      sources: {module name: source text} of the importing modules.
      known: the module names that count (e.g. every ``npu_bridge.core`` module).
      packages: the importers that are packages (their ``__init__.py``), for relative imports.
    """
    names = {}
    for importer, source in sources.items():
        tree = ast.parse(source)
        exported = {
            elt.value
            for node in tree.body
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets)
            for elt in getattr(node.value, "elts", [])
            if isinstance(elt, ast.Constant)
        }
        package = importer.split(".") + (["__init__"] if importer in packages else [])
        for node in ast.walk(tree):
            bound = []
            if isinstance(node, ast.Import):
                bound = [(alias.name, alias.asname) for alias in node.names if alias.asname]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    stem = package[: len(package) - node.level]
                    base = ".".join(stem + ([node.module] if node.module else []))
                bound = [(f"{base}.{alias.name}", alias.asname or alias.name) for alias in node.names]
            for module, name in bound:
                if module in known and name not in exported:
                    names.setdefault(module, {}).setdefault(name.lstrip("_"), []).append(importer)
    return names


def test_every_core_module_is_imported_under_one_name():
    files = python_files("npu_bridge")
    sources = {module_name(p): p.read_text() for p in files}
    known = {name for name in sources if name.startswith("npu_bridge.core.")}
    packages = {module_name(p) for p in files if p.name == "__init__.py"}
    several = {m: sorted(n) for m, n in module_import_names(sources, known, packages).items() if len(n) > 1}
    assert not several, f"modules imported under more than one name (rename the clashing local instead): {several}"


def test_the_import_name_check_finds_a_second_name():
    known = {"pkg.core.world.world", "pkg.core.world.groups"}
    sources = {
        "pkg.core.a": "from pkg.core.world import world\n",
        "pkg.core.b": "def f():\n    from pkg.core.world import world as world_lib\n",
        "pkg.core.world.groups": "from . import world as _world\n",
        "pkg.core.world": "from . import world as world_module\n",
        "pkg.core.c": "import pkg.core.world.groups as g\nfrom pkg.core.world.world import World\n",
        "pkg.facade": "from pkg.core.world import world as upstream_name\n__all__ = ['upstream_name']\n",
    }
    assert module_import_names(sources, known, packages={"pkg.core.world"}) == {
        "pkg.core.world.world": {
            "world": ["pkg.core.a", "pkg.core.world.groups"],
            "world_lib": ["pkg.core.b"],
            "world_module": ["pkg.core.world"],
        },
        "pkg.core.world.groups": {"g": ["pkg.core.c"]},
    }


def unlisted_modules(package_dir):
    """The modules and subpackages of a package that its ``__init__.py`` docstring does not name (as a word)."""
    doc = ast.get_docstring(ast.parse((package_dir / "__init__.py").read_text())) or ""
    names = [p.stem for p in package_dir.glob("*.py") if p.name != "__init__.py"]
    names += [p.name for p in package_dir.iterdir() if (p / "__init__.py").is_file()]
    return sorted(n for n in names if not re.search(rf"(?<![\w.]){re.escape(n)}(?!\w)", doc))


def core_packages():
    return sorted(p.parent for p in (ROOT / "npu_bridge" / "core").rglob("__init__.py") if p.parent.name != "core")


@pytest.mark.parametrize("package", core_packages(), ids=lambda p: p.relative_to(ROOT / "npu_bridge").as_posix())
def test_every_core_package_docstring_lists_its_modules(package):
    assert not unlisted_modules(package), f"{package}/__init__.py does not name: {unlisted_modules(package)}"


def test_the_module_list_check_finds_an_unlisted_module(tmp_path):
    (tmp_path / "__init__.py").write_text('"""A package.\n\nlisted   one line\nsub/     a subpackage\n"""\n')
    for name in ("listed.py", "unlisted.py", "listed_too.py"):
        (tmp_path / name).write_text("")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "__init__.py").write_text("")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "__init__.py").write_text("")
    assert unlisted_modules(tmp_path) == ["listed_too", "other", "unlisted"]
