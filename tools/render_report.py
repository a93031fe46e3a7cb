"""Renders a profile's report.html in headless Chromium to a PNG, to look at it as a person does.

    python tools/render_report.py PATH [-o report.png] [--width 1200] [--height 2400] [--browser chromium]
                                   [--no-sandbox]

PATH is a report.html, or a profile directory (``PROF_*``) or a directory holding several, whose report.html is
used (written first with ``npu-prof report`` when there is none). The PNG is the top ``--height`` px of the page
at ``--width`` px; the default is report.png beside the HTML file.

Chromium (or Chrome) is not a dependency of npu_bridge: install it to use this tool (``apt-get install
chromium``). Exit codes: 0 written, 2 no report or no browser, 1 the browser failed.

The browser keeps its sandbox: ``--no-sandbox`` is passed to it only when the user asks with ``--no-sandbox``
(Chromium refuses to start as root with its sandbox; run the tool as another user instead, or pass the flag for a
report you trust). The screenshot is taken into a private temporary directory and then written to the PNG path as a
new file renamed into place (a symlink at that name is replaced, never written through).
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
        from npu_bridge.core.profiling import cli  # imports TensorFlow

        if cli.main(["report", path, "-o", html_path]) != 0:
            return None
    return html_path if os.path.isfile(html_path) else None


def browser_command(browser, html_path, screenshot, user_data_dir, width=1200, height=2400, no_sandbox=False):
    """The command line that screenshots ``html_path`` into ``screenshot`` with headless ``browser``.

    The browser's sandbox stays on unless ``no_sandbox`` (the user's explicit ``--no-sandbox``), whoever runs it.
    """
    return [
        browser,
        *(["--no-sandbox"] if no_sandbox else []),
        "--headless",
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        f"--user-data-dir={user_data_dir}",
        f"--window-size={width},{height}",
        f"--screenshot={os.path.abspath(screenshot)}",
        pathlib.Path(os.path.abspath(html_path)).as_uri(),
    ]


def render(html_path, png_path, browser, width=1200, height=2400, no_sandbox=False):
    """Screenshots ``html_path`` into ``png_path`` with headless ``browser``; raises RuntimeError when it fails."""
    from npu_bridge.core.runtime import safe_paths

    with tempfile.TemporaryDirectory(prefix="render-report-") as private:
        screenshot = os.path.join(private, "report.png")
        command = browser_command(
            browser, html_path, screenshot, os.path.join(private, "profile"), width, height, no_sandbox
        )
        result = subprocess.run(command, capture_output=True, text=True, timeout=_TIMEOUT_S, check=False)
        if result.returncode != 0 or not os.path.isfile(screenshot):
            raise RuntimeError(
                f"{browser} exited with {result.returncode}: {result.stderr.strip()[-2000:]}{_root_hint(no_sandbox)}"
            )
        with open(screenshot, "rb") as f:
            safe_paths.write_file(png_path, f.read(), safe_paths.REPORT_MODE)
    return png_path


def _root_hint(no_sandbox):
    """What to do when the browser would not start as root with its sandbox ("" otherwise)."""
    if no_sandbox or not hasattr(os, "geteuid") or os.geteuid() != 0:
        return ""
    return (
        "\nrender_report: running as root, Chromium refuses to start with its sandbox. Run this tool as another "
        "user, or, for a report you trust, pass --no-sandbox (it turns off the browser's protection against the page)."
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description="Render an npu_bridge profile report to a PNG (headless Chromium).")
    parser.add_argument("path", help="report.html, or a profile directory (or one holding several)")
    parser.add_argument("-o", "--output", help="the PNG file (default: report.png beside the HTML file)")
    parser.add_argument("--width", type=int, default=1200, help="viewport width in px (default %(default)s)")
    parser.add_argument("--height", type=int, default=2400, help="viewport height in px (default %(default)s)")
    parser.add_argument("--browser", help="Chromium or Chrome to use (default: the first found on PATH)")
    parser.add_argument(
        "--no-sandbox",
        action="store_true",
        help="run the browser without its sandbox (Chromium needs this as root; only for reports you trust)",
    )
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
        render(html_path, png_path, browser, args.width, args.height, args.no_sandbox)
    except (RuntimeError, subprocess.TimeoutExpired, OSError) as e:
        print(f"render_report: {e}", file=sys.stderr)
        return 1
    print(f"render_report: wrote {png_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
