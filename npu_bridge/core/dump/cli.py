"""``npu-dump``: read dumps written here or by Ascend's runtime.

  npu-dump convert SOURCE... -o DIR        dump files -> .npy ({file}.{input|output}.{index}.npy)
  npu-dump compare MINE TRUTH [-o CSV]     two dump trees tensor by tensor: first the differences of the two
                                           runs' configuration (run_config.json), then the ops that introduce
                                           error (output error >= 10 x input error and >= 1e-4, relative
                                           Euclidean distance) and the first diverging op; --isolate reruns
                                           those ops on the ground truth's inputs in float64 on the CPU
                                           (msaccucmp's spelling also works: compare -m MINE -g TRUTH);
                                           two multi-rank dumps ({dump_path}/{time}/{device_id}) are compared
                                           rank by rank (matching device ids): one line per rank, the rank that
                                           diverges first and most; one CSV per rank (-o r.csv: r_device0.csv ...);
                                           --html PAGE also writes the comparison as a page (one per rank)
  npu-dump overflow DIR [-n N] [-o FILE]   the overflow report of a dump tree
  npu-dump origin PATH...                  where the first inf/NaN of a (multi-rank) job came from: every rank's
                                           tree ({dump_path}/{time}/{device_id}) read, the value followed back
                                           through the collectives to the rank, step and op that made it
  npu-dump info PATH...                    what dump files, Opdebug records or .npy files hold, and which
                                           steps are incomplete (files the disk refused, a killed writer)

Exit codes (the same in every npu_bridge tool): 0 done and nothing found, 1 a finding (an op diverges, an
overflow is recorded, a dump is incomplete), 2 bad usage or an input that is missing or damaged (the message names it).
"""

import argparse
import os
import stat
import sys
import time

from npu_bridge.core.dump import (
    compare_html,
    dump_compare,
    dump_convert,
    dump_file,
    dump_status,
    dump_tree,
    isolate,
    overflow_records,
    rank_compare,
    rank_origin,
    rank_trees,
    run_config,
    tensor_stats,
)
from npu_bridge.core.runtime import arg_checks, atomic_write, bounded_files, inert_text, version
from npu_bridge.core.runtime.errors import DumpFormatError, DumpTreeError, shortened, shortened_text

EXIT_OK = 0
EXIT_FINDING = 1  # an op diverges, an overflow is recorded, a dump is incomplete
EXIT_BAD_INPUT = 2  # also argparse's code for bad usage

_PROGRESS_SECONDS = 1.0


class _Progress:
    """Prints "verb done/total" to stderr at most once a second, for long work."""

    def __init__(self, verb):
        self.verb = verb
        self.last = time.monotonic()

    def __call__(self, done, total=None):
        now = time.monotonic()
        if now - self.last >= _PROGRESS_SECONDS or (total is not None and done == total and now - self.last > 0.2):
            self.last = now
            inert_text.echo(f"npu-dump: {self.verb} {done}" + (f"/{total}" if total else ""), sys.stderr, True)


def _convert(args):
    result = dump_convert.convert(args.sources, args.output, progress=_Progress("converted"))
    inert_text.echo(f"wrote {len(result.written)} files to {inert_text.value(args.output)}")
    for skipped in result.skipped:
        inert_text.echo(f"skipped (no numeric values): {inert_text.value(skipped)}")
    for path, message in result.failures:
        inert_text.echo(f"npu-dump: cannot convert {inert_text.value(path)}: {inert_text.value(message)}", sys.stderr)
    return EXIT_BAD_INPUT if result.failures else EXIT_OK


def _compare(args):
    mine, truth = _compare_inputs(args)
    _require_input(mine, "my dump")
    _require_input(truth, "the ground truth")
    output = args.output or dump_compare.default_csv_name()
    atomic_write.check_output(output, "result CSV")  # before the work, not after it
    ranks = _job_ranks(mine, truth)
    if ranks is not None:
        return _compare_ranks(args, mine, truth, ranks, output)
    if args.html is not None:
        atomic_write.check_output(args.html, "HTML report")
    for tree in (mine, truth):
        _warn_if_incomplete(tree)
    config = run_config.check(mine, truth)  # listed before the tensors are compared
    for line in config.section():
        inert_text.echo(line)
    comparison = dump_compare.compare(
        mine, truth, step=args.step, cosine_threshold=args.cosine, progress=_Progress("compared"), config=config
    )
    comparison.write_csv(output)
    inert_text.echo(comparison.summary(top=args.top))
    isolated = isolate.rerun(comparison) if args.isolate else None
    if isolated is not None:
        for line in isolate.render(isolated):
            inert_text.echo(line)
    inert_text.echo(f"result: {inert_text.value(output)}")
    if args.html is not None:
        compare_html.write_report(comparison, args.html, isolated)
        inert_text.echo(f"report: {inert_text.value(args.html)}")
    return EXIT_FINDING if comparison.first_divergence is not None else EXIT_OK


