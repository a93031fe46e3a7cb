"""The input fuzz test's machinery (tests/fuzz/test_fuzz_inputs.py): a runner that feeds cases to worker processes
(tests/workers/fuzz_worker.py), hostile files and values, and the classification of what happened. The oracles and
cases of each category are in fuzz_options.py, fuzz_environment.py and fuzz_cli.py.

Every case ends in one of:
  clear     the project's error (``NpuBridgeError``) naming the input, holding its value (or its shortening) and
            saying what is allowed, in at most ``MESSAGE_LIMIT`` characters; for a command-line tool, exit code 2
            with a message and no traceback;
  accepted  no error, for a value the oracle calls valid (or cannot judge);
  silent    no error for a value the oracle knows is bad;
  other     anything else: another exception type, an unclear or overlong message, a valid value rejected, a
            traceback, a signal, a hang, a command-line exit code outside the tool's scheme.
The oracles are written independently of the project's checks: they read only what the project documents (the
option table's kind, allowed text and the switches a check waits for; the reference's formats and ranges).
"""

import base64
import dataclasses
import errno
import json
import os
import re
import select
import signal
import stat
import subprocess
import sys
import time
from typing import Dict, List

from helpers.paths import REPO_ROOT

WORKER = os.path.join(REPO_ROOT, "tests", "workers", "fuzz_worker.py")
SEED = int(os.environ.get("NPU_BRIDGE_FUZZ_SEED", "20260517"))
MESSAGE_LIMIT = 1024  # characters of an error message, whatever the input
INT64 = (-(2**63), 2**63 - 1)
CLEAR, ACCEPTED, SILENT, OTHER = "clear", "accepted", "silent", "other"
ACCEPT, REJECT, EITHER = "accept", "reject", "either"  # what the oracle expects
TRACEBACK = "Traceback (most recent call last)"
ASCII_INT = re.compile(r"[+-]?[0-9]+")  # int() also reads other scripts' digits


# --- encoding values for the worker ----------------------------------------------------------------------------


def b64(data):
    """{"b64": ...} of bytes or str (UTF-8, or the bytes a surrogate-escaped file name stands for)."""
    if isinstance(data, str):
        data = os.fsencode(data)
    return {"b64": base64.b64encode(data).decode()}


def encode_attr(field, value):
    """The JSON form of one AttrValue for the worker: [field, value] with bytes as {"b64": ...}."""
    if field == "s":
        return [field, b64(value)]
    if field == "list_s":
        return [field, [b64(v) for v in value]]
    return [field, value]


# --- running cases in worker processes ----------------------------------------------------------------------


def run_batch(scenario, cases, workdir, env=None, case_timeout=30.0, startup_timeout=120.0, max_restarts=40):
    """Runs ``cases`` in worker processes, restarting after a case that kills or hangs one.

    Args:
      scenario: the worker's scenario ("option", "env", "cli", "seed_trees").
      cases: JSON-able dicts.
      workdir: the workers' current directory (they may write there).
      env: environment variables for the workers (on top of this process's).
      case_timeout: seconds one case may take before it counts as a hang.
      startup_timeout: seconds the first case of a worker may take (imports TensorFlow).
      max_restarts: workers started at most; the cases left after that count as not run.
    Returns:
      One record per case, in order: the worker's report, or {"result": "crash" | "hang" | "not run", ...}.
    """
    os.makedirs(workdir, exist_ok=True)
    cases_path = os.path.join(workdir, f"cases-{scenario}-{os.getpid()}-{time.monotonic_ns()}.json")
    with open(cases_path, "w", encoding="utf-8") as f:
        json.dump(cases, f)
    log_path = cases_path[: -len(".json")] + ".log"
    results = [None] * len(cases)
    first, starts = 0, 0
    while first < len(cases):
        if starts == max_restarts:
            for i in range(first, len(cases)):
                results[i] = {"i": i, "result": "not run", "detail": f"{max_restarts} workers crashed or hung"}
            break
        starts += 1
        next_index, hung, code, tail = _run_worker(
            scenario,
            cases_path,
            first,
            workdir,
            env,
            log_path,
            results,
            (
                case_timeout,
                startup_timeout,
            ),
        )
        if next_index >= len(cases):
            if code != 0 and not hung:
                results[-1] = dict(results[-1], exit_problem=f"the worker exited with {_describe_exit(code)}: {tail}")
            break
        if hung or code != 0 or next_index == first:
            results[next_index] = {
                "i": next_index,
                "result": "hang" if hung else "crash",
                "detail": (f"no result within {case_timeout} s" if hung else f"the worker {_describe_exit(code)}")
                + f"; its output ends: {tail}",
            }
            next_index += 1
        first = next_index
    return results


