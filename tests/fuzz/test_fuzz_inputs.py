"""Every input a user or a file can give either works or fails early with the project's error: a fuzz test.

Seeded (``NPU_BRIDGE_FUZZ_SEED``, printed), bounded in time, run in worker processes (tests/workers/fuzz_worker.py),
it feeds generated bad values to

  options       every key of the option table, as a script gives it (a ConfigProto, a session, an op run): wrong
                AttrValue kinds, empty, huge and beyond-int64 numbers, other scripts' digits, NUL bytes, 100,000
                characters, JSON nested 10,000 deep, missing files, FIFOs, /dev/zero, directories, near misses of
                valid values;
  environment   every environment variable the project reads (found in the source; the test fails for one it
                does not know), through the code path that reads it (values read at import that may be
                accepted share fresh interpreters, one value per variable, and a group that does not pass is
                tried case by case);
  rank tables   RANK_TABLE_FILE with malformed JSON, wrong types, bad device and rank ids, huge tables, special
                files;
  command line  every command of npu-bridge, npu-run, npu-dump and npu-prof (found in their argparse parsers)
                with bad arguments, missing and special inputs, garbage files named like artifacts, and damaged
                copies of a real dump tree and a real profile;
and fails on any case that ends in a crash, a hang, a traceback, another exception type, an unclear or overlong
message, or a bad value accepted (the oracles: fuzz_options.py, fuzz_environment.py, fuzz_cli.py; the runner and
the classification: fuzz_helpers.py), except the KNOWN_FINDINGS reported to other owners. The counts (tried /
clear / accepted / silent / other per category) are printed (``pytest -s`` or ``-rP``) and written to
``fuzz_summary.json`` in the test's temporary directory, or to ``$NPU_BRIDGE_FUZZ_SUMMARY``.
"""

import concurrent.futures
import json
import os
import random
import re
import subprocess
import sys
import time

import fuzz_cli as fc
import fuzz_environment as fe
import fuzz_helpers as fh
import fuzz_options as fo
import pytest
from helpers.paths import REPO_ROOT

from npu_bridge.core.options import OPTIONS

WORKERS = 2  # the machine the suite runs on has two cores

# Findings reported to the owners of code being reworked elsewhere (dump writer, profiling), by category: a regular
# expression of the failure lines they explain, and why. They are printed but do not fail the test; an entry that no
# longer matches anything fails it, so a fix removes its entry. Delete an entry to see its cases fail again.
KNOWN_FINDINGS = {}
SHOWN_FAILURES = 40
_TIMEOUTS = {"option": 30.0, "env": 30.0, "cli": 20.0, "seed_trees": 120.0}  # seconds one case may take
_WORKER_ENV = {"HCCL_CONNECT_TIMEOUT": "1"}  # a valid multi-rank world waits one second for its missing peers


def _batches(pool, scenario, cases, workdir, parts):
    return [
        (shard, pool.submit(fh.run_batch, scenario, shard, workdir, _WORKER_ENV, _TIMEOUTS[scenario]))
        for shard in fh.shard(cases, parts)
    ]


def _collect(batches):
    cases, records = [], []
    for shard, future in batches:
        cases += shard
        records += future.result()
    return cases, records


def _entry_points(files):
    """The installed commands as a shell runs them (``python -m``, what the console scripts call): bad usage
    exits 2 with a message and no traceback."""
    runs = [
        ("npu_bridge.core.cli.main", ["options", "no_such_option"]),
        ("npu_bridge.core.dump.cli", ["info", files.paths["missing"]]),
        ("npu_bridge.core.profiling.cli", ["summary", files.paths["fifo"]]),
        ("npu_bridge.core.launch.cli", ["-n", "0", "--", "true"]),
    ]
    results = []
    for module, args in runs:
        started = time.monotonic()
        try:
            done = subprocess.run(
                [sys.executable, "-m", module, *args],
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
                cwd=REPO_ROOT,
                stdin=subprocess.DEVNULL,
            )
            record = {"result": "exited", "code": done.returncode, "output": done.stdout + done.stderr}
        except subprocess.TimeoutExpired:
            record = {"result": "hang", "detail": "no exit within 120 s"}
        if record.get("code", 0) < 0:
            record = {"result": "crash", "detail": f"killed by signal {-record['code']}"}
        record.update(escaped=None, seconds=time.monotonic() - started)
        results.append(
            (
                {"what": f"python -m {module} {' '.join(args)}", "label": fh.REJECT, "names": [], "allowed": [0, 1, 2]},
                record,
            )
        )
    return results


