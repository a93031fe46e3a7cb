"""Finds the model directories of an Ascend/ModelZoo-TensorFlow checkout and draws a seeded sample of them."""

import os
import random

# A model directory is one whose test/ folder holds a one-device training script; these are tried in order.
ENTRY_SCRIPTS = ("train_performance_1p.sh", "train_full_1p.sh")
# Where the zoo keeps TF1 and TF2 training models (ACL_TensorFlow holds inference models only).
KIND_ROOTS = {"tf1": "TensorFlow", "tf2": "TensorFlow2"}


class Entry:
    """One model directory to run: its path relative to the checkout, tf1 or tf2, and its entry script."""

    def __init__(self, relative_dir, kind, script):
        self.relative_dir = relative_dir
        self.kind = kind
        self.script = script

    @property
    def name(self):
        return os.path.basename(self.relative_dir)

    def as_dict(self):
        return {"dir": self.relative_dir, "kind": self.kind, "script": self.script}


def model_dirs(checkout, kind):
    """Every model directory of one kind in the checkout, sorted by path.

    Raises:
      FileNotFoundError: the checkout has no folder for that kind (not a ModelZoo-TensorFlow checkout).
    """
    root = os.path.join(checkout, KIND_ROOTS[kind])
    if not os.path.isdir(root):
        raise FileNotFoundError(
            f"--zoo {checkout!r} has no {KIND_ROOTS[kind]}/ folder: pass a checkout of Ascend/ModelZoo-TensorFlow"
        )
    found = []
    for directory, subdirs, files in os.walk(root):
        subdirs.sort()
        if os.path.basename(directory) != "test":
            continue
        script = next((name for name in ENTRY_SCRIPTS if name in files), None)
        if script is not None:
            found.append(Entry(os.path.relpath(os.path.dirname(directory), checkout), kind, script))
    return sorted(found, key=lambda entry: entry.relative_dir)


def draw(checkout, seed, counts):
    """A seeded random sample: {kind: how many} -> [Entry], the same for the same checkout and seed."""
    rng = random.Random(seed)
    drawn = []
    for kind in sorted(counts):
        if not counts[kind]:
            continue  # a checkout may lack a kind nobody asked for
        population = model_dirs(checkout, kind)
        drawn.extend(rng.sample(population, min(counts[kind], len(population))))
    return drawn
