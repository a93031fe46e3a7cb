"""A package under a second name (``alias_package``): the old name and its submodules give the new package's own
module objects, imported only when asked for; a package that really has the old name keeps it, submodules
included."""

import importlib
import sys

import pytest

from npu_bridge.core.runtime import module_aliases


def _write_package(root, name, marker):
    package = root / name
    package.mkdir()
    (package / "__init__.py").write_text(f"WHO = {marker!r}\n")
    (package / "sub.py").write_text(f"WHO = {marker!r} + '.sub'\n")


@pytest.fixture
def packages(tmp_path, monkeypatch):
    """Two fresh packages on sys.path and a clean alias table; everything is undone afterwards."""
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(module_aliases, "_packages", {})
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    before = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - before:
        del sys.modules[name]
    importlib.invalidate_caches()


def test_old_name_and_its_submodules_are_the_new_modules_imported_on_demand(packages):
    _write_package(packages, "aliastest_new_a", "new")
    module_aliases.alias_package("aliastest_old_a", "aliastest_new_a")
    assert "aliastest_new_a" not in sys.modules  # nothing imported until the old name is

    import aliastest_new_a.sub
    import aliastest_old_a.sub

    assert aliastest_old_a.sub is aliastest_new_a.sub
    assert sys.modules["aliastest_old_a"] is sys.modules["aliastest_new_a"]
    assert aliastest_old_a.sub.WHO == "new.sub"


def test_a_package_that_has_the_old_name_keeps_it_and_its_submodules(packages):
    _write_package(packages, "aliastest_new_b", "new")
    _write_package(packages, "aliastest_old_b", "old")
    importlib.invalidate_caches()
    module_aliases.alias_package("aliastest_old_b", "aliastest_new_b")

    import aliastest_old_b.sub

    assert aliastest_old_b.WHO == "old"
    assert aliastest_old_b.sub.WHO == "old.sub"
    assert "aliastest_new_b" not in sys.modules


def test_a_missing_new_package_fails_the_import_under_the_old_name(packages):
    module_aliases.alias_package("aliastest_old_c", "aliastest_missing_c")
    with pytest.raises(ModuleNotFoundError, match="aliastest_missing_c"):
        importlib.import_module("aliastest_old_c")


def test_on_import_hears_each_old_name_once_when_it_is_first_imported(packages):
    _write_package(packages, "aliastest_new_d", "new")
    heard = []
    module_aliases.alias_package("aliastest_old_d", "aliastest_new_d", heard.append)
    assert heard == []

    importlib.import_module("aliastest_old_d.sub")
    importlib.import_module("aliastest_old_d.sub")  # answered from sys.modules: not heard again

    assert heard == ["aliastest_old_d", "aliastest_old_d.sub"]