def _job_ranks(mine, truth):
    """(my rank trees, the ground truth's) when both are dumps of jobs and one has several ranks, else None."""
    if not (os.path.isdir(mine) and os.path.isdir(truth)):
        return None
    try:
        found = rank_trees.find([mine]), rank_trees.find([truth])
    except DumpTreeError:
        return None  # not rank trees (golden .npy, a step directory): compared as one tree
    return found if max(len(found[0]), len(found[1])) > 1 else None


def _compare_ranks(args, mine, truth, ranks, output):
    for tree in ranks[0] + ranks[1]:
        _warn_if_incomplete(tree.root)
    for device in sorted({t.device_id for t in ranks[0]} & {t.device_id for t in ranks[1]}):
        atomic_write.check_output(rank_compare.device_path(output, device), "result CSV")
        if args.html is not None:
            atomic_write.check_output(rank_compare.device_path(args.html, device, ".html"), "HTML report")
    pairs = rank_compare.compare(
        *ranks,
        progress=lambda device: _Progress(f"device {device}: compared"),
        step=args.step,
        cosine_threshold=args.cosine,
    )
    compared = [pair for pair in pairs if pair.comparison is not None]
    for pair in compared:
        pair.comparison.write_csv(rank_compare.device_path(output, pair.device_id))
    for line in rank_compare.render(pairs, mine, truth):
        inert_text.echo(line)
    isolated = {}
    for pair in compared if args.isolate else ():
        inert_text.echo(f"device {pair.device_id}:")
        isolated[pair.device_id] = isolate.rerun(pair.comparison)
        for line in isolate.render(isolated[pair.device_id]):
            inert_text.echo(line)
    written = [rank_compare.device_path(output, pair.device_id) for pair in compared]
    inert_text.echo(f"result: {', '.join(inert_text.value(path) for path in written)}")
    if args.html is not None:
        pages = [rank_compare.device_path(args.html, pair.device_id, ".html") for pair in compared]
        for pair, page in zip(compared, pages):
            compare_html.write_report(pair.comparison, page, isolated.get(pair.device_id))
        inert_text.echo(f"report: {', '.join(inert_text.value(page) for page in pages)}")
    return EXIT_FINDING if rank_compare.first_diverging(pairs) is not None else EXIT_OK


def _overflow(args):
    if args.output:
        atomic_write.check_output(args.output, "overflow report")
    dump_tree.require_artifacts(args.dir, dump_tree.scan(args.dir))  # an empty tree is not "no overflow"
    _warn_if_incomplete(args.dir)
    entries = overflow_records.find(args.dir)
    text = overflow_records.render(entries, args.dir, detailed=args.number)
    if args.output:
        atomic_write.write_output(args.output, text, "overflow report")
        inert_text.echo(f"wrote {inert_text.value(args.output)}")
    sys.stdout.write(inert_text.lines(text))
    devices = {rank_trees.device_directory(entry.opdebug_path) for entry in entries if entry.model}
    if len(devices) > 1:
        inert_text.echo(
            f"npu-dump: the overflows of {len(devices)} ranks are listed together; `npu-dump origin "
            f"{inert_text.value(args.dir)}` follows them through the collectives to the rank and op that made them",
            sys.stderr,
        )
    return EXIT_FINDING if entries else EXIT_OK


def _origin(args):
    ranks = rank_trees.find(args.paths)
    for tree in ranks:
        _warn_if_incomplete(tree.root)
    found = rank_origin.trace(ranks)
    for line in rank_origin.render(found):
        inert_text.echo(line)
    return EXIT_FINDING if found.origins else EXIT_OK


def _info(args):
    status = 0
    for path in args.paths:
        if os.path.isdir(path):
            if not _describe_tree(path):
                status = max(status, EXIT_FINDING)
            continue
        try:
            _describe_file(dump_file.load(path))
        except (DumpFormatError, FileNotFoundError) as e:
            inert_text.echo(f"npu-dump: {inert_text.value(e)}", sys.stderr)
            status = EXIT_BAD_INPUT
    return status


