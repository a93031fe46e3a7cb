"""Attacks on the artifact tools (npu-dump, npu-prof, the profiling exporter, tools/render_report.py).

Each test plants what a hostile user or a hostile file would -- a symlink at an output name, a directory of another
user inside an output tree, an index file naming paths outside its tree, markup in a profile -- and checks that
nothing is written through a link, nothing is read outside the tree an index belongs to, and reports stay inert.
"""

import csv
import html
import html.parser
import importlib.util
import os
import re
import shutil
import stat

import numpy as np
import pytest
from helpers.paths import REPO_ROOT
from helpers.profiling import end_profiles, profiled_config, the_profile, train

from npu_bridge.core.dump import dump_file
from npu_bridge.core.dump.cli import main as npu_dump
from npu_bridge.core.profiling import layout
from npu_bridge.core.profiling.cli import main as npu_prof
from npu_bridge.core.runtime import atomic_write, inert_text, safe_paths
from npu_bridge.core.runtime.errors import OutputFileError, UnsafePathError

VICTIM_TEXT = "the victim's file: it must stay as it is\n"
SECRET = "SecretOutsideTheTree"  # an op type only a file outside the tree holds
OTHER_USER = 65534  # nobody
STEP = os.path.join("20240101000000", "0", "ge_default_20240101000000_1", "1", "0")
needs_root = pytest.mark.skipif(
    os.geteuid() != 0, reason="giving a directory to another user (uid 65534) needs root; CI runs the tests as root"
)


@pytest.fixture(autouse=True)
def _no_profile_left():
    yield
    end_profiles()


@pytest.fixture
def victim(tmp_path):
    """A 0600 file outside every tree."""
    path = tmp_path / "outside" / "victim.txt"
    path.parent.mkdir()
    path.write_text(VICTIM_TEXT)
    os.chmod(path, 0o600)
    return path


def assert_untouched(victim):
    assert victim.read_text() == VICTIM_TEXT
    assert stat.S_IMODE(os.stat(victim).st_mode) == 0o600


def assert_regular(path, mode=None):
    info = os.lstat(path)
    assert stat.S_ISREG(info.st_mode), f"{path} is not a regular file"
    if mode is not None:
        assert stat.S_IMODE(info.st_mode) == mode & ~current_umask(), oct(info.st_mode)


def current_umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def plant_foreign_directory(path, kind, victim_dir):
    """Puts another user's directory at ``path``: a real one (``kind`` "directory") or a symlink to ``victim_dir``."""
    if kind == "symlink":
        os.symlink(victim_dir, path)
        if os.geteuid() == 0:
            os.lchown(path, OTHER_USER, OTHER_USER)
            os.chown(victim_dir, OTHER_USER, OTHER_USER)
    else:
        os.mkdir(path)
        os.chown(path, OTHER_USER, OTHER_USER)


def listing(directory):
    """{relative path: bytes} of every file below ``directory``."""
    found = {}
    for parent, _, files in os.walk(directory):
        for name in files:
            full = os.path.join(parent, name)
            found[os.path.relpath(full, directory)] = open(full, "rb").read()
    return found


# ---- dumps --------------------------------------------------------------------------------------------------------


def dump_tree(root):
    """A small dump tree (two ops in one step directory), written without a session."""
    step = root / STEP
    step.mkdir(parents=True)
    matrix = np.arange(12, dtype=np.float32).reshape(3, 4)
    dump_file.write_dump_file(
        step / "MatMul.dense_MatMul.7.0.1700000000000100", "dense/MatMul", inputs=[matrix], outputs=[matrix * 2]
    )
    dump_file.write_dump_file(step / "Relu.dense_Relu.8.0.1700000000000200", "dense/Relu", outputs=[matrix])
    return root


@pytest.mark.parametrize("command", ["compare", "overflow"])
def test_npu_dump_output_files_replace_a_planted_symlink(command, tmp_path, victim, capsys):
    tree = str(dump_tree(tmp_path / "dump"))
    output = tmp_path / "result"
    output.symlink_to(victim)
    argv = ["compare", tree, tree] if command == "compare" else ["overflow", tree]
    assert npu_dump([*argv, "-o", str(output)]) == 0, capsys.readouterr().err
    assert_untouched(victim)  # before: compare renamed over the link's target (and made it 0644)
    assert_regular(output, safe_paths.REPORT_MODE)
    if command == "compare":
        assert output.read_text().startswith("Index,")
    assert sorted(os.listdir(tmp_path)) == ["dump", "outside", "result"]  # no temporary file left