def _run_everything(root):
    """Runs every category; returns {category: Tally} and the summary dict."""
    rng = random.Random(fh.SEED)
    started = time.monotonic()
    # Each category its own hostile files: a case of one may create what another expects to be missing.
    files = {name: fh.make_hostile_files(os.path.join(root, f"hostile_{name}"), rng) for name in ("o", "e", "t", "c")}
    workdir = os.path.join(root, "work")
    os.makedirs(workdir)
    option_cases = fo.option_cases(files["o"], rng, workdir)
    env_cases, import_groups = fe.group_import_cases(fe.env_cases(files["e"], rng, workdir))
    tables = fe.rank_table_inputs(files["t"], rng, os.path.join(root, "tables"))
    table_cases = fe.rank_table_cases(tables)
    slowest = {}
    tallies = {name: fh.Tally(name) for name in ("options", "environment", "rank tables", "command line")}
    with concurrent.futures.ThreadPoolExecutor(WORKERS) as pool:
        seed = pool.submit(fh.run_batch, "seed_trees", [{"root": os.path.join(root, "seed")}], workdir, {}, 120.0)
        batches = {
            "options": _batches(pool, "option", option_cases, workdir, 2),
            "environment": _batches(pool, "env", env_cases, workdir, 1),
            "rank tables": _batches(pool, "env", table_cases, workdir, 1),
        }
        grouped = _batches(pool, "env", [group for group, _ in import_groups], workdir, 1)
        entry_points = pool.submit(_entry_points, files["c"])
        (seeded,) = seed.result()
        assert seeded.get("result") == "ok", f"writing the dump tree and profile to damage failed: {seeded}"
        trees = {
            "dump": seeded["dump"],
            "golden": seeded["golden"],
            "profile": seeded["profile"],
            "rank_table": tables[0][1],
            "damaged_dump": fc.damaged_dump_trees(seeded["dump"], os.path.join(root, "damaged"), rng),
            "damaged_profile": fc.damaged_profiles(seeded["profile"], os.path.join(root, "damaged"), rng),
        }
        inputs = fc.hostile_inputs(files["c"], os.path.join(root, "inputs"), rng)
        some_tables = rng.sample(tables, min(30, len(tables)))
        cli_cases = fc.cli_cases(fc.discover_cli(), inputs, trees, files["c"], some_tables, os.path.join(root, "cli"))
        batches["command line"] = _batches(pool, "cli", cli_cases, workdir, 2)
        tally_functions = {
            "options": fo.tally_options,
            "environment": fe.tally_env,
            "rank tables": fe.tally_rank_tables,
            "command line": fc.tally_cli,
        }
        for name, category_batches in batches.items():
            cases, records = _collect(category_batches)
            if name == "environment":
                more_cases, more_records = fe.expand_import_groups(
                    import_groups,
                    _collect(grouped)[1],
                    lambda members: _collect(_batches(pool, "env", members, workdir, 1))[1],
                )
                cases, records = cases + more_cases, records + more_records
            tally_functions[name](cases, records, tallies[name])
            tallies[name].seconds = sum(r.get("seconds", 0.0) for r in records)
            slowest[name] = max(r.get("seconds", 0.0) for r in records)
        for case, record in entry_points.result():
            outcome, reason = fc.classify_cli(case, record)
            tallies["command line"].add(outcome, case["what"], reason)
    summary = {
        "seed": fh.SEED,
        "seconds": round(time.monotonic() - started, 1),
        "categories": {name: dict(t.counts, tried=t.tried) for name, t in tallies.items()},
        "slowest_case_seconds": slowest,
    }
    return tallies, summary


