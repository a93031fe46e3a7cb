"""Run in the TF1 mode: looks up every TensorFlow name of a names file the way user code sees it and prints the
ones that do not resolve, as JSON (one line: RESULT {"unresolved": [...], "resolved_dirs": N, "all_dirs": N}).

A name resolves when every component is an attribute of the one before, or (for modules not imported yet) an
importable module, starting from the ``tensorflow`` user code gets. Names of flags a script defines itself
(``tf.flags.FLAGS.batch_size``) are skipped: they exist only in that script.

Usage: tf1_names_worker.py NAMES_TSV
"""

import csv
import importlib
import sys

import tensorflow as tf
from collective_helpers import report


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
    return True


with open(sys.argv[1], encoding="utf-8") as f:
    rows = [r for r in csv.DictReader(f, delimiter="\t") if ".FLAGS." not in r["name"]]
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
