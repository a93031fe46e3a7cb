"""Put first on ``PYTHONPATH`` by ``npu-run --tf2`` and ``python -m npu_bridge.tf2``: every Python process started
with ``NPU_BRIDGE_TF2=1`` (a shell wrapper's ``python3 train.py``, a multiprocessing child) maps user code's Keras 2.6
and TensorFlow-internal imports from its first line, as ``import npu_device`` does from where it stands. Then the
``sitecustomize`` this one hides, if any, runs as it would have."""

import os
import sys

try:
    from npu_bridge.core.runtime import child_python
except ImportError as _error:  # npu_bridge is not importable by this Python: say so, run the script as is
    sys.stderr.write(f"npu_bridge TF2 adapter: not installed in this Python ({_error})\n")
else:
    if os.environ.get("NPU_BRIDGE_TF2", "").strip() == "1":
        from npu_bridge.core.tf2 import legacy_imports

        legacy_imports.install()
    child_python.run_hidden_sitecustomize()
