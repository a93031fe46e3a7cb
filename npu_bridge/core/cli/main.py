"""``npu-bridge``: what is installed and how options are understood.

npu-bridge info            versions, the C++ library, the collective world seen from the environment
npu-bridge options [KEY]   the NpuOptimizer option table, or everything about one option

Exit codes (the same in every npu_bridge tool): 0 done, 2 bad usage or a bad input (an unknown option, a
malformed environment or rank table; the message names it), 1 an unexpected failure.
"""

import argparse
import sys

from npu_bridge.core.runtime import inert_text, log, version
from npu_bridge.core.runtime.errors import NpuBridgeError


def _info(_args):
    tf = log.import_tensorflow_quietly()

    import os

    import npu_bridge
    from npu_bridge.core.collectives import exposure
    from npu_bridge.core.runtime import native_library
    from npu_bridge.core.world import world

    print(f"npu_bridge {npu_bridge.__version__}")
    print(f"TensorFlow {tf.__version__}")
    print(f"C++ library {native_library.library_path()} (loaded: {native_library.is_loaded()})")
    current = world.load_world(meet=False)  # shows the world; never takes a rank's place at rank 0's rendezvous
    print(
        f"world: rank {current.rank_id} of {current.rank_size} (source: {current.source}, "
        f"device id {current.device_id})"
    )
    if current.source_variables:
        print(f"  from: {', '.join(inert_text.value(v) for v in current.source_variables)}")
    if current.hosts_pending:
        print(f"  hosts: learned by the ranks from rank 0 at {inert_text.value(current.chief_address)} when they start")
    elif current.rank_size > 1:
        print(f"  local ranks: {current.local_rank_size} (this is local rank {current.local_rank_id})")
        servers = list(dict.fromkeys(r.host for r in current.ranks))
        shown = ", ".join(inert_text.value(h) for h in servers[:8]) + (" ..." if len(servers) > 8 else "")
        print(f"  hosts: {len(servers)} ({shown})")
    if current.job_id:
        print(f"  job id: {inert_text.value(current.job_id)}")
    across = current.hosts_pending or len({r.host for r in current.ranks}) > 1
    chosen = exposure.guard(across, os.environ)
    if chosen:
        print(f"  across machines: {exposure.GUARD_TEXT[chosen]}")
    return 0


def _options(args):
    from npu_bridge.core.options import docs, table
    from npu_bridge.core.options.spec import STATUS_TEXT

    if not args.key:
        print(docs.render_markdown() if args.markdown else docs.render_terminal())
        return 0
    spec = table.OPTIONS.get(args.key)
    if spec is None:
        print(
            f"npu-bridge: unknown option {args.key!r}{table.did_you_mean(args.key)} (`npu-bridge options` lists "
            "them all)",
            file=sys.stderr,
        )
        return 2
    print(
        f"{spec.name}\n  kind: .{spec.kind}\n  stage: {spec.stage}\n  default: {spec.default!r}\n"
        f"  allowed: {spec.allowed}\n  status here: {STATUS_TEXT[spec.status]}\n  effect: {spec.effect}"
    )
    return 0


def main(argv=None):
    """Entry point of the ``npu-bridge`` command.

    Args:
      argv: arguments without the program name (default: ``sys.argv[1:]``).
    Returns:
      The process exit code.
    """
    parser = argparse.ArgumentParser(prog="npu-bridge", description="npu_bridge: installation and option info")
    parser.add_argument("--version", action="version", version=version.version_text("npu-bridge"))
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="versions, the C++ library and the collective world").set_defaults(run=_info)
    options = sub.add_parser("options", help="the NpuOptimizer option table or one option")
    options.add_argument("key", nargs="?", help="an option name, e.g. precision_mode")
    options.add_argument(
        "--markdown", action="store_true", help="print the whole table as markdown (as in docs/options.md)"
    )
    options.set_defaults(run=_options)
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except NpuBridgeError as e:  # a bad environment or rank table: the input's fault, named in the message
        print(f"npu-bridge: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # a CLI reports errors, it does not trace back
        print(f"npu-bridge: {type(e).__name__}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
