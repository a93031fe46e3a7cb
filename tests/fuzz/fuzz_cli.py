"""The cases of the command-line category of the fuzz test: every command of every tool (read from its argparse
parser), bad arguments, hostile inputs, damaged copies of a real dump tree and a real profile, and the exit-code
scheme each tool documents."""

import dataclasses
import json
import os
import shutil
import stat
from typing import Optional

from fuzz_helpers import (
    ACCEPT,
    ACCEPTED,
    CLEAR,
    DEEP_ARRAY,
    EITHER,
    OTHER,
    REJECT,
    SILENT,
    TRACEBACK,
    b64,
)

from npu_bridge.core.runtime.errors import shortened

# --- command-line tools ------------------------------------------------------------------------------------------

CLI_MODULES = {
    "npu-bridge": "npu_bridge.core.cli.main",
    "npu-run": "npu_bridge.core.launch.cli",
    "npu-dump": "npu_bridge.core.dump.cli",
    "npu-prof": "npu_bridge.core.profiling.cli",
}
EXIT_CODES = {  # what each tool may exit with (module docstrings): 0 done, 1 a finding, 2 bad usage or input
    "npu-bridge": (0, 2),
    "npu-dump": (0, 1, 2),
    "npu-prof": (0, 2),  # 1 is its "unexpected failure"
    "npu-run": (0, 2),  # also the ranks' own code and 127 (cannot start), allowed per case
}
# What each positional argument (tool, command, dest) or string option is: the oracle's knowledge of the tools.
ROLES = {
    ("npu-bridge", "options", "key"): "option_key",
    ("npu-dump", "convert", "sources"): "dump",
    ("npu-dump", "convert", "output"): "out_dir",
    ("npu-dump", "compare", "mine"): "dump",
    ("npu-dump", "compare", "truth"): "golden",
    ("npu-dump", "compare", "my_dump_path"): "dump",
    ("npu-dump", "compare", "golden_dump_path"): "golden",
    ("npu-dump", "compare", "output"): "out_file",
    ("npu-dump", "compare", "html"): "out_file",
    ("npu-dump", "overflow", "dir"): "dump",
    ("npu-dump", "overflow", "output"): "out_file",
    ("npu-dump", "info", "paths"): "dump",
    ("npu-dump", "origin", "paths"): "dump",
    ("npu-prof", "summary", "path"): "profile",
    ("npu-prof", "report", "path"): "profile",
    ("npu-prof", "report", "output"): "out_file",
    ("npu-prof", "export", "path"): "profile",
    ("npu-prof", "export", "fp_point"): "text",
    ("npu-prof", "export", "bp_point"): "text",
    ("npu-run", None, "command"): "command",
    ("npu-run", None, "rank_table"): "rank_table",
    ("npu-run", None, "server_id"): "server_id",
    ("npu-run", None, "job_id"): "text",
    ("npu-run", None, "job_secret"): "secret",
    ("npu-run", None, "make_secret"): "out_file",
}
# Numbers with a documented range (tool, command, dest) -> (low, high); other numbers may take any value.
NUMBER_RANGES = {
    ("npu-run", None, "size"): (1, 32768),
    ("npu-run", None, "port_base"): (1, 65535),
    ("npu-run", None, "stop_timeout"): (0, float("inf")),
}


@dataclasses.dataclass
class CliCommand:
    """One command of a tool as its argparse parser declares it."""

    tool: str
    command: Optional[str]
    positionals: list  # argparse actions
    options: list  # argparse actions with option strings (help and version left out)


def discover_cli():
    """Every tool's commands, read from the parser its main() builds (parse_args is intercepted)."""
    import argparse
    import importlib

    class CapturedError(Exception):
        pass

    def capture(parser, args=None, namespace=None):
        raise CapturedError(parser)

    commands = []
    original = argparse.ArgumentParser.parse_args
    for tool, module in CLI_MODULES.items():
        argparse.ArgumentParser.parse_args = capture
        try:
            importlib.import_module(module).main([])
        except CapturedError as e:
            parser = e.args[0]
        finally:
            argparse.ArgumentParser.parse_args = original
        subparsers = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        parsers = list(subparsers[0].choices.items()) if subparsers else [(None, parser)]
        for command, sub in parsers:
            actions = [a for a in sub._actions if not isinstance(a, (argparse._HelpAction, argparse._VersionAction))]
            commands.append(
                CliCommand(
                    tool,
                    command,
                    [a for a in actions if not a.option_strings],
                    [a for a in actions if a.option_strings],
                )
            )
    return commands


