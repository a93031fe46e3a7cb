"""Running a script in the TF1 mode in a fresh interpreter, as the contrib tests do."""

import json
import os
import subprocess
import sys

from helpers.paths import REPO_ROOT, TESTS_DIR
from npu_bridge.core.tf1 import environment


def run_tf1_script(tmp_path, source, timeout=240):
    """Writes ``source`` to ``tmp_path/script.py`` and runs ``python -m npu_bridge.tf1 script.py`` there.

    Returns:
      The JSON of the one line the script printed as ``RESULT <json>``; fails the test on a non-zero exit.
    """
    (tmp_path / "script.py").write_text(source)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([REPO_ROOT, TESTS_DIR]), TF_CPP_MIN_LOG_LEVEL="2")
    env["NPU_BRIDGE_TF1_QUIET"] = "1"
    env.pop(environment.MODE_VARIABLE, None)
    result = subprocess.run(
        [sys.executable, "-m", "npu_bridge.tf1", "script.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-6000:]
    (line,) = [line for line in result.stdout.splitlines() if line.startswith("RESULT ")]
    return json.loads(line[len("RESULT ") :])