def _describe_file(loaded):
    kind = "npy tensor" if loaded.version is None else f"Ascend dump file, version {loaded.version}"
    if loaded.overflow is not None:
        kind = f"Opdebug overflow record, version {loaded.version}"
    inert_text.echo(
        f"{inert_text.value(loaded.path)}\n  {kind}; op {inert_text.value(loaded.op_name or '?')}"
        + (f"; type {inert_text.value(loaded.name.op_type)}" if loaded.name and loaded.name.op_type else "")
        + (
            f"; dump time {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(loaded.dump_time / 1000))}"
            if loaded.dump_time
            else ""
        )
    )
    if loaded.overflow is not None:
        for section, fields in loaded.overflow.items():
            inert_text.echo(f"  {section}: " + ", ".join(f"{k}={v}" for k, v in fields.items()))
        return
    for tensor in loaded.tensors:
        inert_text.echo(
            f"  {tensor.io} {tensor.index}: {tensor.dtype_name} {tensor.format_name} {list(tensor.shape)} "
            f"{tensor.nbytes} bytes{_statistics(tensor)}"
        )


def _statistics(tensor):
    """ " (as [shape])  min .. max .. mean .. nan .. inf ..", read block by block; "" for non-numeric tensors."""
    found = tensor_stats.summarize(tensor)
    if found is None or not found.size:
        return ""
    logical = tensor.logical_shape()
    text = f" (as {list(logical)})" if logical != tuple(tensor.shape) else ""
    if found.moments.count:
        text += f"  min {found.minimum:.6g} max {found.maximum:.6g} mean {found.mean:.6g}"
    return text + f" nan {found.nan} inf {found.inf}"


def _compare_inputs(args):
    """(mine, truth) from the positional arguments or msaccucmp's -m / -g; each given exactly once."""
    chosen = []
    for what, positional, flag, spelling in (
        ("my dump", args.mine, args.my_dump_path, "MINE or -m/--my_dump_path"),
        ("the ground truth", args.truth, args.golden_dump_path, "TRUTH or -g/--golden_dump_path"),
    ):
        if (positional is None) == (flag is None):
            problem = "is missing" if positional is None else "is given twice"
            args.parser.error(f"compare: {what} {problem}: give {spelling}")
        chosen.append(positional if flag is None else flag)
    return chosen


def _require_input(path, what):
    """Checks a tree ``compare`` is given: a directory, or a dump, Opdebug or .npy file (by its name).

    Raises:
      DumpTreeError: ``path`` does not exist or cannot be looked at (named as given).
      DumpFormatError: ``path`` is a FIFO, a device, or a file whose name is not a dump artifact's.
    """
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise DumpTreeError(f"no such dump directory or file: {shortened_text(path)} ({what})") from None
    except (OSError, ValueError) as e:  # ValueError: a NUL character
        reason = getattr(e, "strerror", None) or str(e)
        raise DumpTreeError(f"{what} {shortened(path)} cannot be read: {reason}") from None
    if stat.S_ISDIR(mode):
        return
    if not stat.S_ISREG(mode):
        raise DumpFormatError(
            f"{what} {shortened(path)} is {bounded_files.kind_of(mode)}; give a dump tree (a directory) or a dump file"
        )
    if not dump_tree.scan(path):
        raise DumpFormatError(
            f"{what} {shortened(path)} is not a dump file, Opdebug record or .npy file (its name is none of "
            "theirs); give a dump tree (a directory) or one of its files"
        )


def _describe_tree(path):
    """Prints what a tree holds, step by step, flagging incomplete steps. Returns False when some are."""
    artifacts = dump_tree.require_artifacts(path, dump_tree.scan(path))
    problems = {os.path.abspath(p.step_dir): p.text for p in dump_status.problems(path)}
    incomplete = len(problems)
    groups, directories = {}, {}
    for artifact in artifacts:
        key = (artifact.model or "-", artifact.step)
        groups.setdefault(key, {}).setdefault(artifact.name.kind, 0)
        groups[key][artifact.name.kind] += 1
        if artifact.step is not None:
            directories[key] = os.path.abspath(os.path.dirname(artifact.path))
    inert_text.echo(f"{inert_text.value(path)}: {len(artifacts)} artifacts")
    for (model, step), kinds in sorted(groups.items(), key=lambda item: (item[0][0], item[0][1] or -1)):
        where = f"model {inert_text.value(model)}" + ("" if step is None else f", step {step}")
        problem = problems.pop(directories.get((model, step)), None)
        inert_text.echo(
            f"  {where}: "
            + ", ".join(f"{count} {kind}" for kind, count in sorted(kinds.items()))
            + (f"  INCOMPLETE: {inert_text.value(problem)}" if problem else "")
        )
    for directory, problem in sorted(problems.items()):
        relative = inert_text.value(os.path.relpath(directory, path))
        inert_text.echo(f"  {relative}: INCOMPLETE: {inert_text.value(problem)}")
    if incomplete:
        inert_text.echo(f"{inert_text.value(path)}: {incomplete} incomplete steps: their data is partial", sys.stderr)
    return not incomplete