def _copy_file(source, destination):
    """Copies a file of a damaged tree: FIFOs stay FIFOs and large (sparse) files stay sparse."""
    mode = os.stat(source, follow_symlinks=False).st_mode
    if stat.S_ISFIFO(mode):
        os.mkfifo(destination)
        return destination
    size = os.path.getsize(source)
    if size <= 8 * 1024 * 1024:
        return shutil.copy2(source, destination)
    with open(source, "rb") as f, open(destination, "wb") as g:
        g.write(f.read(1 << 20))
        g.truncate(size)
    return destination


def _copy_tree(source, destination):
    shutil.copytree(source, destination, symlinks=True, copy_function=_copy_file)
    return destination


def _files_under(root):
    found = []
    for directory, dirs, names in os.walk(root):
        dirs.sort()
        found += [os.path.join(directory, n) for n in sorted(names) if os.path.isfile(os.path.join(directory, n))]
    return found


def _mutate_file(path, how, rng):
    """Damages one regular file in place."""
    size = os.path.getsize(path)
    if how == "truncate":
        with open(path, "r+b") as f:
            f.truncate(rng.randint(0, max(size - 1, 0)))
    elif how == "flip":
        with open(path, "r+b") as f:
            data = bytearray(f.read())
            for _ in range(rng.randint(1, 16)):
                if data:
                    data[rng.randrange(min(len(data), 64))] ^= rng.randint(1, 255)
            f.seek(0)
            f.write(bytes(data))
    elif how == "random":
        with open(path, "wb") as f:
            f.write(rng.randbytes(max(size, 1)))
    elif how == "append":
        with open(path, "ab") as f:
            f.write(rng.randbytes(1 << 20))
    elif how == "fifo":
        os.remove(path)
        os.mkfifo(path)
    elif how == "directory":
        os.remove(path)
        os.makedirs(os.path.join(path, "inner"))
    elif how == "huge":
        with open(path, "r+b") as f:
            f.truncate(8 * 1024 * 1024)  # sparse; 64 MB of zeros keeps npu-prof export busy for 30 s (reported)
    elif how == "to_dev_zero":
        os.remove(path)
        os.symlink("/dev/zero", path)
    elif how == "empty":
        open(path, "wb").close()


FILE_DAMAGE = ("truncate", "flip", "random", "append", "fifo", "directory", "huge", "to_dev_zero", "empty")


