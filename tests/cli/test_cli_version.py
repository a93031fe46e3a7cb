"""--version and --help of every command-line tool: exit 0, the version line, and no TensorFlow import."""

import re

import pytest
from helpers.processes import run_python


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    "module, prog",
    [
        ("npu_bridge.core.cli.main", "npu-bridge"),
        ("npu_bridge.core.dump.cli", "npu-dump"),
        ("npu_bridge.core.profiling.cli", "npu-prof"),
        ("npu_bridge.core.launch.cli", "npu-run"),
        ("npu_bridge.core.accuracy.cli", "npu-debug"),
    ],
)
def test_every_tool_answers_version_and_help_without_tensorflow(module, prog):
    for flag, expected in (
        ("--version", rf"^{prog} \d+\.\d+\.\d+ \(C\+\+ library built for TensorFlow 2\.21\.\d+\)$"),
        ("--help", rf"^usage: {prog} "),
    ):
        result = run_python(
            f"""
            import sys
            from {module} import main
            try:
                main(["{flag}"])
            except SystemExit as e:
                assert e.code == 0, e.code
            assert "tensorflow" not in sys.modules, "imported TensorFlow"
            """
        )
        assert result.returncode == 0, result.stderr
        assert re.search(expected, result.stdout.strip(), re.M), result.stdout


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_npu_bridge_info_hides_tensorflows_start_up_lines():
    result = run_python("from npu_bridge.core.cli.main import main; raise SystemExit(main(['info']))")
    assert result.returncode == 0, result.stderr
    assert "TensorFlow 2.21" in result.stdout
    for noise in ("oneDNN custom operations", "cuda", "absl::InitializeLog", "cpu_feature_guard"):
        assert noise not in result.stderr, result.stderr


def test_the_package_version_is_the_one_pyproject_declares():
    import tomllib

    from helpers.paths import REPO_ROOT

    import npu_bridge

    with open(f"{REPO_ROOT}/pyproject.toml", "rb") as f:
        declared = tomllib.load(f)["project"]["version"]
    assert npu_bridge.__version__ == declared
