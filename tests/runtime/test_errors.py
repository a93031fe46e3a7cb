"""Error classes: all defined in npu_bridge.core.runtime.errors, all NpuBridgeErrors that keep the builtin
base upstream raises; user-facing raises use them, not bare builtins."""

import ast
import json
import pathlib
import re

import pytest
import tensorflow as tf
from helpers.paths import REPO_ROOT, python_files
from helpers.processes import run_python

from npu_bridge.core.runtime import errors, log
from npu_bridge.core.runtime.errors import (
    DumpFormatError,
    DumpTreeError,
    EnvironmentVariableError,
    LaunchError,
    NpuArgumentError,
    NpuArgumentTypeError,
    NpuBridgeError,
    NpuOptionError,
    NpuUsageError,
    RankTableError,
)

PACKAGES = ("npu_bridge", "hccl")
BUILTINS = ("ValueError", "TypeError", "RuntimeError")
# Raises of bare builtins that are programming errors of npu_bridge itself, never a user's input:
# (file, enclosing function, builtin) -> number of raises there.
ALLOWED_BUILTIN_RAISES = {
    # The option table's own consistency checks, run once at import: a bad entry is a bug in table.py.
    ("npu_bridge/core/options/spec.py", "OptionSpec.__post_init__", "ValueError"): 3,
    ("npu_bridge/core/options/table.py", "_index", "ValueError"): 1,
    # NpuOptions.by_stage is called by npu_bridge's own session code with its own stage names.
    ("npu_bridge/core/options/parse.py", "NpuOptions.by_stage", "ValueError"): 1,
    # Callers validate dtypes first (hccl_ops raise NpuArgumentTypeError); reaching this is a bug.
    ("npu_bridge/core/collectives/transport.py", "encoded_dtype", "TypeError"): 1,
}


@pytest.mark.slow
def test_every_exception_class_of_an_importable_module_is_an_npu_bridge_error_from_errors_py():
    result = run_python(f"""
        import importlib, json, pkgutil
        found, imported, skipped = [], [], []
        for package in {PACKAGES!r}:
            root = importlib.import_module(package)
            for info in pkgutil.walk_packages(root.__path__, package + ".", onerror=lambda name: None):
                if info.name.rsplit(".", 1)[-1] == "__main__":  # running it is what -m does
                    continue
                try:
                    module = importlib.import_module(info.name)
                except ImportError as e:  # needs something absent here
                    skipped.append(f"{{info.name}}: {{e}}")
                    continue
                imported.append(info.name)
                for value in vars(module).values():
                    if isinstance(value, type) and issubclass(value, BaseException) and \\
                            value.__module__.split(".")[0] in {PACKAGES!r}:
                        found.append([value.__module__, value.__qualname__, [c.__name__ for c in value.__mro__]])
        print(json.dumps({{"found": found, "imported": imported, "skipped": skipped}}))
    """)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert len(report["imported"]) > 100, report["skipped"]
    classes = {(module, name): mro for module, name, mro in report["found"]}
    misplaced = sorted(f"{module}.{name}" for module, name in classes if module != errors.__name__)
    assert not misplaced, f"define these in {errors.__name__}: {misplaced}"
    not_ours = sorted(name for (_, name), mro in classes.items() if "NpuBridgeError" not in mro)
    assert not not_ours, f"derive these from NpuBridgeError: {not_ours}"


def test_no_exception_class_is_defined_outside_errors_py():
    errors_py = pathlib.Path(errors.__file__).resolve()
    misplaced = []
    for path in python_files(*PACKAGES):
        if path.resolve() == errors_py:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and any(
                ast.unparse(base).endswith(("Error", "Exception")) for base in node.bases
            ):
                misplaced.append(f"{path.relative_to(REPO_ROOT)}:{node.lineno} {node.name}")
    assert not misplaced


