"""Renders a profile's report.html in headless Chromium to a PNG, to look at it as a person does.

    python tools/render_report.py PATH [-o report.png] [--width 1200] [--height 2400] [--browser chromium]

PATH is a report.html, or a profile directory (``PROF_*``) or a directory holding several, whose report.html is
used (written first with ``npu-prof report`` when there is none). The PNG is the top ``--height`` px of the page
at ``--width`` px; the default is report.png beside the HTML file.

Chromium (or Chrome) is not a dependency of npu_bridge: install it to use this tool (``apt-get install
chromium``). Exit codes: 0 written, 2 no report or no browser, 1 the browser failed.
"""

import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

_BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
_TIMEOUT_S = 120


def find_browser(name=None):
    """The path of the browser to use: ``name`` (a path or a command), else the first of ``_BROWSERS`` on PATH."""
    for candidate in (name,) if name else _BROWSERS:
        path = shutil.which(candidate)
        if path:
            return path
    return None


def report_file(path):
    """The report.html that ``path`` names or holds; written with ``npu-prof report`` when a directory has none."""
    if os.path.isfile(path):
        return path
    html_path = os.path.join(path, "report.html")
    if os.path.isdir(path) and not os.path.isfile(html_path):
        from npu_bridge.core.profiling import cli  # pylint: disable=import-outside-toplevel  (imports TensorFlow)

        if cli.main(["report", path, "-o", html_path]) != 0:
            return None
    return html_path if os.path.isfile(html_path) else None


def render(html_path, png_path, browser, width=1200, height=2400):
    """Screenshots ``html_path`` into ``png_path`` with headless ``browser``; raises RuntimeError when it fails."""
    with tempfile.TemporaryDirectory(prefix="render-report-") as profile:
        command = [
            browser,
            "--headless",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            f"--user-data-dir={profile}",
            f"--window-size={width},{height}",
            f"--screenshot={os.path.abspath(png_path)}",
            pathlib.Path(os.path.abspath(html_path)).as_uri(),
        ]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            command.insert(1, "--no-sandbox")  # Chromium refuses to run as root with its sandbox
        if os.path.exists(png_path):
            os.remove(png_path)
        result = subprocess.run(command, capture_output=True, text=True, timeout=_TIMEOUT_S, check=False)
    if result.returncode != 0 or not os.path.isfile(png_path):
        raise RuntimeError(f"{browser} exited with {result.returncode}: {result.stderr.strip()[-2000:]}")
    return png_path


def main(argv=None):
    parser = argparse.ArgumentParser(description="Render an npu_bridge profile report to a PNG (headless Chromium).")
    parser.add_argument("path", help="report.html, or a profile directory (or one holding several)")
    parser.add_argument("-o", "--output", help="the PNG file (default: report.png beside the HTML file)")
    parser.add_argument("--width", type=int, default=1200, help="viewport width in px (default %(default)s)")
    parser.add_argument("--height", type=int, default=2400, help="viewport height in px (default %(default)s)")
    parser.add_argument("--browser", help="Chromium or Chrome to use (default: the first found on PATH)")
    args = parser.parse_args(argv)
    browser = find_browser(args.browser)
    if browser is None:
        print(
            f"render_report: no browser found ({args.browser or ', '.join(_BROWSERS)}); install chromium",
            file=sys.stderr,
        )
        return 2
    html_path = report_file(args.path)
    if html_path is None:
        print(f"render_report: no report.html at {args.path}", file=sys.stderr)
        return 2
    png_path = args.output or os.path.join(os.path.dirname(html_path), "report.png")
    try:
        render(html_path, png_path, browser, args.width, args.height)
    except (RuntimeError, subprocess.TimeoutExpired, OSError) as e:
        print(f"render_report: {e}", file=sys.stderr)
        return 1
    print(f"render_report: wrote {png_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