def test_npu_dump_convert_replaces_a_planted_symlink_and_writes_owner_only_files(tmp_path, victim, capsys):
    tree = str(dump_tree(tmp_path / "dump"))
    out = tmp_path / "npy"
    assert npu_dump(["convert", tree, "-o", str(out)]) == 0
    converted = out / STEP / "MatMul.dense_MatMul.7.0.1700000000000100.output.0.npy"
    assert_regular(converted, safe_paths.DEFAULT_DATA_MODE)  # tensor data: owner-only
    assert stat.S_IMODE(os.stat(converted.parent).st_mode) == 0o700
    converted.unlink()
    converted.symlink_to(victim)  # planted where the next conversion writes
    assert npu_dump(["convert", tree, "-o", str(out)]) == 0, capsys.readouterr().err
    assert_untouched(victim)  # before: np.save wrote the tensor through the link
    assert_regular(converted, safe_paths.DEFAULT_DATA_MODE)
    np.testing.assert_array_equal(np.load(converted), np.arange(12, dtype=np.float32).reshape(3, 4) * 2)


def test_npu_bridge_data_mode_widens_converted_files(tmp_path, monkeypatch):
    tree = str(dump_tree(tmp_path / "dump"))
    monkeypatch.setenv(safe_paths.DATA_MODE_VARIABLE, "640")
    assert npu_dump(["convert", tree, "-o", str(tmp_path / "npy")]) == 0
    for parent, _, files in os.walk(tmp_path / "npy"):
        for name in files:
            assert stat.S_IMODE(os.stat(os.path.join(parent, name)).st_mode) == 0o640 & ~current_umask()