def _run_worker(scenario, cases_path, first, workdir, env, log_path, results, timeouts):
    case_timeout, startup_timeout = timeouts
    read_fd, write_fd = os.pipe()
    child_env = dict(os.environ)
    child_env["PYTHONPATH"] = os.pathsep.join(
        p for p in (REPO_ROOT, os.path.join(REPO_ROOT, "tests"), os.environ.get("PYTHONPATH")) if p
    )
    child_env.update(env or {})
    child_env["FUZZ_RESULT_FD"] = str(write_fd)
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [sys.executable, WORKER, scenario, cases_path, str(first)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            pass_fds=(write_fd,),
            env=child_env,
            cwd=workdir,
            start_new_session=True,
        )
    os.close(write_fd)
    next_index, hung, buffer = first, False, b""
    deadline = time.monotonic() + startup_timeout
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                hung = True
                break
            ready, _, _ = select.select([read_fd], [], [], min(remaining, 5.0))
            if not ready:
                continue
            chunk = os.read(read_fd, 1 << 16)
            if not chunk:
                break
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                record = json.loads(line)
                results[record["i"]] = record
                next_index = record["i"] + 1
                deadline = time.monotonic() + case_timeout
    finally:
        os.close(read_fd)
        if hung:
            _kill_group(process.pid)
        try:
            code = process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            _kill_group(process.pid)
            code = process.wait()
        _kill_group(process.pid)  # what the case started (npu-run's ranks) goes with it
    with open(log_path, "rb") as log:
        data = log.read()
    tail = data[-1500:].decode("utf-8", "replace")
    return next_index, hung, code, tail