def damaged_dump_trees(seed, root, rng):
    """(description, path) of damaged copies of a real dump tree."""
    trees = []

    def new(name):
        return _copy_tree(seed, os.path.join(root, name))

    for how in FILE_DAMAGE:
        tree = new(f"dump_{how}")
        candidates = [f for f in _files_under(tree) if not f.endswith((".json", ".txt"))]
        target = rng.choice(candidates)
        _mutate_file(target, how, rng)
        trees.append((f"dump tree, {how}: {os.path.relpath(target, tree)}", tree))
    for how in ("random", "fifo", "flip"):
        tree = new(f"dump_side_files_{how}")
        for name in ("dump_status.json", "op_sources.json", "overflow_report.txt"):
            for path in _files_under(tree):
                if os.path.basename(path) == name:
                    _mutate_file(path, how, rng)
        trees.append((f"dump tree, side files {how}", tree))
    tree = new("dump_garbage_names")
    step = os.path.dirname(rng.choice([f for f in _files_under(tree) if "Opdebug" not in f]))
    for name in (
        "MatMul.layer1_MatMul.1.2.1700000000000000",
        "Opdebug.Node_OpDebug.1.2.1700000000000001",
        "x.0.1700000000000000.npy",
        "MatMul.a.1.2.3.output.0.npy",
        "Mul.m.9999999999999999999999999.0.1700000000000002",
        "mapping.csv",
        "statistic.csv",
    ):
        with open(os.path.join(step, name), "wb") as f:
            f.write(rng.randbytes(rng.randint(0, 600)))
    trees.append(("dump tree with garbage files named like artifacts", tree))
    tree = new("dump_odd_dirs")
    model = os.path.dirname(os.path.dirname(rng.choice(_files_under(tree))))
    for name in ("²", "٣", "9" * 30, "-1", "0" * 300):
        os.makedirs(os.path.join(model, name[:255]), exist_ok=True)
        with open(os.path.join(model, name[:255], "Mul.m.1.0.1700000000000003"), "wb") as f:
            f.write(rng.randbytes(100))
    trees.append(("dump tree with odd step and model directories", tree))
    tree = new("dump_loop")
    os.symlink(".", os.path.join(tree, "again"))
    os.symlink("missing-target", os.path.join(tree, "dangling"))
    trees.append(("dump tree with a symlink loop and a dangling link", tree))
    deep = os.path.join(root, "dump_deep", *["d"] * 150)
    os.makedirs(os.path.dirname(deep))
    _copy_tree(seed, deep)
    trees.append(("dump tree 150 directories deep", os.path.join(root, "dump_deep")))
    return trees


def damaged_profiles(seed, root, rng):
    """(description, path) of damaged copies of a real profile (the directory holding PROF_*)."""
    profiles = []
    (prof_name,) = [n for n in os.listdir(seed) if n.startswith("PROF_")]

    def new(name):
        tree = _copy_tree(seed, os.path.join(root, name))
        return tree, os.path.join(tree, prof_name)

    with open(os.path.join(seed, prof_name, "info.json"), encoding="utf-8") as f:
        info = json.load(f)
    for i, key in enumerate(sorted(info)):
        for value in (None, 5, "٣", [], {"a": [1]}, -1, "9" * 30, 1e308, "x" * 100000):
            if rng.random() < 0.35:
                tree, prof = new(f"profile_info_{i}_{len(profiles)}")
                with open(os.path.join(prof, "info.json"), "w", encoding="utf-8") as f:
                    json.dump(dict(info, **{key: value}), f)
                profiles.append((f"profile, info.json {key}={shortened(value, 40)}", tree))
    for how in FILE_DAMAGE:
        for target in ("info.json", os.path.join("device_0", "data", "step_stats.records")):
            tree, prof = new(f"profile_{how}_{len(profiles)}")
            _mutate_file(os.path.join(prof, target), how, rng)
            profiles.append((f"profile, {target} {how}", tree))
    exports = os.path.join("mindstudio_profiler_output")
    for how in ("truncate", "random", "fifo", "empty"):
        tree, prof = new(f"profile_export_{how}")
        for path in _files_under(os.path.join(prof, exports)):
            _mutate_file(path, how, rng)
        profiles.append((f"profile, exports {how}", tree))
    for text in ("[]", DEEP_ARRAY, '{"exported": true}', "{}", '{"rank_id": "0", "exported": "yes"}'):
        tree, prof = new(f"profile_info_text_{len(profiles)}")
        with open(os.path.join(prof, "info.json"), "w", encoding="utf-8") as f:
            f.write(text)
        profiles.append((f"profile, info.json {shortened(text, 40)}", tree))
    tree, prof = new("profile_exports_file")
    shutil.rmtree(os.path.join(prof, exports))
    with open(os.path.join(prof, exports), "w", encoding="utf-8") as f:
        f.write("x")
    profiles.append(("profile whose export directory is a file", tree))
    tree, prof = new("profile_report_dir")
    os.remove(os.path.join(prof, "report.html"))
    os.makedirs(os.path.join(prof, "report.html", "x"))
    profiles.append(("profile whose report.html is a directory", tree))
    tree, prof = new("profile_odd_names")
    os.makedirs(os.path.join(tree, "PROF_²_rank٣"))
    os.makedirs(os.path.join(tree, "PROF_" + "9" * 250))
    with open(os.path.join(tree, "PROF_file"), "w", encoding="utf-8") as f:
        f.write("x")
    profiles.append(("profiles with odd PROF_ names", tree))
    return profiles