@pytest.mark.parametrize("kind", ["symlink", pytest.param("directory", marks=needs_root)])
def test_npu_dump_convert_refuses_another_users_directory_in_its_tree(kind, tmp_path, capsys):
    tree = str(dump_tree(tmp_path / "dump"))
    out = tmp_path / "npy"
    out.mkdir()
    planted_dir = tmp_path / "planted"
    planted_dir.mkdir()
    plant_foreign_directory(out / STEP.split(os.sep)[0], kind, planted_dir)
    assert npu_dump(["convert", tree, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    reason = "it is a symlink" if kind == "symlink" else f"it belongs to user id {OTHER_USER}"
    assert f"refusing to write into {out / STEP.split(os.sep)[0]}: {reason}" in err, err
    assert listing(out) == {} and listing(planted_dir) == {}  # nothing written there, nor through the link


def hostile_mapping_tree(tmp_path, name):
    tree = dump_tree(tmp_path / "dump")
    (tree / STEP / "mapping.csv").write_text(f"{name},MatMul.dense_MatMul.9.0.1700000000000300\n")
    return tree


@pytest.mark.parametrize("where", ["absolute", "parent", "subdirectory"])
def test_npu_dump_refuses_a_mapping_csv_that_names_paths_outside_its_directory(where, tmp_path, victim, capsys):
    victim.write_text(VICTIM_TEXT + SECRET)
    os.chmod(victim, 0o600)
    name = {
        "absolute": str(victim),
        "parent": os.path.join(*[".."] * (len(STEP.split(os.sep)) + 1), "outside", "victim.txt"),
        "subdirectory": "deeper/victim.txt",
    }[where]
    tree = hostile_mapping_tree(tmp_path, name)
    mapping = tree / STEP / "mapping.csv"
    outputs = tmp_path / "o.csv", tmp_path / "o"
    for argv in (
        ["info", str(tree)],
        ["compare", str(tree), str(tree), "-o", str(outputs[0])],
        ["convert", str(tree), "-o", str(outputs[1])],
    ):
        assert npu_dump(argv) == 2, argv
        captured = capsys.readouterr()
        assert f"npu-dump: {mapping} names the path {name!r}" in captured.err, (argv, captured.err)
        assert "Traceback" not in captured.err and len(captured.err.splitlines()) == 1
        assert SECRET not in captured.out + captured.err
    assert not any(output.exists() for output in outputs)


# ---- profiles ------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """One exported profile of 3 training steps, recorded once for the module."""
    output = tmp_path_factory.mktemp("recorded") / "out"
    train(profiled_config(output, training_trace="on", task_trace="on"), steps=3)
    end_profiles()
    return the_profile(output)


@pytest.fixture
def profile(recorded, tmp_path):
    """A copy of the recorded profile the test may attack."""
    copy = str(tmp_path / "tree" / os.path.basename(recorded))
    shutil.copytree(recorded, copy, symlinks=True)
    return copy


def test_a_recorded_profile_is_made_of_our_directories_and_report_mode_files(recorded):
    for parent, directories, files in os.walk(recorded):
        for name in directories:
            path = os.path.join(parent, name)
            assert not os.path.islink(path) and os.stat(path).st_uid == os.geteuid()
        for name in files:
            assert_regular(os.path.join(parent, name), safe_paths.REPORT_MODE)  # times and op names, no tensor data


def test_npu_prof_report_replaces_a_planted_symlink(profile, tmp_path, victim, capsys):
    output = tmp_path / "report.html"
    output.symlink_to(victim)
    assert npu_prof(["report", profile, "-o", str(output)]) == 0, capsys.readouterr().err
    assert_untouched(victim)
    assert_regular(output, safe_paths.REPORT_MODE)
    assert output.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    default = os.path.join(profile, layout.REPORT_FILE)  # the report written beside the profile
    os.remove(default)
    os.symlink(victim, default)
    assert npu_prof(["report", profile]) == 0
    assert_untouched(victim)
    assert_regular(default, safe_paths.REPORT_MODE)


@pytest.mark.parametrize("kind", ["symlink", pytest.param("directory", marks=needs_root)])
def test_npu_prof_export_refuses_another_users_export_directory(kind, profile, tmp_path, capsys):
    export_dir = os.path.join(profile, layout.EXPORT_DIR)
    planted_dir = tmp_path / "planted"
    shutil.copytree(export_dir, planted_dir)
    shutil.rmtree(export_dir)
    if kind == "symlink":
        plant_foreign_directory(export_dir, kind, planted_dir)
    else:
        shutil.copytree(planted_dir, export_dir)
        for parent, directories, files in os.walk(export_dir):
            for name in [parent, *(os.path.join(parent, n) for n in directories + files)]:
                os.chown(name, OTHER_USER, OTHER_USER)
    before = listing(export_dir)
    assert npu_prof(["export", profile]) == 2
    err = capsys.readouterr().err
    reason = "it is a symlink" if kind == "symlink" else f"it belongs to user id {OTHER_USER}"
    assert f"npu-prof: exporting {profile} failed, its previous export (if any) is unchanged: " in err
    assert f"refusing to write into {export_dir}: {reason}" in err, err
    assert listing(export_dir) == before  # nothing added, nothing removed
    assert listing(planted_dir) == before


def secret_copy(profile, destination):
    """A copy of the profile's op_summary whose op types are ``SECRET``, at ``destination``."""
    source = os.path.join(profile, layout.read_info(profile)["exported"]["op_summary"])
    with open(source, encoding="utf-8") as f:
        lines = f.read().splitlines()
    header = lines[0].split(",")
    column = header.index("OP Type")
    rows = [line.split(",") for line in lines[1:]]
    for row in rows:
        row[column] = SECRET
    with open(destination, "w", encoding="utf-8") as f:
        f.write("\n".join(",".join(row) for row in [header, *rows]) + "\n")
    return destination


@pytest.mark.parametrize("where", ["absolute", "parent", "symlink"])
def test_npu_prof_reads_only_the_files_info_json_names_inside_the_profile(where, profile, tmp_path, capsys):
    outside = secret_copy(profile, str(tmp_path / "outside.csv"))
    info = layout.read_info(profile)
    if where == "absolute":
        named = outside
    elif where == "parent":
        named = os.path.join("..", "..", "outside.csv")
    else:  # a name inside the profile, but a symlink leading out of it
        named = info["exported"]["op_summary"]
        os.remove(os.path.join(profile, named))
        os.symlink(outside, os.path.join(profile, named))
    info["exported"]["op_summary"] = named
    layout.write_info(profile, info)
    info_path = os.path.join(profile, layout.INFO_FILE)
    report = tmp_path / "r.html"
    for argv in (["summary", profile], ["report", profile, "-o", str(report)]):
        assert npu_prof(argv) == 2, argv
        captured = capsys.readouterr()
        assert f"npu-prof: {info_path} names the path {named!r}, which lea" in captured.err, captured.err
        assert "Traceback" not in captured.err and len(captured.err.splitlines()) == 1
        assert SECRET not in captured.out + captured.err
    assert not report.exists()


def test_npu_prof_reads_the_same_profile_when_its_names_are_inside(profile, capsys):
    assert npu_prof(["summary", profile]) == 0  # the attacks above differ from this only in the names
    assert "3 iterations of graph" in capsys.readouterr().out


class _Tags(html.parser.HTMLParser):
    """The tags and attributes of a page."""

    def __init__(self):
        super().__init__()
        self.tags, self.attributes = set(), []

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.attributes.extend(attrs)


@pytest.mark.parametrize(
    "payload", ["<script>alert(1)</script>", '"><img src=x onerror=alert(1)>', "'><img src=x onerror=alert(1)>"]
)
def test_the_report_escapes_what_info_json_says(payload, profile, capsys):
    info = layout.read_info(profile)
    for model in info["models"]:
        model.update(fp_point=payload, bp_point=payload, fp_point_source=payload, bp_point_source=payload)
        model["fetched"] = [payload]
    info["backend"] = "cpu"
    timeline = info["exported"]["timeline"]
    shutil.copy(os.path.join(profile, timeline), os.path.join(profile, "javascript:alert(1)"))
    info["exported"]["timeline"] = "javascript:alert(1)"
    layout.write_info(profile, info)
    assert npu_prof(["report", profile]) == 0, capsys.readouterr().err
    text = open(os.path.join(profile, layout.REPORT_FILE), encoding="utf-8").read()
    assert "<script" not in text.lower() and "<img" not in text.lower()
    assert html.escape(payload) in text  # shown, as text
    page = _Tags()
    page.feed(text)
    assert page.tags <= {
        *("html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p", "div", "b", "code", "wbr"),
        *("table", "tr", "th", "td", "a", "svg", "rect", "line", "polyline", "text"),
    }, page.tags
    assert not [name for name, _ in page.attributes if name.startswith("on")]
    links = [value for name, value in page.attributes if name == "href"]
    assert links == ["javascript%3Aalert%281%29"]  # a file name, not a script


# ---- outputs: the shared rules -------------------------------------------------------------------------------------


def test_system_symlinks_are_not_replaced(tmp_path):
    for path in ("/dev/stdout", "/dev/fd/1"):
        if os.path.islink(path):
            with pytest.raises(OutputFileError, match="it is a symlink in /(dev|proc)"):
                atomic_write.check_output(path, "report")
    link = tmp_path / "to-fifo"
    os.mkfifo(tmp_path / "fifo")
    link.symlink_to(tmp_path / "fifo")
    atomic_write.write_output(str(link), "text", "report")  # a link elsewhere is replaced, whatever it points to
    assert_regular(link)
    assert link.read_text() == "text" and stat.S_ISFIFO(os.lstat(tmp_path / "fifo").st_mode)


def test_inside_names_the_index_and_the_path(tmp_path):
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "out").symlink_to(tmp_path)
    source = str(tmp_path / "tree" / "info.json")
    assert safe_paths.inside(str(tmp_path / "tree"), "a/b.csv", source) == str(tmp_path / "tree" / "a" / "b.csv")
    for relative in ("/etc/passwd", "../x", "a/../../x", "", "a\0b", 7):
        with pytest.raises(UnsafePathError, match=f"^{source} names the path "):
            safe_paths.inside(str(tmp_path / "tree"), relative, source)
    safe_paths.inside(str(tmp_path / "tree"), "out/x", source)  # lexically inside
    with pytest.raises(UnsafePathError, match="leads out of the tree .* through a symlink"):
        safe_paths.inside(str(tmp_path / "tree"), "out", source, resolve=True)


# ---- tools/render_report.py ----------------------------------------------------------------------------------------


@pytest.fixture
def render_tool():
    spec = importlib.util.spec_from_file_location("render_report", os.path.join(REPO_ROOT, "tools", "render_report.py"))
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return tool


def fake_browser(tmp_path, exit_code=0):
    """An executable that records its arguments and, like Chromium, writes the --screenshot file."""
    path = tmp_path / "fake-chromium"
    path.write_text(
        "#!/bin/sh\n"
        f'printf "%s\\n" "$@" > {tmp_path / "argv.txt"}\n'
        'for a in "$@"; do case "$a" in --screenshot=*) printf PNG > "${a#--screenshot=}";; esac; done\n'
        f"exit {exit_code}\n"
    )
    path.chmod(0o755)
    return str(path)


def test_render_report_keeps_the_browser_sandbox_unless_asked(render_tool, tmp_path, monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 0)  # as root too: the sandbox is the user's call, not ours
    command = render_tool.browser_command("chromium", "r.html", "r.png", str(tmp_path))
    assert "--no-sandbox" not in command and command[0] == "chromium"
    assert "--no-sandbox" in render_tool.browser_command("chromium", "r.html", "r.png", str(tmp_path), no_sandbox=True)

    page = tmp_path / "report.html"
    page.write_text("<!DOCTYPE html><p>x</p>")
    browser = fake_browser(tmp_path)
    assert render_tool.main([str(page), "--browser", browser]) == 0
    assert "--no-sandbox" not in (tmp_path / "argv.txt").read_text().split()
    assert render_tool.main([str(page), "--browser", browser, "--no-sandbox"]) == 0
    assert "--no-sandbox" in (tmp_path / "argv.txt").read_text().split()


def test_render_report_explains_a_browser_that_refuses_root_and_writes_no_link(
    render_tool, tmp_path, victim, monkeypatch, capsys
):
    page = tmp_path / "report.html"
    page.write_text("<!DOCTYPE html><p>x</p>")
    png = tmp_path / "report.png"
    png.symlink_to(victim)
    assert render_tool.main([str(page), "--browser", fake_browser(tmp_path)]) == 0
    assert_untouched(victim)
    assert_regular(png, safe_paths.REPORT_MODE)
    assert png.read_bytes() == b"PNG"

    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert render_tool.main([str(page), "--browser", fake_browser(tmp_path, exit_code=1)]) == 1
    err = capsys.readouterr().err
    assert "running as root, Chromium refuses to start with its sandbox" in err and "--no-sandbox" in err


# ---- terminal output: strings from files are shown inert -----------------------------------------------------------

ESCAPES = {
    "window title": "\x1b]0;pwned\x07",
    "erase line": "\x1b[2K\r",
    "cursor up": "\x1b[1A",
    "hide the line above": "\x1b[1A\x1b[2K\rall good",
    "C1 CSI": "\x9b2J",
    "bidi override": "\u202egnp.exe",
    "forged line": "\nnpu-dump: nothing to see",
}
# What a terminal obeys; the tools' own newlines and tabs are allowed.
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def assert_inert(text, payload):
    """``text`` shows ``payload`` as visible escapes and holds no raw control character but newline and tab."""
    assert inert_text.value(payload) in text, text
    assert not RAW_CONTROL.search(text), repr(text)
    for forged in payload.split("\n")[1:]:  # no line of its own
        assert not [line for line in text.splitlines() if line.startswith(forged)], text


def test_the_escape_rule():
    assert inert_text.value("a\x1b]0;t\x07\u202eb\n\t\x9b") == "a\\x1b]0;t\\x07\\u202eb\\n\\t\\x9b"
    assert inert_text.lines("own\nlines\tkept \x1b[2K") == "own\nlines\tkept \\x1b[2K"
    assert inert_text.value(inert_text.value("\x1b")) == "\\x1b"  # escaping twice changes nothing
    assert inert_text.csv_name("=HYPERLINK(1)") == "'=HYPERLINK(1)" and inert_text.csv_cell(-1.5) == -1.5
    assert inert_text.html_text("<b>\x1b") == "&lt;b&gt;\\x1b"


def hostile_dump_trees(tmp_path, payload, prefix="evil"):
    """Two dump trees whose op (and a file name) carry ``payload``: the tensors differ, the first overflows."""
    trees = []
    for name, values in (("mine", [1.0, np.inf, 3.0]), ("truth", [3.0, 2.0, 1.0])):
        step = tmp_path / name / STEP
        step.mkdir(parents=True)
        op = f"{prefix}{payload}/MatMul"
        dump_file.write_dump_file(step / "MatMul.evil.8.0.1700000000000200", op, outputs=[np.float32(values)])
        block = bytearray(dump_file.OVERFLOW_PAYLOAD_SIZE)
        dump_file.write_dump_file(
            step / "Opdebug.Node_OpDebug.8.0.1700000000000201", "Node_OpDebug", outputs=[np.uint8(block)]
        )
        trees.append(tmp_path / name)
    single = tmp_path / f"file{payload}.bin"
    dump_file.write_dump_file(single, f"evil{payload}/Add", outputs=[np.float32([1.0])])
    return trees, single


@pytest.mark.parametrize("payload", ESCAPES.values(), ids=ESCAPES.keys())
def test_npu_dump_shows_op_and_file_names_inert(payload, tmp_path, capsys):
    (mine, truth), single = hostile_dump_trees(tmp_path, payload)
    result = tmp_path / "result.csv"
    report = tmp_path / "overflow.txt"
    runs = (
        (["info", str(single), str(mine)], 0),
        (["compare", str(mine), str(truth), "-o", str(result)], 1),
        (["overflow", str(mine), "-o", str(report)], 1),
    )
    for argv, code in runs:
        assert npu_dump(argv) == code, capsys.readouterr()
        captured = capsys.readouterr()
        assert_inert(captured.out + captured.err, payload)
    for written in (result, report):
        assert_inert(written.read_text(encoding="utf-8"), payload)
    single.write_bytes(single.read_bytes()[:-1])  # damaged: the error names the file, inert
    assert npu_dump(["info", str(single)]) == 2
    err = capsys.readouterr().err
    assert_inert(err, payload) and "truncated or damaged" in err


def test_npu_dump_compare_csv_neutralises_formulas(tmp_path, capsys):
    (mine, truth), _ = hostile_dump_trees(tmp_path, "=HYPERLINK(\x1b)", prefix="")
    result = tmp_path / "result.csv"
    assert npu_dump(["compare", str(mine), str(truth), "-o", str(result)]) == 1
    with open(result, newline="", encoding="utf-8") as f:
        row = list(csv.DictReader(f))[0]
    assert row["NPUDump"] == "'=HYPERLINK(\\x1b)/MatMul"  # a formula to a spreadsheet: quoted
    assert row["OpType"] == "MatMul"


@pytest.mark.parametrize("payload", ESCAPES.values(), ids=ESCAPES.keys())
def test_npu_prof_summary_shows_op_types_and_info_inert(payload, profile, tmp_path, capsys):
    info = layout.read_info(profile)
    info["raw_damage"] = {"message": f"raw data cut short{payload}"}
    layout.write_info(profile, info)
    op_summary = os.path.join(profile, info["exported"]["op_summary"])
    with open(op_summary, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    column = rows[0].index("OP Type")
    for row in rows[1:]:
        row[column] = f"{row[column]}{payload}"
    with open(op_summary, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
    assert npu_prof(["summary", profile]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert_inert(out, payload)
    assert "  INCOMPLETE PROFILE: raw data cut short" in out.splitlines()[1]  # still on its own line
    report = tmp_path / "r.html"
    assert npu_prof(["report", profile, "-o", str(report)]) == 0
    text = report.read_text(encoding="utf-8")
    assert html.escape(inert_text.value(payload)) in text and not RAW_CONTROL.search(text)
