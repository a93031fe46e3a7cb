"""The text report of a bisection: what was compared, every run, the culprits, the files and how to apply them.

Names come from the script's graph: they are shown inert (``inert_text``).
"""

from npu_bridge.core.runtime import inert_text

_STATUS = {
    "fixed": "found: keeping these in float32 brings the metric within tolerance of the reference",
    "partial": "partly found: the search stopped before the metric came back",
    "clean": "nothing to find: the script's own precision is within tolerance of the reference",
    "unexplained": "not explained by op precision: keeping every op in float32 is still off",
}


def render(outcome, command, settings):
    """Returns the report text.

    Args:
      outcome: the ``bisection.Outcome``.
      command: the command's argument list.
      settings: the ``bisection.Settings``.
    """
    v = inert_text.value
    lines = [
        "npu-debug bisect report",
        f"command: {v(' '.join(command))}",
        f"metric: last match of {v(settings.pattern.pattern)}; tolerance {settings.atol:g} + "
        f"{settings.rtol:g} * |reference|",
        f"reference (must_keep_origin_dtype): {outcome.reference:.9g}",
        f"the script's own precision: {outcome.baseline:.9g}",
        f"candidates: {len(outcome.ops)} ops of {len({op.type for op in outcome.ops})} types (search by {settings.by})",
        f"result: {_STATUS.get(outcome.status, outcome.status)}",
        "",
    ]
    if outcome.culprit_types:
        lines.append("culprit op types: " + ", ".join(v(k.target) for k in outcome.culprit_types))
    if outcome.culprit_names:
        types = {op.name: op.type for op in outcome.ops}
        lines.append("culprit ops:")
        lines += [f"  {v(k.target)} ({v(types.get(k.target, '?'))})" for k in outcome.culprit_names]
    lines += outcome.notes
    lines += ["", f"runs ({len(outcome.runs)}, at most {outcome.bound} announced):"]
    for run in outcome.runs:
        verdict = "within" if run.within else "off"
        lines.append(f"  {run.number:3d}  {run.metric:<14.9g} {verdict:<6} {v(run.label)}  [{run.seconds:.1f} s]")
    if outcome.files:
        lines += ["", "files:"]
        lines += [f"  {what}: {v(path)}" for what, path in outcome.files.items()]
        lines += ["", "apply them in the script's NpuOptimizer parameter_map (on the NPU too), for example:"]
        for what, path in outcome.files.items():
            lines.append(f'  custom_op.parameter_map["{what}"].s = tf.compat.as_bytes("{v(path)}")')
        first, path = next(iter(outcome.files.items()))
        lines.append(
            f'or here without editing it: NPU_BRIDGE_OPTIONS=\'{{"{first}": "{v(path)}"}}\' {v(" ".join(command))}'
        )
    return "\n".join(lines) + "\n"
