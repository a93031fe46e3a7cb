"""``python -m npu_bridge.core.options``: print the option table, or write it into docs/options.md."""

import argparse
import sys

from npu_bridge.core.options import docs


def main(argv=None):
    """Runs the command line.

    Args:
      argv: arguments without the program name; default ``sys.argv[1:]``.
    Returns:
      The exit code: 0 on success, 1 when the page lacks the markers.
    """
    parser = argparse.ArgumentParser(
        prog="python -m npu_bridge.core.options", description="Print the NpuOptimizer option table as markdown."
    )
    parser.add_argument(
        "--write-docs",
        action="store_true",
        help="rewrite the block between the options-table markers of the documentation page instead",
    )
    parser.add_argument("--page", default=str(docs.DOCS_PAGE), help="page to rewrite (default: %(default)s)")
    args = parser.parse_args(argv)
    if not args.write_docs:
        print(docs.render_markdown())
        return 0
    try:
        docs.write_docs(args.page)
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
