"""``python -m npu_bridge.core.accuracy``: the ``npu-debug`` command."""

import sys

from npu_bridge.core.accuracy.cli import main

sys.exit(main())