def hostile_inputs(files, root, rng):
    """(description, path) of inputs that are not dump trees or profiles: missing, special files, empty and deep
    directories, garbage files, directories of garbage named like artifacts."""
    garbage_dir = os.path.join(root, "garbage_artifacts")
    os.makedirs(os.path.join(garbage_dir, "PROF_20240101000000000_rank0", "device_0", "data"))
    for name in (
        "Conv2D.conv.1.2.1700000000000000",
        "Opdebug.Node_OpDebug.3.4.1700000000000001",
        "y.0.1700000000000000.npy",
        os.path.join("PROF_20240101000000000_rank0", "info.json"),
        os.path.join("PROF_20240101000000000_rank0", "device_0", "data", "step_stats.records"),
    ):
        with open(os.path.join(garbage_dir, name), "wb") as f:
            f.write(rng.randbytes(rng.randint(1, 3000)))
    empty_dir = os.path.join(root, "empty_dir")
    os.makedirs(empty_dir)
    p = files.paths
    return [
        ("missing path", p["missing"]),
        ("empty directory", empty_dir),
        ("directory 300 levels deep with nothing in it", os.path.join(files.root, "deep")),
        ("text file", p["text"]),
        ("binary file", p["binary"]),
        ("empty file", p["empty"]),
        ("FIFO", p["fifo"]),
        ("symlink to a FIFO", p["to_fifo"]),
        ("/dev/zero", p["dev_zero"]),
        ("/dev/null", p["dev_null"]),
        ("symlink loop", p["loop"]),
        ("path past PATH_MAX", p["long_path"]),
        ("name past NAME_MAX", p["long_name"]),
        ("file with a non-UTF-8 name", p["non_utf8_name"]),
        ("empty argument", ""),
        ("directory of garbage named like artifacts", garbage_dir),
    ]


def number_values(action):
    """(text, label) for a numeric option: texts argparse must refuse, and numbers the tool must judge."""
    convert = action.type
    values = []
    for text in ("abc", "", " ", "٣", "１", "1_0", "0x10", "1e3", "nan", "inf", "-inf", "-1", "0", "9" * 30, "1e309"):
        try:
            number = convert(text)
        except Exception:  # what argparse turns into a usage error
            values.append((text, "usage"))
            continue
        values.append((text, number))
    return values


def _number_label(key, text, number):
    if number == "usage":
        return REJECT
    if any(not c.isascii() for c in text) or "_" in text or number != number:
        return REJECT  # int() reads other scripts' digits and "1_0", float() "nan": not numbers on a command line
    low_high = NUMBER_RANGES.get(key)
    if low_high is None:
        return EITHER
    low, high = low_high
    if number != number or not low <= number <= high:
        return REJECT
    if key == ("npu-run", None, "size") and number > 2:
        return None  # a valid number of ranks: not started here (it would start that many processes)
    return ACCEPT


