"""The C functions of the library: declared once (npu_bridge/core/runtime/c_functions.py), the generated
ops/runtime/c_api.h is current, the library exports exactly those functions, and every one is bound with its
signature when the library loads."""

import ctypes
import pathlib
import re
import subprocess

from helpers.paths import REPO_ROOT

from npu_bridge.core.runtime import c_functions, c_header, native_library

GENERATED = pathlib.Path(REPO_ROOT, c_header.HEADER)


def test_the_generated_header_is_what_the_table_renders():
    assert GENERATED.read_text() == c_header.render(c_functions), (
        f"{c_header.HEADER} is stale: the build regenerates it (python3 -m pip install --no-build-isolation -e .)"
    )
    assert "size_t npu_bridge_dump_overflow_events_json(int64_t start, char* buf, size_t len);" in GENERATED.read_text()


def test_the_library_exports_exactly_the_declared_functions():
    symbols = subprocess.run(
        ["nm", "-D", "--defined-only", native_library.library_path()], capture_output=True, text=True, check=True
    ).stdout
    exported = set(re.findall(r" T (npu_bridge_\w+)$", symbols, re.M))
    assert exported == {name for name, *_ in c_functions.FUNCTIONS}


def test_every_function_is_bound_with_its_signature():
    library = native_library.c_api()
    for name, returns, parameters, _ in c_functions.FUNCTIONS:
        function = getattr(library, name)
        assert len(function.argtypes) == len(parameters), name
        assert (function.restype is None) == (returns == "void"), name
    assert library.npu_bridge_dump_changes.restype is ctypes.c_uint64
    assert library.npu_bridge_exception_dump_json.argtypes == [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]


def test_every_defining_source_includes_the_header():
    defining = [
        path
        for folder in ("ops", "optimizers")
        for path in pathlib.Path(REPO_ROOT, folder).rglob("*.cc")
        if re.search(r"^(?:extern \"C\" )?\w[\w ]*\*? ?npu_bridge_\w+\(", path.read_text(), re.M)
    ]
    assert len(defining) == 8
    missing = [p.name for p in defining if '#include "ops/runtime/c_api.h"' not in p.read_text()]
    assert not missing, f"define a C function without including ops/runtime/c_api.h: {missing}"
