"""``python -m npu_bridge.core.launch``: the same as the ``npu-run`` command."""

import sys

from npu_bridge.core.launch.cli import main

if __name__ == "__main__":
    sys.exit(main())
