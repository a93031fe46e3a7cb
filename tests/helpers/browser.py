"""A real headless Chromium for the tests of the HTML pages the tools write, driven through ChromeDriver.

Debian's ``chromium`` and ``chromium-driver`` packages (``.ci/run`` installs them when it can) and the pinned
``selenium`` of the test extra; a test that needs them is skipped, saying which is missing, when one is not there.
Chromium starts with a new empty profile and without its background connections (the machine may have no network).
"""

import contextlib
import importlib.util
import os
import shutil
import tempfile

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
_FLAGS = (
    "--headless",
    "--no-sandbox",  # the suite runs as root in CI
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1400,1000",
)


def require_browser():
    """Skips the calling test unless Chromium, ChromeDriver and selenium are installed."""
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not os.access(path, os.X_OK):
            pytest.skip(f"{path} is missing: install Debian's {package} package (.ci/run does as root)")
    if importlib.util.find_spec("selenium") is None:
        pytest.skip("selenium is missing: install the test extra (pip install -e '.[test]')")


@contextlib.contextmanager
def headless_chromium():
    """Yields a selenium WebDriver of a headless Chromium; quits it and removes its profile afterwards."""
    require_browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="npu-test-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in _FLAGS + (f"--user-data-dir={profile}",):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    try:
        driver.set_page_load_timeout(30)
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def visible_rows(driver, selector):
    """The rows matching ``selector`` that are shown, as lists of their cells' texts (one round trip)."""
    return driver.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0]))"
        ".filter(function (row) { return row.getClientRects().length > 0; })"
        ".map(function (row) {"
        "  return Array.from(row.cells).map(function (cell) { return cell.innerText.trim(); });"
        "});",
        selector,
    )


def console_errors(driver):
    """The browser console's errors (a blocked script, a refused request, a script error)."""
    return [entry for entry in driver.get_log("browser") if entry.get("level") == "SEVERE"]