def cli_cases(commands, inputs, trees, files, rank_tables, root):
    """The worker's "cli" cases: {"tool", "argv", "label", "what", "names", "allowed"}.

    ``trees`` holds the valid inputs ("dump", "golden", "profile", "rank_table") and the damaged ones
    ("damaged_dump", "damaged_profile": lists of (description, path)).
    """
    cases = []
    counter = [0]

    def fresh(name):
        counter[0] += 1
        return os.path.join(root, "out", f"{counter[0]}_{name}")

    def valid(role):
        if role == "dump":
            return [trees["dump"]]
        if role == "golden":
            return [trees["golden"]]
        if role == "profile":
            return [_copy_tree(trees["profile"], fresh("profile"))]
        if role == "option_key":
            return ["precision_mode"]
        if role == "command":
            return ["--", "true"]
        return []

    def head_of(command, skip=None):
        """The command and its required options (one rank for npu-run), leaving out ``skip``."""
        argv = [command.command] if command.command else []
        for action in command.options:
            if action is skip:
                continue
            if action.required:
                argv += [action.option_strings[0], fresh(ROLES[(command.tool, command.command, action.dest)])]
            elif (command.tool, action.dest) == ("npu-run", "size"):
                argv += [action.option_strings[0], "1"]
        return argv

    def add(command, argv, label, what, names=(), allowed_extra=()):
        cases.append(
            {
                "tool": command.tool,
                "argv": [b64(a) for a in argv],
                "label": label,
                "what": f"{command.tool} {command.command or ''}: {what}",
                "names": [n for n in names if n],
                "allowed": list(EXIT_CODES[command.tool]) + list(allowed_extra),
            }
        )

    for command in commands:
        roles = {
            a.dest: ROLES[(command.tool, command.command, a.dest)]
            for a in command.positionals + command.options
            if a.nargs != 0 and a.type is None
        }
        head = head_of(command)
        positional = [v for a in command.positionals for v in valid(roles[a.dest])]
        add(command, head + positional, EITHER if command.tool == "npu-dump" else ACCEPT, "valid arguments")
        if any(a.nargs not in ("?", "*") for a in command.positionals):
            add(command, head_of(command)[:1], REJECT, "no arguments")
        add(command, head + ["--no-such-flag"] + positional, REJECT, "an unknown flag", ["--no-such-flag"])
        for index, action in enumerate(command.positionals):
            role = roles[action.dest]
            before = [v for a in command.positionals[:index] for v in valid(roles[a.dest])]
            after = [v for a in command.positionals[index + 1 :] for v in valid(roles[a.dest])]
            if role in ("dump", "golden", "profile"):
                for what, path in inputs:
                    # info summarizes a directory by its file names (garbage inside is not read) and says
                    # /dev/null is empty
                    summarized = path == "/dev/null" or what.startswith("directory of garbage")
                    label = EITHER if summarized and command.command == "info" else REJECT
                    add(command, head + before + [path] + after, label, f"{action.dest} = {what}", [_name_of(path)])
                for what, path in trees["damaged_profile" if role == "profile" else "damaged_dump"]:
                    if role == "profile":
                        path = _copy_tree(path, fresh("damaged"))
                    add(command, head + before + [path] + after, EITHER, f"{action.dest} = {what}")
            elif role == "option_key":
                add(command, head + [""], EITHER, "an empty key (the whole table)")
                for key in ("x" * 100000, "数据", "precision_mode\n", "PRECISION_MODE", "-"):
                    add(command, head + [key], REJECT, f"key {shortened(key, 40)}", [key[:30].strip()])
            elif role == "command":
                add(command, head, REJECT, "no command")
                add(command, head + ["--", files.paths["missing"]], EITHER, "a command that does not exist", (), [127])
                add(command, head + ["--", files.paths["text"]], EITHER, "a command that is a text file", (), [127])
        for action in command.options:
            if action.nargs == 0:
                continue
            key = (command.tool, command.command, action.dest)
            flag = action.option_strings[-1]
            rest = head_of(command, skip=action)
            if action.type is not None:
                for text, number in number_values(action):
                    label = _number_label(key, text, number)
                    if label is not None:
                        add(command, rest + [f"{flag}={text}"] + positional, label, f"{flag} {text!r}", [text.strip()])
                continue
            role = roles[action.dest]
            if role in ("dump", "golden"):
                # msaccucmp's spelling: every input by its flag (-m MINE -g TRUTH), this one hostile
                others = [
                    v
                    for a in command.options
                    if a is not action and a.dest in roles and roles[a.dest] in ("dump", "golden")
                    for v in (a.option_strings[-1], valid(roles[a.dest])[0])
                ]
                for what, path in inputs:
                    add(command, rest + [flag, path] + others, REJECT, f"{flag} {what}", [_name_of(path)])
            elif role in ("out_file", "out_dir"):
                targets = [
                    ("a FIFO", files.paths["fifo"], REJECT),
                    (
                        "an existing file" if role == "out_dir" else "an existing directory",
                        files.paths["text" if role == "out_dir" else "dir"],
                        REJECT,
                    ),
                    ("a path under a file", os.path.join(files.paths["text"], "x"), REJECT),
                    ("a path past PATH_MAX", files.paths["long_path"], REJECT),
                    ("a name past NAME_MAX", files.paths["long_name"], REJECT),
                    ("an empty argument (the default)", "", EITHER),
                ]
                if role == "out_file":
                    targets += [("/dev/full", "/dev/full", REJECT), ("/dev/null", "/dev/null", EITHER)]
                for what, target, label in targets:
                    add(command, rest + [flag, target] + positional, label, f"{flag} {what}", [_name_of(target)])
            elif role == "secret":
                # a hostile file may happen to be a usable secret (a private text file): no verdict but no crash
                for what, path in inputs:
                    add(command, rest + [flag, path] + positional, EITHER, f"{flag} {what}", [_name_of(path)])
            elif role in ("text", "server_id"):
                table = [f"--rank-table={trees['rank_table']}"] if role == "server_id" else []
                base = [a for a in rest if a not in ("-n", "1")] if role == "server_id" else rest
                for text in ("", "x" * 100000, "数据", "a\nb", "-x"):
                    label = REJECT if role == "server_id" else EITHER
                    add(command, base + table + [f"{flag}={text}"] + positional, label, f"{flag} {shortened(text, 40)}")
            elif role == "rank_table":
                base = [a for a in rest if a not in ("-n", "1")]
                for label, path, _ in rank_tables:
                    argv = base + [f"{flag}={path}", "--server-id", "127.0.0.1", "--job-id", "fuzz"] + positional
                    add(
                        command,
                        argv,
                        REJECT if label == REJECT else EITHER,
                        f"{flag} {_name_of(path)}",
                        [_name_of(path)],
                    )
    for label, path, _ in rank_tables:
        if label == REJECT:
            cases.append(
                {
                    "tool": "npu-bridge",
                    "argv": [b64("info")],
                    "env": {"RANK_TABLE_FILE": b64(path)},
                    "label": REJECT,
                    "what": f"npu-bridge info: RANK_TABLE_FILE={_name_of(path)}",
                    "names": ["rank table"],
                    "allowed": list(EXIT_CODES["npu-bridge"]),
                }
            )
    return cases