def test_every_class_in_errors_py_derives_from_npu_bridge_error_and_a_builtin_where_it_had_one():
    classes = [value for value in vars(errors).values() if isinstance(value, type) and value is not NpuBridgeError]
    assert len(classes) >= 15
    for cls in classes:
        assert issubclass(cls, NpuBridgeError), cls
    for name, builtin in [
        ("DumpFormatError", ValueError),
        ("DumpTreeError", FileNotFoundError),
        ("NpuArgumentError", ValueError),
        ("NpuArgumentTypeError", TypeError),
        ("NpuUsageError", RuntimeError),
        ("OutfeedError", RuntimeError),
        ("OptionValueError", ValueError),
        ("EnvironmentVariableError", ValueError),
        ("CollectiveError", RuntimeError),
        ("NativeLibraryError", ImportError),
        ("NotProvidedError", AttributeError),
    ]:
        assert issubclass(getattr(errors, name), builtin), name


def test_npu_bridge_errors_is_the_public_home_of_every_error_class():
    import npu_bridge  # the package root, as scripts import it
    import npu_bridge.errors

    defined = {n for n, v in vars(errors).items() if isinstance(v, type) and issubclass(v, BaseException)}
    assert sorted(npu_bridge.errors.__all__) == sorted(defined)
    assert all(getattr(npu_bridge.errors, name) is getattr(errors, name) for name in defined)
    assert npu_bridge.NpuBridgeError is NpuBridgeError


