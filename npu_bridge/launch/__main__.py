"""``python -m npu_bridge.launch``: the same as the ``npu-run`` command."""

import sys

from npu_bridge.launch.cli import main

if __name__ == "__main__":
    sys.exit(main())
