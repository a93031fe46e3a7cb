"""Put first on ``PYTHONPATH`` by the TF1 mode: every Python process started with ``NPU_BRIDGE_TF1=1`` (a shell
wrapper's ``python3 train.py``, a multiprocessing child) installs the mode before its script runs. Then the
``sitecustomize`` this one hides, if any, runs as it would have."""

import os
import sys


def _chain():
    here = os.path.dirname(os.path.abspath(__file__))
    for entry in sys.path:
        if entry and os.path.abspath(entry) != here:
            candidate = os.path.join(entry, "sitecustomize.py")
            if os.path.isfile(candidate):
                import runpy

                runpy.run_path(candidate, run_name="sitecustomize")
                return


if os.environ.get("NPU_BRIDGE_TF1", "").strip() == "1":
    try:
        from npu_bridge.core.tf1 import mode

        mode.install_if_requested()
    except ImportError as _error:  # npu_bridge is not importable by this Python: say so, run the script as is
        sys.stderr.write(f"npu_bridge TF1 mode: not installed in this Python ({_error})\n")
_chain()
