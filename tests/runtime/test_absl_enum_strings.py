"""``DEFINE_enum`` with one string as ``enum_values`` (TensorFlow's official flag helpers, in 16 zoo directories):
accepted in the TF1 mode and the TF2 adapter as absl-py 0.x accepted it; plain Python keeps absl-py's error."""

import subprocess
import sys

import helpers.tf2
import pytest

SCRIPT = """
import json
from absl import app, flags
flags.DEFINE_enum(name="fp16_implementation", default="keras", enum_values=("keras', 'graph_rewrite"), help="how")
flags.DEFINE_enum(name="dtype", default="fp32", enum_values=["fp32", "fp16"], help="which")

def main(_):
    print("RESULT " + json.dumps([flags.FLAGS.fp16_implementation, flags.FLAGS.dtype]))

app.run(main)
"""


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "flags_script.py"
    path.write_text(SCRIPT)
    return str(path)


@pytest.mark.parametrize("mode", ["npu_bridge.tf1", "npu_bridge.tf2"])
def test_a_string_of_enum_values_is_taken_as_absl_0x_took_it_in_both_modes(mode, script, tmp_path):
    env = {"NPU_BRIDGE_TF1_QUIET": "1"}
    result, stderr = helpers.tf2.run_script(script, tmp_path, env=env, launcher=("-m", mode))
    assert result == ["keras", "fp32"]
    assert "DEFINE_enum got the string \"keras', 'graph_rewrite\" as enum_values" in stderr
    chosen, _ = helpers.tf2.run_script(script, tmp_path, "--fp16_implementation=graph_rewrite", launcher=("-m", mode))
    assert chosen == ["graph_rewrite", "fp32"]
    # a value that is no part of the string is refused at parse time, as absl-py 0.x did; a list is checked as ever
    for bad in ("--fp16_implementation=fp8", "--dtype=fp64"):
        refused = helpers.tf2.run_script(script, tmp_path, bad, launcher=("-m", mode), expect_ok=False)
        assert refused.returncode == 1 and "value should be one of" in refused.stderr


def test_plain_python_keeps_absl_pys_error(script, tmp_path):
    result = subprocess.run([sys.executable, script], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1 and "enum_values cannot be a str" in result.stderr
