"""Graphs ("models" in Ascend's profile) and their training-trace points.

Each distinct graph a session runs -- one per fetch and feed signature, as TensorFlow builds them (runs whose
conds take other branches are the same model) -- is a model, numbered from 1 in order of first appearance
(Ascend numbers the graphs it loads the same way; the first is usually the initialization graph). A model is a
*training* model when it has backward ops.

Training-trace points, per model, fixed from its first run (Ascend's ``fp_point`` / ``bp_point`` are op
names too), among the ops that run in every iteration of that run -- with iterations_per_loop, ops computed
once before the loop (on loop-invariant inputs) would give later iterations no point:
  * FP point: the forward op that starts first -- not a backward op, not a variable update, not an input
    pipeline op (IteratorGetNext & co.);
  * BP point: the backward op that ends last (ops under a ``gradients`` name scope, or of a gradient op type);
    a model without backward ops uses its last forward op.
A name given in ``fp_point`` / ``bp_point`` is used instead when that op runs in the model; otherwise the
point is detected and a warning says so.
"""

import dataclasses
from typing import Dict, Optional, Tuple

from npu_bridge.core.profiling import op_classes
from npu_bridge.core.runtime import log


@dataclasses.dataclass
class Model:
    """One graph that ran.

    Attributes:
      model_id: 1, 2, ... in order of first appearance.
      fetched: names of the tensors its runs returned.
      training: it has backward ops.
      fp_point, bp_point: the op names of its training-trace points (None when it has no such op).
      points_source: (FP, BP) each "option" (named by fp_point / bp_point) or "detected".
      runs, iterations: how many runs and iterations it had.
      task_ids: a stable id per op name, in order of first execution.
    """

    model_id: int
    fetched: Tuple[str, ...]
    training: bool
    fp_point: Optional[str]
    bp_point: Optional[str]
    points_source: Tuple[str, str]
    runs: int = 0
    iterations: int = 0
    task_ids: Dict[str, int] = dataclasses.field(default_factory=dict)

    @property
    def name(self):
        """The Model Name column: ``graph_<id>``."""
        return f"graph_{self.model_id}"

    def task_id(self, op_name):
        """A stable task id for ``op_name`` within this model."""
        return self.task_ids.setdefault(op_name, len(self.task_ids))

    def to_json(self):
        """A dict for info.json."""
        return {
            "model_id": self.model_id,
            "model_name": self.name,
            "fetched": list(self.fetched),
            "training": self.training,
            "fp_point": self.fp_point,
            "bp_point": self.bp_point,
            "fp_point_source": self.points_source[0],
            "bp_point_source": self.points_source[1],
            "runs": self.runs,
            "iterations": self.iterations,
        }


class ModelRegistry:
    """Assigns runs to models and fixes each model's training-trace points.

    Args:
      fp_point, bp_point: op names from the profiling options; "" to detect.
    """

    def __init__(self, fp_point="", bp_point=""):
        self._requested = (fp_point, bp_point)
        self._models = {}

    @property
    def models(self):
        """The models in id order."""
        return sorted(self._models.values(), key=lambda model: model.model_id)

    def model_for(self, key, run_ops, iterations):
        """Returns the ``Model`` of a run, creating it (and fixing its points) from the run's iterations.

        Args:
          key: identifies the run's graph (hashable).
          run_ops: the run's ``RunOps``.
          iterations: the run's iterations (lists of ``OpRun``, ``step_stats.split_iterations``).
        """
        model = self._models.get(key)
        if model is None:
            model = self._new_model(len(self._models) + 1, run_ops.fetched, iterations)
            self._models[key] = model
        return model

    def _new_model(self, model_id, fetched, iterations):
        names = {op.name for op in iterations[0] if op.kind == op_classes.TASK}
        tasks = _tasks_of_every_iteration(iterations)
        forward = _first_op(tasks, lambda op: op_classes.is_forward(op.name, op.op_type))
        backward = _last_op(tasks, lambda op: op_classes.is_backward(op.name, op.op_type))
        training = backward is not None
        if backward is None:
            backward = _last_op(tasks, lambda op: op_classes.is_forward(op.name, op.op_type))
        detected = (forward.name if forward else None, backward.name if backward else None)
        points, sources = [], []
        for option, requested, found in zip(("fp_point", "bp_point"), self._requested, detected):
            if requested and requested not in names:
                log.warn_once(
                    (__name__, option, requested, model_id),
                    "profiling %s %r does not run in graph_%d; using the detected %r instead",
                    option,
                    requested,
                    model_id,
                    found,
                )
            points.append(requested if requested in names else found)
            sources.append("option" if requested in names else "detected")
        return Model(model_id, fetched, training, points[0], points[1], tuple(sources))


def _tasks_of_every_iteration(iterations):
    """The script's ops (TASK) of the first iteration that run in every iteration (all of them for a single one)."""
    tasks = [[op for op in ops if op.kind == op_classes.TASK] for ops in iterations]
    if len(tasks) == 1:
        return tasks[0]
    names = set.intersection(*({op.name for op in ops} for ops in tasks))
    return [op for op in tasks[0] if op.name in names]


def _first_op(ops, predicate):
    """The op that starts first among ``ops`` matching ``predicate``, or None."""
    return min((op for op in ops if predicate(op)), key=lambda op: op.start_ns, default=None)


def _last_op(ops, predicate):
    """The op that ends last among ``ops`` matching ``predicate``, or None."""
    return max((op for op in ops if predicate(op)), key=lambda op: op.end_ns, default=None)
