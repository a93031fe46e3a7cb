"""The generated option documentation and docs/options.md's copy of it."""

import collections
import pathlib
import re
import subprocess
import sys

import pytest
from helpers.paths import REPO_ROOT

from npu_bridge.core.options import OPTIONS, STATUS_TEXT, docs, render_markdown
from npu_bridge.core.options import __main__ as options_main
from npu_bridge.core.runtime import doc_blocks

_UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


def _table_rows(text):
    return [line for line in text.splitlines() if line.startswith("| `")]


def test_docs_block_matches_the_table():
    assert docs.DOCS_PAGE == doc_blocks.DOCS_DIR / "options.md"
    assert doc_blocks.read_block(docs.BLOCK, docs.DOCS_PAGE) == render_markdown(), (
        "docs/options.md is stale: run `python -m npu_bridge.core.options --write-docs`"
    )


def test_every_option_has_one_row_with_seven_cells():
    rows = _table_rows(render_markdown())
    assert [row.split("`")[1] for row in rows] == list(OPTIONS)
    assert all(len(_UNESCAPED_PIPE.findall(row)) == 8 for row in rows)


def test_row_shows_kind_stage_default_allowed_status_and_effect():
    row = next(r for r in _table_rows(render_markdown()) if r.startswith("| `dump_step` |"))
    cells = [cell.strip() for cell in _UNESCAPED_PIPE.split(row)[1:-1]]
    spec = OPTIONS["dump_step"]
    assert cells == [
        "`dump_step`",
        "s",
        "session",
        "unset",
        spec.allowed.replace("|", "\\|") + "; checked only when enable_dump is set",
        STATUS_TEXT[spec.status],
        spec.effect,
    ]


@pytest.mark.parametrize(
    "name, shown",
    [("use_off_line", "`true`"), ("graph_run_mode", "`1`"), ("dump_mode", "`output`"), ("precision_mode", "unset")],
)
def test_defaults_are_rendered(name, shown):
    row = next(r for r in _table_rows(render_markdown()) if r.startswith(f"| `{name}` |"))
    assert row.split(" | ")[3] == shown


def test_status_counts_add_up():
    counts = collections.Counter(spec.status for spec in OPTIONS.values())
    text = render_markdown()
    for status, label in STATUS_TEXT.items():
        assert f"- {label}: {counts[status]} option{'' if counts[status] == 1 else 's'}" in text.splitlines()
    assert sum(counts.values()) == len(OPTIONS)


def test_write_docs_only_replaces_the_block(tmp_path):
    page = tmp_path / "options.md"
    page.write_text(
        "# Title\n\nintro\n\n<!-- options-table:start -->\nold table\n<!-- options-table:end -->\n\n## After\n"
    )
    assert options_main.main(["--write-docs", "--page", str(page)]) == 0
    text = page.read_text()
    assert text.startswith("# Title\n\nintro\n\n")
    assert text.endswith("<!-- options-table:end -->\n\n## After\n")
    assert "old table" not in text
    assert doc_blocks.read_block(docs.BLOCK, page) == render_markdown()
    options_main.main(["--write-docs", "--page", str(page)])
    assert page.read_text() == text


def test_write_docs_without_markers_fails(tmp_path, capsys):
    page = tmp_path / "options.md"
    page.write_text("# no markers\n")
    assert options_main.main(["--write-docs", "--page", str(page)]) == 1
    assert "options-table:start" in capsys.readouterr().err
    assert page.read_text() == "# no markers\n"
    with pytest.raises(ValueError, match="options-table:start"):
        doc_blocks.read_block(docs.BLOCK, page)


@pytest.mark.slow
def test_python_dash_m_prints_the_table():
    result = subprocess.run(
        [sys.executable, "-m", "npu_bridge.core.options"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=pathlib.Path(REPO_ROOT),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == render_markdown()