@pytest.mark.slow
def test_errors_py_imports_without_tensorflow():
    result = run_python("""
        import sys
        from npu_bridge.core.runtime import errors
        from npu_bridge.errors import NpuBridgeError, CollectiveError
        from npu_bridge.core.launch import cli
        print("tensorflow" in sys.modules)
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False"]


def _enclosing_functions(tree):
    """Yields (raise node, qualified name of the function around it)."""

    def visit(node, names):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                yield from visit(child, names + [child.name])
            else:
                if isinstance(child, ast.Raise):
                    yield child, ".".join(names) or "<module>"
                yield from visit(child, names)

    yield from visit(tree, [])


def _builtin_raises():
    found = {}
    for path in python_files(*PACKAGES):
        relative = path.relative_to(REPO_ROOT).as_posix()
        for node, function in _enclosing_functions(ast.parse(path.read_text(encoding="utf-8"))):
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(exc, ast.Name) and exc.id in BUILTINS:
                key = (relative, function.split(".<locals>")[0], exc.id)
                found[key] = found.get(key, 0) + 1
    return found


def test_user_facing_raises_use_npu_bridge_errors_not_bare_builtins():
    found = _builtin_raises()
    unexpected = {key: n for key, n in found.items() if ALLOWED_BUILTIN_RAISES.get(key) != n}
    assert not unexpected, (
        "raise a class of npu_bridge.core.runtime.errors (e.g. NpuArgumentError, "
        f"NpuArgumentTypeError, NpuUsageError) instead: {unexpected}"
    )
    stale = set(ALLOWED_BUILTIN_RAISES) - set(found)
    assert not stale, f"remove these from ALLOWED_BUILTIN_RAISES: {stale}"


@pytest.fixture
def two_ranks(monkeypatch):
    monkeypatch.setenv("RANK_SIZE", "2")
    monkeypatch.setenv("RANK_ID", "0")
    monkeypatch.setenv("DEVICE_ID", "0")


def _bad_rank_table(tmp_path):
    from npu_bridge.core.world import rank_table

    path = tmp_path / "table.json"
    path.write_text("{")
    rank_table.load(str(path))


def _bad_run_config(**kwargs):
    from npu_bridge.estimator.npu.npu_config import NPURunConfig

    NPURunConfig(**kwargs)


def _bad_option():
    from npu_bridge.core.options import parse

    parse.parse_values({"graph_run_mode": 5}, "test")


def _hccl_op(*args, **kwargs):
    from npu_bridge.hccl import hccl_ops

    with tf.Graph().as_default():
        hccl_ops.allreduce(*args, **kwargs)


def _stopped_profiler():
    from npu_bridge.core.profiling.profiler_scope import Profiler

    Profiler().stop()


def _launch(tmp_path):
    from npu_bridge.core.launch import plan

    plan.plan_local(0, str(tmp_path), {})


def _dump_file(tmp_path):
    from npu_bridge.core.dump import dump_file

    path = tmp_path / "Add.a.1.2.3"
    path.write_bytes(b"x")
    dump_file.load(str(path))


def _dump_tree(tmp_path):
    from npu_bridge.core.dump import dump_tree

    dump_tree.scan(str(tmp_path / "missing"))


BAD_INPUTS = [
    ("option value", lambda tmp: _bad_option(), NpuOptionError, ValueError, "graph_run_mode value must be 0 or 1"),
    ("rank table", _bad_rank_table, RankTableError, ValueError, "is not valid JSON"),
    (
        "hccl_ops reduction",
        lambda tmp: _hccl_op([1.0], "mean"),
        NpuArgumentError,
        ValueError,
        "allreduce: reduction 'mean' is not supported",
    ),
    (
        "hccl_ops dtype",
        lambda tmp: _hccl_op(tf.constant([1.0], tf.float64), "sum"),
        NpuArgumentTypeError,
        TypeError,
        "allreduce: tensor has dtype float64",
    ),
    (
        "run config value",
        lambda tmp: _bad_run_config(iterations_per_loop=0),
        NpuArgumentError,
        ValueError,
        "iterations_per_loop must be positive",
    ),
    (
        "run config type",
        lambda tmp: _bad_run_config(mix_compile_mode="yes"),
        NpuArgumentTypeError,
        TypeError,
        '"mix_compile_mode" type must be bool',
    ),
    (
        "log level variable",
        lambda tmp: log.configure({"ASCEND_GLOBAL_LOG_LEVEL": "9"}),
        EnvironmentVariableError,
        ValueError,
        "ASCEND_GLOBAL_LOG_LEVEL has invalid value '9'",
    ),
    ("profiler state", lambda tmp: _stopped_profiler(), NpuUsageError, RuntimeError, "this Profiler was not started"),
    ("launcher size", _launch, LaunchError, NpuBridgeError, "-n 0: the number of ranks must be in"),
    ("dump file", _dump_file, DumpFormatError, ValueError, "not an Ascend dump file"),
    ("dump tree", _dump_tree, DumpTreeError, FileNotFoundError, "no such dump directory or file"),
]


@pytest.mark.parametrize(
    "make, error, builtin, message", [case[1:] for case in BAD_INPUTS], ids=[case[0] for case in BAD_INPUTS]
)
def test_bad_input_raises_the_npu_bridge_error_which_the_builtin_still_catches(
    two_ranks, tmp_path, make, error, builtin, message
):
    with pytest.raises(error, match=re.escape(message)):
        make(tmp_path)
    try:
        make(tmp_path)
    except builtin as e:  # what scripts written for upstream catch
        assert isinstance(e, NpuBridgeError) and message in str(e)


def test_an_option_error_quotes_at_most_about_200_characters_of_the_value_and_500_of_the_detail():
    error = NpuOptionError("dump_path", "x" * 100000, "existing directory", "the path " + "y" * 100000 + " is missing")
    message = str(error)
    assert len(message) < 1000, len(message)
    assert "... (100002 characters)" in message and "... (100020 characters)" in message
    assert message.startswith("NpuOptimizer option 'dump_path' has invalid value 'xxx")
    assert message.endswith(". Allowed: existing directory")
    assert error.value == "x" * 100000  # the exception keeps the whole value


def test_shortened_text_keeps_short_text_and_cuts_long_text():
    assert errors.shortened_text("/a/b") == "/a/b"
    assert errors.shortened_text("a" * 250, 10) == "aaaaaaaaaa... (250 characters)"
    assert errors.shortened("a" * 250, 10) == "'aaaaaaaaa... (252 characters)"