def _name_of(path):
    """The part of a path an error message surely shows (its last name, shortened)."""
    name = os.path.basename(path.rstrip("/")) or path
    return name[:30]


def classify_cli(case, record):
    """(outcome, reason) of one command-line case."""
    result = record.get("result")
    if result in ("crash", "hang", "not run"):
        return OTHER, f"{result}: {record.get('detail', '')}"
    if result != "exited":
        return OTHER, f"the worker failed: {record.get('type')}: {record.get('message', '')[:400]}"
    output, code = record["output"], record["code"]
    if record.get("escaped"):
        return OTHER, f"an exception escaped main(): {record['escaped'][-800:]}"
    if TRACEBACK in output:
        return OTHER, f"a traceback in the output (exit {code}): {output[output.index(TRACEBACK) :][:800]}"
    if code not in case["allowed"]:
        return OTHER, f"exit code {code} (allowed: {case['allowed']}): {output[-600:]}"
    if case["label"] == REJECT:
        if code == 0:
            return SILENT, f"exit 0 for bad input: {output[-400:]}"
        if code != 2:
            return OTHER, f"exit {code} for bad input (expected 2): {output[-600:]}"
        if not output.strip():
            return OTHER, "exit 2 without a message"
        names = [n for n in case["names"] if n.isprintable() and n.strip()]
        if names and not any(n in output for n in names):
            return OTHER, f"the message does not name {names}: {output[-600:]}"
        return CLEAR, ""
    if case["label"] == ACCEPT and code != 0:
        return OTHER, f"exit {code} for valid input: {output[-600:]}"
    return (CLEAR if code == 2 else ACCEPTED), ""


def tally_cli(cases, records, tally):
    for case, record in zip(cases, records):
        outcome, reason = classify_cli(case, record)
        tally.add(outcome, case["what"], reason)
