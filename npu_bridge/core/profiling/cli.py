"""``npu-prof``: summarize profiling directories and write their HTML report.

  npu-prof summary PATH [--top N] [--include-warmup]    the headline numbers of every profile under PATH
  npu-prof report PATH [-o FILE] [--include-warmup]     write the HTML report (all ranks under PATH in one)
  npu-prof export PATH [--fp-point OP] [--bp-point OP]  redo the summaries and timeline from the raw data

PATH is a profile directory (``PROF_*``) or a directory holding several, e.g. the ``output`` of all ranks.
The op statistics of the summary and the report leave out each graph's first iteration (warm-up) when the graph
has more, unless ``--include-warmup``.
A profile whose process ended before exporting is exported first. An export replaces the previous one only
once complete; a profile whose export is incomplete is not summarized. Damaged raw data is exported up to the
damage, with a warning, and the summary says the profile is incomplete.

Exit codes (the same in every npu_bridge tool): 0 done, 2 bad usage or an input that is missing or damaged
(the message names it; a failed export keeps the previous one), 1 an unexpected failure (npu-prof has no
findings to report).
"""

import argparse
import os
import sys

from npu_bridge.core.profiling import layout, report, summary
from npu_bridge.core.runtime import arg_checks, atomic_write, inert_text, version
from npu_bridge.core.runtime.errors import ProfileDataError

_WARMUP_HELP = "count each graph's first iteration (warm-up) in the op statistics too"


def _progress(done, total):
    inert_text.echo(f"npu-prof: analysed {done} of {total} runs", sys.stderr, True)


def _warn(message):
    inert_text.echo(f"npu-prof: warning: {inert_text.value(message)}", sys.stderr, True)


def _export(profile_dir, fp_point=None, bp_point=None):
    from npu_bridge.core.profiling import export  # imports TensorFlow

    inert_text.echo(f"npu-prof: exporting {inert_text.value(profile_dir)}", sys.stderr, True)
    try:
        return export.export_profile(profile_dir, fp_point, bp_point, progress=_progress, warn=_warn)
    except (ProfileDataError, OSError) as e:
        raise ProfileDataError(
            f"exporting {profile_dir} failed, its previous export (if any) is unchanged: {e}"
        ) from None


def _load_all(path, include_warmup=False):
    summaries = []
    for profile_dir in layout.find_profiles(path):
        if not layout.read_info(profile_dir).get("exported"):
            _export(profile_dir)
        summaries.append(summary.load(profile_dir, include_warmup))
    return sorted(summaries, key=lambda loaded: (loaded.info["rank_id"], loaded.directory))


def _summary(args):
    for loaded in _load_all(args.path, args.include_warmup):
        inert_text.echo(summary.format_text(loaded, top=args.top))
    return 0


def _report(args):
    if args.output:
        atomic_write.check_output(args.output, "report")  # before the work, not after it
    summaries = _load_all(args.path, args.include_warmup)
    if args.output:
        target = args.output
    elif len(summaries) == 1:
        target = report.report_path(summaries[0].directory)
    else:
        target = os.path.join(args.path, layout.REPORT_FILE)
    report.write_report(summaries, target)
    inert_text.echo(f"npu-prof: wrote {inert_text.value(target)}")
    return 0


def _export_command(args):
    for profile_dir in layout.find_profiles(args.path):
        paths = _export(profile_dir, args.fp_point, args.bp_point)
        loaded = summary.load(profile_dir)
        report.write_report([loaded], report.report_path(profile_dir))
        for kind, path in sorted(paths.items()):
            inert_text.echo(f"{kind}: {inert_text.value(path)}")
        inert_text.echo(summary.format_text(loaded))
    return 0


def main(argv=None):
    """Entry point of ``npu-prof``.

    Args:
      argv: arguments without the program name (default ``sys.argv[1:]``).
    Returns:
      The exit code.
    """
    parser = argparse.ArgumentParser(prog="npu-prof", description="Summarize npu_bridge profiling directories.")
    parser.add_argument("--version", action="version", version=version.version_text("npu-prof"))
    sub = parser.add_subparsers(dest="command", required=True)
    cmd = sub.add_parser("summary", help="print the headline numbers of each profile")
    cmd.add_argument("path", help="a PROF_* directory or a directory holding several")
    cmd.add_argument(
        "--top", type=arg_checks.command_line_int, default=5, help="op types to list (default %(default)s)"
    )
    cmd.add_argument("--include-warmup", action="store_true", help=_WARMUP_HELP)
    cmd.set_defaults(run=_summary)
    cmd = sub.add_parser("report", help="write the HTML report")
    cmd.add_argument("path", help="a PROF_* directory or a directory holding several")
    cmd.add_argument("-o", "--output", help="the HTML file (default: report.html in PATH or the profile)")
    cmd.add_argument("--include-warmup", action="store_true", help=_WARMUP_HELP)
    cmd.set_defaults(run=_report)
    cmd = sub.add_parser("export", help="redo the exported files from the raw data")
    cmd.add_argument("path", help="a PROF_* directory or a directory holding several")
    cmd.add_argument("--fp-point", help="op name of the first forward op (default: as recorded)")
    cmd.add_argument("--bp-point", help="op name of the last backward op (default: as recorded)")
    cmd.set_defaults(run=_export_command)
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except (ProfileDataError, OSError) as e:
        inert_text.echo(f"npu-prof: {inert_text.value(e)}", sys.stderr)
        return 2
    except Exception as e:  # a CLI reports errors, it does not trace back
        inert_text.echo(f"npu-prof: {type(e).__name__}: {inert_text.value(e)}", sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
