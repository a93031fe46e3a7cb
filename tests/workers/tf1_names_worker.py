"""Run in the TF1 mode: looks up every TensorFlow name of a names file the way user code sees it and prints the
ones that do not resolve, as JSON (one line: RESULT {"unresolved": [...], "resolved_dirs": N, "all_dirs": N}).

A name resolves when every component is an attribute of the one before, or (for modules not imported yet) an
importable module, starting from the ``tensorflow`` user code gets; a placeholder the mode binds for what it does not
provide (``NotProvided``, which an import gives so that unused imports work) does not resolve. Names of flags a
script defines itself (``tf.flags.FLAGS.batch_size``) are skipped: they exist only in that script.

Given a per-directory names file instead (``zoo_dir_names.tsv``: columns ``dir`` and ``names``, space-separated,
written by ``tools/zoo_names.py``), it looks each distinct name up once and reports the *closures*, the model
directories all of whose names resolve, and for the others the names that stop them (RESULT "closures": {"closures": N,
"dirs": N, "names": N, "unresolved": N, "blockers": [[name, directories it stops, directories it alone stops],
...] most directories first, "open": {dir: [names]}}).

Usage: tf1_names_worker.py NAMES_TSV | DIR_NAMES_TSV
"""

import collections
import csv
import importlib
import sys

import tensorflow as tf
from helpers.collectives import report

from npu_bridge.core.tf1.contrib import NotProvided


def resolves(name):
    parts = name.split(".")
    value = tf
    for index, part in enumerate(parts[1:], 1):
        try:
            value = getattr(value, part)
            continue
        except AttributeError:
            pass
        try:
            value = importlib.import_module(".".join(parts[: index + 1]))
        except ImportError:
            return False
        if isinstance(value, NotProvided):
            return False
    return True


def closures(rows):
    uses = collections.defaultdict(set)
    for r in rows:
        uses[r["dir"]].update(name for name in r["names"].split() if ".FLAGS." not in name)
    names = sorted(set().union(*uses.values()))
    missing = {name for name in names if not resolves(name)}
    stopped = {d: sorted(used & missing) for d, used in uses.items() if used & missing}
    stops = collections.Counter(name for blocking in stopped.values() for name in blocking)
    alone = collections.Counter(blocking[0] for blocking in stopped.values() if len(blocking) == 1)
    return {
        "closures": len(uses) - len(stopped),
        "dirs": len(uses),
        "names": len(names),
        "unresolved": len(missing),
        "blockers": [[name, count, alone[name]] for name, count in sorted(stops.items(), key=lambda i: (-i[1], i[0]))],
        "open": stopped,
    }


with open(sys.argv[1], encoding="utf-8") as f:
    rows = list(csv.DictReader(f, delimiter="\t"))
if rows and "dir" in rows[0]:
    report("closures", closures(rows))
    sys.exit(0)
rows = [r for r in rows if ".FLAGS." not in r["name"]]
unresolved = [r["name"] for r in rows if not resolves(r["name"])]
missing = set(unresolved)
report(
    "names",
    {
        "unresolved": unresolved,
        "resolved_dirs": sum(int(r["dirs"]) for r in rows if r["name"] not in missing),
        "all_dirs": sum(int(r["dirs"]) for r in rows),
        "count": len(rows),
    },
)
