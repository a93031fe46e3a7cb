"""What a dumping run was configured with, {root}/run_config.json, and the check ``npu-dump compare`` makes of two.

The dump step writes, at each dump root, when a session starts dumping (and again with the graph's seed at its
first run):

  options      the NpuOptimizer options the script set explicitly (normalized), and ``backend``
  environment  the variables named HCCL_*, ASCEND_* and NPU_BRIDGE_*, except any whose name contains SECRET,
               TOKEN, KEY or PASSWORD (left out entirely: neither name nor value is written)
  versions     python, npu_bridge, tensorflow, numpy
  seeds        the graph-level seed (``tf.compat.v1.set_random_seed``; null when unset) and PYTHONHASHSEED

``check`` compares the files of two trees and lists every key whose values differ (dump_path, which every run
sets apart, and HCCL_IF_BASE_PORT, which npu-run picks for each job, are not compared). Values come from files:
they are shown inert (``inert_text``).
"""

import dataclasses
import json
import os
import platform
import sys
from typing import Optional

from npu_bridge.core.dump import dump_tree
from npu_bridge.core.runtime import bounded_files, inert_text, version

CONFIG_FILE = "run_config.json"
PREFIXES = ("HCCL_", "ASCEND_", "NPU_BRIDGE_")
SECRET_WORDS = ("SECRET", "TOKEN", "KEY", "PASSWORD")
SECTIONS = ("options", "environment", "versions", "seeds")
NOT_COMPARED = {("options", "dump_path"), ("environment", "HCCL_IF_BASE_PORT")}
_SHOWN_CHARACTERS = 200
_UNSET = object()


def collect(options, backend, graph_seed=None, environ=None):
    """The run_config.json content of a session.

    Args:
      options: the session's validated ``NpuOptions``.
      backend: "cpu", "gpu" or "ascend".
      graph_seed: the graph-level seed, or None.
      environ: the environment (default: ``os.environ``).
    """
    environ = os.environ if environ is None else environ
    tensorflow = sys.modules.get("tensorflow")
    numpy = sys.modules.get("numpy")
    return {
        "options": {**{k: _plain(v) for k, v in options.explicit.items()}, "backend": backend},
        "environment": {
            name: value
            for name, value in sorted(environ.items())
            if name.startswith(PREFIXES) and not any(word in name.upper() for word in SECRET_WORDS)
        },
        "versions": {
            "python": platform.python_version(),
            "npu_bridge": version.PACKAGE_VERSION,
            "tensorflow": getattr(tensorflow, "__version__", None),
            "numpy": getattr(numpy, "__version__", None),
        },
        "seeds": {"graph": graph_seed, "PYTHONHASHSEED": environ.get("PYTHONHASHSEED")},
    }


def _plain(value):
    return value if isinstance(value, (bool, int, float, str)) or value is None else str(value)


@dataclasses.dataclass
class ConfigCheck:
    """The configuration check of two trees.

    Attributes:
      mine, truth: the run_config.json read for each tree (None: the tree has none).
      differences: [(section, key, my value, the ground truth's value)]; a key absent on one side shows there as
        "(not set)", a JSON null as null.
      options: the options section of my run's file (empty when it has none).
    """

    mine: Optional[str]
    truth: Optional[str]
    differences: list
    options: dict = dataclasses.field(default_factory=dict)

    def summary_line(self):
        """One line for the top of the comparison summary."""
        if self.mine is None or self.truth is None:
            side = "my dump" if self.mine else "the ground truth"
            which = "neither run has" if self.mine == self.truth else f"only {side} has"
            return f"configuration: not checked ({which} {CONFIG_FILE})"
        if not self.differences:
            return "configuration: the same options, environment, versions and seeds"
        names = ", ".join(f"{section} {inert_text.value(key)}" for section, key, _, _ in self.differences[:5])
        more = f" and {len(self.differences) - 5} more" if len(self.differences) > 5 else ""
        return f"configuration differs in {len(self.differences)} settings: {names}{more}"

    def section(self):
        """The lines of the "configuration differences" section (empty when there is nothing to list)."""
        if not self.differences:
            return []
        lines = [f"configuration differences ({CONFIG_FILE} of each run; check these before the tensors):"]
        for section, key, mine, truth in self.differences:
            shown = f"mine {shown_value(mine)}, ground truth {shown_value(truth)}"
            lines.append(f"  {section} {inert_text.value(key)}: {shown}")
        return lines


def shown_value(value):
    """A value of a difference as the check shows it: JSON, shortened, inert; "(not set)" for an absent key."""
    if value is _UNSET:
        return "(not set)"
    text = f'"{value}"' if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    if len(text) > _SHOWN_CHARACTERS:
        text = text[:_SHOWN_CHARACTERS] + "..."
    return inert_text.value(text)


def read(root):
    """(path, content) of the run_config.json nearest to ``root`` (above it, else the first in its tree), or
    (None, None) when there is none that parses as one."""
    above, inside = dump_tree.side_files(root, CONFIG_FILE)
    for path in above[::-1] + inside:
        try:
            parsed = bounded_files.parse_json(bounded_files.read_text(path))
        except (OSError, ValueError):
            continue
        if isinstance(parsed, dict) and all(isinstance(parsed.get(s, {}), dict) for s in SECTIONS):
            return path, parsed
    return None, None


def check(mine, truth):
    """Compares the run_config.json of the trees ``mine`` and ``truth``; returns a ``ConfigCheck``."""
    (mine_path, mine_config), (truth_path, truth_config) = read(mine), read(truth)
    differences = []
    if mine_config is not None and truth_config is not None:
        for section in SECTIONS:
            a, b = mine_config.get(section, {}), truth_config.get(section, {})
            for key in sorted(set(a) | set(b), key=str):
                if (section, key) in NOT_COMPARED:
                    continue
                left, right = a.get(key, _UNSET), b.get(key, _UNSET)
                if left != right:
                    differences.append((section, key, left, right))
    options = mine_config.get("options", {}) if mine_config is not None else {}
    return ConfigCheck(mine_path, truth_path, differences, options)