def _warn_if_incomplete(tree):
    problems = dump_status.problems(tree)
    if problems:
        shown, first = inert_text.value(tree), problems[0]
        inert_text.echo(
            f"npu-dump: warning: {shown} is incomplete in {len(problems)} step directories "
            f"({inert_text.value(first.step_dir)}: {inert_text.value(first.text)}); `npu-dump info {shown}` lists them",
            sys.stderr,
        )


def _parser():
    summary, _, details = __doc__.partition("\n\n")
    parser = argparse.ArgumentParser(
        prog="npu-dump",
        description=summary.replace("``", ""),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=details,
    )
    parser.add_argument("--version", action="version", version=version.version_text("npu-dump"))
    sub = parser.add_subparsers(dest="command", required=True)
    convert = sub.add_parser("convert", help="dump files and trees -> .npy")
    convert.add_argument("sources", nargs="+", help="dump files, Opdebug records or directories")
    convert.add_argument("-o", "--output", required=True, help="output directory (created when missing)")
    convert.set_defaults(run=_convert)
    compare = sub.add_parser("compare", help="compare two dump trees tensor by tensor")
    compare.add_argument("mine", nargs="?", help="my dump: a dump tree or file (the NPUDump column)")
    compare.add_argument("truth", nargs="?", help="the ground truth: a dump tree or a directory of golden .npy files")
    compare.add_argument("-m", "--my_dump_path", help="my dump, as msaccucmp spells it (instead of MINE)")
    compare.add_argument("-g", "--golden_dump_path", help="the ground truth, as msaccucmp spells it (instead of TRUTH)")
    compare.add_argument("-o", "--output", help="result CSV (default: ./compare_result_{time}.csv)")
    compare.add_argument(
        "--step", type=arg_checks.command_line_int, help="step to compare (default: the lowest step both hold)"
    )
    compare.add_argument(
        "--cosine",
        type=arg_checks.command_line_float,
        default=dump_compare.DEFAULT_COSINE_THRESHOLD,
        help="a tensor diverges below this cosine similarity (default %(default)s)",
    )
    compare.add_argument(
        "--top", type=arg_checks.command_line_int, default=5, help="worst tensors to list (default %(default)s)"
    )
    compare.add_argument(
        "--isolate",
        action="store_true",
        help="rerun each op that introduces error, and the first diverging op, on the ground truth's inputs in "
        "float64 on the CPU, and report its own error (needs op_graph.json, written by the sessions that dumped)",
    )
    compare.add_argument(
        "--html",
        metavar="PAGE",
        help="also write the comparison as a self-contained HTML page: tensors in execution order coloured by "
        "error, search and filters, the advisor's likely cause (several ranks: one page per rank, PAGE_device{id})",
    )
    compare.set_defaults(run=_compare, parser=compare)
    overflow = sub.add_parser("overflow", help="the overflow report of a dump tree")
    overflow.add_argument("dir", help="a dump tree (any level) or an Opdebug file")
    overflow.add_argument(
        "-n",
        "--number",
        type=arg_checks.command_line_int,
        default=overflow_records.DEFAULT_DETAILED,
        help="records shown with their tensors' statistics (default %(default)s)",
    )
    overflow.add_argument("-o", "--output", help="also write the report to this file")
    overflow.set_defaults(run=_overflow)
    origin = sub.add_parser(
        "origin",
        help="the rank, step and op where a job's first inf/NaN came from, followed through the collectives",
        description="Reads every rank's dump tree ({dump_path}/{time}/{device_id}) of one job and names the rank "
        "(device id), step and op that made the first inf/NaN (or fp16 overflow record): a value a collective "
        "brought from another rank is followed back to the op of that rank that made it.",
    )
    origin.add_argument(
        "paths", nargs="+", help="a job's dump_path, one of its {time} directories, or its device directories"
    )
    origin.set_defaults(run=_origin)
    info = sub.add_parser("info", help="what dump files, Opdebug records or .npy files hold")
    info.add_argument("paths", nargs="+", help="files, or directories to summarize")
    info.set_defaults(run=_info)
    return parser


def main(argv=None):
    """Entry point of ``npu-dump``.

    Args:
      argv: arguments without the program name (default: ``sys.argv[1:]``).
    Returns:
      The exit code (module docstring).
    """
    args = _parser().parse_args(argv)
    try:
        return args.run(args)
    except (DumpFormatError, DumpTreeError, FileNotFoundError, ValueError, OSError) as e:
        inert_text.echo(f"npu-dump: {inert_text.value(e)}", sys.stderr)
        return EXIT_BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())
