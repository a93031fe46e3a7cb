"""``python -m npu_bridge.tf1 SCRIPT [ARGS...]`` (see ``npu_bridge.core.tf1.mode.main``)."""

import sys

from npu_bridge.core.tf1 import mode

sys.exit(mode.main())
