"""npu-debug bisect on a TF2 script: the ops of its tf.function graphs are candidates (recorded in op_graph.json
when traced) and customize_dtypes keeps the named one in float32 in the function graph."""

import os
import sys

import pytest
from helpers.paths import TESTS_DIR
from helpers.processes import npu_debug

from npu_bridge.core.accuracy import bisection

SCRIPT = os.path.join(TESTS_DIR, "data", "tf2", "scripts", "precision_culprit_function.py")


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_bisect_names_the_planted_op_of_a_tf_function(tmp_path):
    result = npu_debug(["bisect", "--output-dir", str(tmp_path / "out"), "--", sys.executable, SCRIPT], tmp_path, 200)
    assert result.returncode == 1, result.stdout[-3000:] + result.stderr[-3000:]  # 1: a finding
    assert "culprit ops:\n  branch_02/matmul (MatMul)" in result.stdout, result.stdout
    text = (tmp_path / "out" / bisection.CUSTOMIZE_FILE).read_text()
    assert text == "branch_02/matmul::InputDtype:float32,float32,OutputDtype:float32\n"
