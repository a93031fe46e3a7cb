"""``python -m npu_bridge.tf2 SCRIPT [ARGS...]`` (see ``npu_bridge.core.tf2.legacy_imports.main``)."""

import sys

from npu_bridge.core.tf2 import legacy_imports

sys.exit(legacy_imports.main())
