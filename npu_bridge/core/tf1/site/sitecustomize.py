"""Put first on ``PYTHONPATH`` by the TF1 mode: every Python process started with ``NPU_BRIDGE_TF1=1`` (a shell
wrapper's ``python3 train.py``, a multiprocessing child) installs the mode before its script runs. Then the
``sitecustomize`` this one hides, if any, runs as it would have."""

import os
import sys

try:
    from npu_bridge.core.runtime import child_python
except ImportError as _error:  # npu_bridge is not importable by this Python: say so, run the script as is
    sys.stderr.write(f"npu_bridge TF1 mode: not installed in this Python ({_error})\n")
else:
    if os.environ.get("NPU_BRIDGE_TF1", "").strip() == "1":
        from npu_bridge.core.tf1 import mode

        mode.install_if_requested()
    child_python.run_hidden_sitecustomize()