@pytest.fixture(scope="module")
def fuzz_results(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("fuzz"))
    tallies, summary = _run_everything(root)
    path = os.environ.get("NPU_BRIDGE_FUZZ_SUMMARY") or os.path.join(root, "fuzz_summary.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(dict(summary, failures={n: t.failures for n, t in tallies.items()}), f, indent=1)
    print(f"\nfuzz seed {fh.SEED}, {summary['seconds']} s (NPU_BRIDGE_FUZZ_SEED to change it); summary: {path}")
    for tally in tallies.values():
        print(tally.line())
    print(f"slowest case per category (s): {summary['slowest_case_seconds']}")
    total = {k: sum(c[k] for c in summary["categories"].values()) for k in ("tried", "clear", "accepted", "silent")}
    other = sum(c["other"] for c in summary["categories"].values())
    print(
        f"all: tried {total['tried']} / clear {total['clear']} / accepted {total['accepted']} / "
        f"silent {total['silent']} / other {other}"
    )
    return tallies


def _assert_no_failures(tally):
    """Fails for every failure no KNOWN_FINDINGS entry explains, and for entries that explain nothing."""
    known = KNOWN_FINDINGS.get(tally.name, {})
    explained = {pattern: [f for f in tally.failures if re.search(pattern, f)] for pattern in known}
    new = [f for f in tally.failures if not any(re.search(pattern, f) for pattern in known)]
    for pattern, failures in explained.items():
        if failures:
            print(f"known ({len(failures)} cases): {known[pattern]}\n  e.g. {failures[0][:300]}")
    stale = [pattern for pattern, failures in explained.items() if not failures]
    assert not stale, f"KNOWN_FINDINGS entries that match nothing any more (fixed? remove them): {stale}"
    shown = "\n".join(new[:SHOWN_FAILURES])
    more = len(new) - SHOWN_FAILURES
    assert not new, f"{tally.line()}\n{shown}" + (f"\n... and {more} more" if more > 0 else "")


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_every_option_key_fails_clearly_on_bad_values(fuzz_results):
    tally = fuzz_results["options"]
    keys_tried = tally.tried // len(OPTIONS)
    assert keys_tried >= 30, tally.line()  # every key gets the core hostile set
    _assert_no_failures(tally)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_every_environment_variable_fails_clearly_on_bad_values(fuzz_results):
    _assert_no_failures(fuzz_results["environment"])


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_malformed_rank_tables_fail_clearly(fuzz_results):
    _assert_no_failures(fuzz_results["rank tables"])


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_every_command_line_tool_exits_cleanly_on_bad_input(fuzz_results):
    _assert_no_failures(fuzz_results["command line"])


# --- the fuzz test's own coverage: fast, no processes ----------------------------------------------------------


def test_the_oracle_knows_every_option_key(tmp_path):
    files = fh.make_hostile_files(str(tmp_path / "hostile"), random.Random(fh.SEED))
    domains = {name: fo.domain_of(spec, files) for name, spec in OPTIONS.items()}  # raises for an unknown kind
    kinds = {type(d).__name__ for d in domains.values()}
    assert kinds == {"BoolDomain", "IntDomain", "TextDomain", "SetDomain", "FormatDomain", "PathDomain"}
    assert set(fo.FORMATS) <= set(OPTIONS)


def test_every_environment_variable_the_project_reads_is_fuzzed():
    discovered = fe.discovered_environment_variables()
    assert len(discovered) >= 25
    assert discovered - set(fe.ENV_SPECS) == set(), "describe the new variables in fuzz_helpers.ENV_SPECS"
    assert set(fe.ENV_SPECS) - discovered == set(), "ENV_SPECS names variables the project no longer reads"


def test_every_command_line_argument_has_a_role():
    commands = fc.discover_cli()
    assert {c.tool for c in commands} == set(fc.CLI_MODULES)
    assert len(commands) >= 9  # npu-bridge info/options, npu-dump x4, npu-prof x3, npu-run
    unknown = [
        (c.tool, c.command, a.dest)
        for c in commands
        for a in c.positionals + c.options
        if a.nargs != 0 and a.type is None and (c.tool, c.command, a.dest) not in fc.ROLES
    ]
    assert unknown == [], "say in fuzz_helpers.ROLES what these arguments are"


def test_the_oracle_is_not_the_project_checker():
    # Values the project once accepted silently; the oracle rejects them by itself.
    spec = OPTIONS["op_debug_level"]
    domain = fo.IntDomain(low=0, high=4)
    assert fo.judge_option(spec, domain, "s", "٣".encode()) == fh.REJECT
    assert fo.judge_option(spec, domain, "s", b"3") == fh.ACCEPT
    assert fo.judge_option(spec, domain, "f", "1.5") == fh.REJECT
    assert fo.profiling_options_verdict('{"storage_limit": "٣٠٠MB"}') == fh.REJECT
    assert fo.profiling_options_verdict('{"output": "a\\u0000b"}') == fh.REJECT


def test_values_an_import_may_accept_share_interpreters_and_a_group_that_does_not_pass_is_tried_case_by_case():
    def case(name, value, label=fh.ACCEPT, driver="import"):
        return {"env": {name: fh.b64(value)}, "driver": driver, "label": label, "name": name, "names": [name]}

    cases = [
        case("A", "1"),
        case("A", "2"),
        case("B", "x", label=fh.EITHER),
        case("B", "y", label=fh.REJECT),
        case("C", "z", driver="session"),
    ]
    others, groups = fe.group_import_cases(cases)
    assert others == [cases[3], cases[4]]
    assert [[m["env"] for m in members] for _, members in groups] == [
        [cases[0]["env"], cases[2]["env"]],
        [cases[1]["env"]],
    ]
    assert groups[0][0]["env"] == {"A": fh.b64("1"), "B": fh.b64("x")} and groups[0][0]["driver"] == "import"
    tried = []

    def one_by_one(members):
        tried.extend(members)
        return [{"result": "error", "member": m["name"]} for m in members]

    ok, failed = {"result": "ok", "seconds": 4.0}, {"result": "error"}
    expanded_cases, records = fe.expand_import_groups(groups, [failed, ok], one_by_one)
    assert tried == groups[0][1]
    assert expanded_cases == [cases[0], cases[2], cases[1]]
    assert records == [{"result": "error", "member": "A"}, {"result": "error", "member": "B"}, ok]