def _kill_group(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _describe_exit(code):
    if code is not None and code < 0:
        return f"was killed by {signal.Signals(-code).name}"
    return f"exited with code {code}"


# --- files and paths a user could name ----------------------------------------------------------------------


@dataclasses.dataclass
class HostileFiles:
    """Paths to hostile files made once for all categories.

    Attributes:
      root: the directory holding them.
      paths: {name: path}: missing, dir, deep_dir, text, empty, binary, non_utf8, deep_json_array,
        deep_json_object, huge (past the 16 MB read limit, sparse), fifo, dev_zero, dev_null, loop (a symlink
        loop), to_fifo (a symlink to the FIFO), long_path, long_name, newline_name, non_utf8_name.
      valid: {option key: path of a valid file for that key's format}.
    """

    root: str
    paths: Dict[str, str]
    valid: Dict[str, str]


VALID_FILE_CONTENT = {
    "modify_mixlist": '{"black-list": {"to-remove": ["Exp"]}, "gray-list": {"to-add": ["Tanh"]}}',
    "customize_dtypes": "OpType::MatMul:InputDtype:float16,float16,OutputDtype:float16\n",
    "op_precision_mode": "[ByOpType]\nLayerNorm=high_precision\n",
    "fusion_switch_file": '{"Switch": {"GraphFusion": {"ALL": "off"}, "UBFusion": {}}}',
}


def make_hostile_files(root, rng):
    """Creates the hostile files under ``root`` (see ``HostileFiles``)."""
    os.makedirs(root, exist_ok=True)
    p = {}

    def write(name, data):
        path = os.path.join(root, name)
        with open(path, "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode())
        return path

    p["missing"] = os.path.join(root, "missing", "none.cfg")
    p["dir"] = os.path.join(root, "a_dir")
    os.makedirs(p["dir"])
    deep = os.path.join(root, "deep")
    os.makedirs(os.path.join(deep, *["d"] * 300))
    p["deep_dir"] = os.path.join(deep, *["d"] * 300)
    p["text"] = write("plain.cfg", "x = 1\n")
    p["empty"] = write("empty.cfg", "")
    p["binary"] = write("garbage.bin", rng.randbytes(4096))
    p["non_utf8"] = write("latin1.txt", b"caf\xe9 \xff\xfe\n")
    p["deep_json_array"] = write("deep_array.json", "[" * 10000 + "]" * 10000)
    p["deep_json_object"] = write("deep_object.json", '{"a":' * 10000 + "1" + "}" * 10000)
    p["json_list"] = write("list.json", "[1, 2]")
    p["huge"] = os.path.join(root, "huge.json")
    with open(p["huge"], "wb") as f:
        f.truncate(17 * 1024 * 1024)
    p["fifo"] = os.path.join(root, "pipe.fifo")
    os.mkfifo(p["fifo"])
    p["dev_zero"] = "/dev/zero"
    p["dev_null"] = "/dev/null"
    p["loop"] = os.path.join(root, "loop")
    os.symlink(p["loop"], p["loop"])
    p["to_fifo"] = os.path.join(root, "to_fifo")
    os.symlink(p["fifo"], p["to_fifo"])
    p["long_path"] = os.path.join(root, *["a" * 200] * 25)  # past PATH_MAX
    p["long_name"] = os.path.join(root, "b" * 300)  # past NAME_MAX
    p["newline_name"] = write("new\nline.cfg", "x\n")
    p["non_utf8_name"] = os.fsdecode(os.path.join(os.fsencode(root), b"bad\xff\xfename.cfg"))
    with open(os.fsencode(p["non_utf8_name"]), "wb") as f:
        f.write(b"x\n")
    valid = {key: write(f"valid_{key}", content) for key, content in VALID_FILE_CONTENT.items()}
    return HostileFiles(root=root, paths=p, valid=valid)


_worker_dir = ["/nonexistent-worker-dir"]  # relative paths are judged as the workers see them (run_batch's workdir)


def set_worker_dir(path):
    """Says where the workers run, so that relative paths are judged from there."""
    _worker_dir[0] = path


def worker_path(path):
    """``path`` as a worker sees it (relative paths start in the workers' directory)."""
    return os.path.join(_worker_dir[0], path)


def path_kind(path):
    """What is at ``path`` now, seen from a worker: "file", "dir", "special" (FIFO, device, ...), "missing" or
    "invalid" (NUL, too long, a symlink loop)."""
    if "\x00" in path:
        return "invalid"
    try:
        mode = os.stat(worker_path(path)).st_mode
    except OSError as e:
        if e.errno in (errno.ENOENT, errno.ENOTDIR):
            return "missing"
        return "invalid"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "dir"
    return "special"


# --- hostile values every input gets ---------------------------------------------------------------------------------

DEEP_ARRAY = "[" * 10000 + "]" * 10000
DEEP_OBJECT = '{"a":' * 10000 + "1" + "}" * 10000
NON_ASCII_DIGITS = ("٣", "１", "²", "𝟙", "٣٠٠", "۷", "߁")  # Arabic-Indic, fullwidth, superscript, math, ...


def hostile_texts(files):
    """(core, extra): strings every string-valued input gets (core) or may get (extra), whatever it means."""
    p = files.paths
    core = [
        "",
        "\x00",
        "a\x00b",
        "x" * 100000,
        "数据类型",
        "٣",
        "１",
        "-1",
        "9" * 30,
        "1e20",
        DEEP_ARRAY,
        DEEP_OBJECT,
        p["missing"],
        p["fifo"],
        p["dev_zero"],
        p["dir"],
        p["long_path"],
        p["text"],
        p["binary"],
    ]
    extra = [
        " ",
        *NON_ASCII_DIGITS[2:],
        "0",
        "1",
        "2",
        "99",
        "-" + "9" * 30,
        "9223372036854775808",
        "0x10",
        "1_000",
        " 1 ",
        "+1",
        "1.5",
        "nan",
        "inf",
        "true",
        "TRUE",
        "false",
        "yes",
        "{}",
        "[]",
        "null",
        '{"output": 5}',
        "%s%s%n",
        "{0}",
        "a\nb",
        "\t",
        "\u202e",
        "../../etc/passwd",
        "~",
        "$HOME",
    ]
    extra += [path for name, path in sorted(p.items()) if path not in core and name != "non_utf8_name"]
    return core, extra


HOSTILE_BYTES = (b"\xff\xfe", b"\xc3\x28", b"\xed\xa0\x80", b"abc\xff")
CORE_INTS = (0, 1, -1, INT64[1], INT64[0])
EXTRA_INTS = (2, 3, 5, 7, 8, 64, 65, 99, 2**31, -(2**31) - 1)
OTHER_FIELDS = (
    ("f", "1.5"),
    ("list_i", [1, 2]),
    ("none", None),
    ("f", "nan"),
    ("list_s", [b"a"]),
    ("type", 1),
    ("shape", [2, 3]),
    ("func", "f"),
    ("placeholder", "p"),
    ("tensor", 1.0),
)
CORE_OTHER = 3  # the first OTHER_FIELDS every option gets
EXTRA_SHARE = 0.2  # of the extra values, the share an option gets (seeded)
_RANDOM_ALPHABET = (
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.,:;|/\\ {}[]\"'=+*?%$#@!~`<>()"
    "\x00\x01\x1b\t\n\r\x7f\u00e9\u0663\uff11\u202e\u4e2d\U0001d7d9\ufeff"
)


def random_text(rng, max_length=60):
    """A random string of printable, control and non-ASCII characters."""
    return "".join(rng.choice(_RANDOM_ALPHABET) for _ in range(rng.randint(1, max_length)))


def digit_variants(text):
    """``text`` with its ASCII digits replaced by look-alikes from other scripts."""
    variants = []
    for zero in ("٠", "０", "۰"):
        variant = "".join(chr(ord(zero) + int(c)) if c.isascii() and c.isdigit() else c for c in text)
        if variant != text:
            variants.append(variant)
    return variants


def mutations(text):
    """Near misses of a valid string value."""
    if not text:
        return ["\x00", " "]
    return [
        text.upper(),
        text.lower(),
        " " + text,
        text + " ",
        text + "\x00",
        text + "\n",
        text + text,
        text[:-1],
        text + "x",
        *digit_variants(text),
    ]


# --- classifying -------------------------------------------------------------------------------------------------

# Words with which a message says what is allowed (or what is wrong with a file: "is not valid JSON").
_ALLOWED_WORDS = re.compile(
    r"Allowed: \S|must|should|expected|allowed|needs?\b|requires?\b|one of|\bset \w+ to\b|[0-9]+ ?\.\. ?[0-9]+|"
    r"not valid|not a\b|not UTF-8|has no\b|larger than|at most|at least|no such file|does not exist|too (long|deep)|"
    r"not supported|is empty|Too many levels|has neither|, but \w+|\baccepts\b",
    re.I,
)


def message_problems(message, length, names, shown):
    """What is wrong with an error message: missing input name or value, no allowed values, too long."""
    problems = []
    if length > MESSAGE_LIMIT:
        problems.append(f"the message has {length} characters (limit {MESSAGE_LIMIT})")
    if names and not any(n in message for n in names):
        problems.append(f"the message does not name {' or '.join(names)}")
    if shown and not any(s in message for s in shown):
        problems.append(f"the message does not show the value (one of {shown!r})")
    if not _ALLOWED_WORDS.search(message):
        problems.append("the message does not say what is allowed")
    return problems


def classify_exception(record, label, names, shown, key=None, tolerated=None):
    """(outcome, reason) of a worker record for a case the oracle labelled ``label``."""
    result = record.get("result")
    if result in ("crash", "hang", "not run"):
        return OTHER, f"{result}: {record.get('detail', '')}"
    if record.get("exit_problem"):
        return OTHER, record["exit_problem"]
    if result == "ok":
        return (SILENT, "a bad value was accepted") if label == REJECT else (ACCEPTED, "")
    if tolerated is not None and tolerated(record):
        return (SILENT, "a bad value was accepted") if label == REJECT else (ACCEPTED, "tolerated")
    if not record.get("project"):
        return OTHER, f"{record['type']}: {record['message'][:600]}"
    problems = message_problems(record["message"], record["length"], names, shown)
    if key is not None and record.get("key") not in (None, key):
        problems.append(f"the error blames option {record.get('key')!r}")
    if problems:
        return OTHER, "; ".join(problems) + f": {record['message'][:600]}"
    if label == ACCEPT:
        return OTHER, f"a valid value was rejected: {record['message'][:600]}"
    return CLEAR, ""


@dataclasses.dataclass
class Tally:
    """The outcome counts of one category and its failures."""

    name: str
    counts: Dict[str, int] = dataclasses.field(default_factory=lambda: {CLEAR: 0, ACCEPTED: 0, SILENT: 0, OTHER: 0})
    failures: List[str] = dataclasses.field(default_factory=list)
    seconds: float = 0.0

    def add(self, outcome, description, reason):
        self.counts[outcome] += 1
        if outcome in (SILENT, OTHER):
            self.failures.append(f"[{outcome}] {description}: {reason}")

    @property
    def tried(self):
        return sum(self.counts.values())

    def line(self):
        c = self.counts
        return (
            f"{self.name}: tried {self.tried} / clear {c[CLEAR]} / accepted {c[ACCEPTED]} / silent {c[SILENT]} / "
            f"other {c[OTHER]} ({self.seconds:.0f} s)"
        )


def shard(cases, parts):
    """Splits ``cases`` into ``parts`` lists of about equal size, keeping their order."""
    size = -(-len(cases) // parts)
    return [cases[i : i + size] for i in range(0, len(cases), size)]
