"""``npu-debug``: finding the ops whose precision explains a divergence.

npu-debug bisect [options] -- COMMAND...
    runs COMMAND (a training script that prints its metric) under precision_mode=must_keep_origin_dtype and
    under its own precision, then again with sets of ops kept in float32, and writes the smallest such set as a
    customize_dtypes file (and a modify_mixlist black list of op types) with a report.

Exit codes (the same in every npu_bridge tool): 0 nothing to find (the metric is already within tolerance),
1 a finding (culprits written, or a divergence op precision does not explain), 2 bad usage or a bad input (no
command, a command that fails or prints no metric; the message names it), 130 stopped (Ctrl-C, SIGTERM).
"""

import argparse
import math
import os
import shutil
import signal
import sys
import tempfile

from npu_bridge.core.accuracy import bisect_report, bisection, metric, script_runs
from npu_bridge.core.device import device_target
from npu_bridge.core.runtime import arg_checks, atomic_write, inert_text, version
from npu_bridge.core.runtime.errors import BisectError, NpuBridgeError

_EPILOG = """\
The contract with COMMAND: it runs a few training steps and prints its metric on a line --metric matches
(default: "loss = 0.123" or "loss: 0.123"); the last match on standard output counts (standard error when
standard output has none). npu-debug sets NpuOptimizer options for each run through the environment variable
NPU_BRIDGE_OPTIONS, so the script is not edited; the first run dumps its first step (enable_dump) to list its ops.

Runs: 3 (reference, the script's own precision, every op kept) + about log2(ops) + 1 per culprit, per stage
(op types, then op names); the first progress line says the bound. See docs/debugging_accuracy.md.
"""


def _parser():
    parser = argparse.ArgumentParser(
        prog="npu-debug",
        description="Find the ops whose reduced precision explains a divergence from the float32 reference.",
    )
    parser.add_argument("--version", action="version", version=version.version_text("npu-debug"))
    commands = parser.add_subparsers(dest="subcommand", required=True, metavar="{bisect}")
    bisect = commands.add_parser(
        "bisect",
        help="find the smallest set of ops to keep in float32, and write the customize_dtypes / modify_mixlist",
        description="Bisect over op types and op names for the smallest set whose float32 brings the script's "
        "metric within tolerance of the must_keep_origin_dtype reference.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    bisect.add_argument("--metric", default=metric.DEFAULT_PATTERN, help="regex whose first group is the metric")
    bisect.add_argument(
        "--rtol", type=arg_checks.command_line_float, default=1e-2, help="relative tolerance (default 0.01)"
    )
    bisect.add_argument(
        "--atol", type=arg_checks.command_line_float, default=0.0, help="absolute tolerance (default 0)"
    )
    bisect.add_argument(
        "--by", choices=bisection.BY, default="both", help="op types then op names (default), or only one"
    )
    bisect.add_argument(
        "--max-culprits", type=arg_checks.command_line_int, default=3, help="stop after this many culprits (default 3)"
    )
    bisect.add_argument(
        "--timeout", type=arg_checks.command_line_float, default=600.0, help="seconds one run may take (default 600)"
    )
    bisect.add_argument(
        "--output-dir", default="npu_bisect", help="where the files and the report go (default ./npu_bisect)"
    )
    bisect.add_argument(
        "--device-target",
        choices=device_target.DEVICE_TARGETS,
        default=None,
        help="NPU_BRIDGE_DEVICE_TARGET of the runs (default: the environment's, else ascend)",
    )
    bisect.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command and its arguments")
    return parser


def _settings(args):
    command = list(args.command)
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        raise _usage("no command: give it after --, e.g. npu-debug bisect -- python3 train.py")
    for name in ("rtol", "atol"):
        value = getattr(args, name)
        if not math.isfinite(value) or value < 0:
            raise _usage(f"--{name} {value!r}: a tolerance is a finite number >= 0")
    if args.rtol == 0 and args.atol == 0:
        raise _usage("--rtol and --atol are both 0: give a tolerance")
    if args.max_culprits < 1:
        raise _usage(f"--max-culprits {args.max_culprits}: at least 1")
    if not math.isfinite(args.timeout) or args.timeout <= 0:
        raise _usage(f"--timeout {args.timeout!r}: a number of seconds > 0")
    if os.path.exists(args.output_dir) and not os.path.isdir(args.output_dir):
        raise _usage(f"--output-dir {args.output_dir!r} is not a directory")
    settings = bisection.Settings(
        pattern=metric.compile_pattern(args.metric),
        rtol=args.rtol,
        atol=args.atol,
        by=args.by,
        max_culprits=args.max_culprits,
        output_dir=os.path.abspath(args.output_dir),
    )
    return command, settings


def _usage(message):
    return BisectError(message)


def _stop(signum, _frame):
    raise KeyboardInterrupt(signal.Signals(signum).name)


def bisect(args):
    """Runs ``npu-debug bisect``; returns the exit code."""
    command, settings = _settings(args)
    environ = dict(os.environ)
    if args.device_target:
        environ[device_target.ENV_VARIABLE] = args.device_target
    else:
        environ.setdefault(device_target.ENV_VARIABLE, "ascend")
    work_dir = tempfile.mkdtemp(prefix="npu-debug-")
    runner = None
    try:
        runner = script_runs.ScriptRunner(command, environ, args.timeout, work_dir)
        outcome = bisection.Bisection(settings, runner, work_dir).run()
    finally:
        if runner is not None:
            runner.stop()
        shutil.rmtree(work_dir, ignore_errors=True)
    os.makedirs(settings.output_dir, exist_ok=True)
    report = os.path.join(settings.output_dir, bisection.REPORT_FILE)
    text = bisect_report.render(outcome, command, settings)
    atomic_write.write_output(report, text, "report")
    inert_text.echo(text.split("\n\nruns (")[0])
    inert_text.echo(f"report: {report}")
    return 0 if outcome.status == "clean" else 1


def main(argv=None):
    """Entry point of the ``npu-debug`` command; returns its exit code."""
    args = _parser().parse_args(argv)
    previous = {sig: signal.signal(sig, _stop) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        return bisect(args)
    except NpuBridgeError as e:
        print(f"npu-debug {args.subcommand}: {inert_text.lines(str(e))}", file=sys.stderr)
        return 2
    except OSError as e:  # the output directory cannot be made, the temporary directory is full, ...
        print(f"npu-debug {args.subcommand}: {inert_text.lines(str(e))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"npu-debug {args.subcommand}: stopped; the command's processes were ended", file=sys.stderr)
        return 130
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
