"""What a profile records about the session (or opened TF2 device) it comes from."""


def profile_context(plan, trace_level):
    """Rank, device, backend and precision of a session (or of an opened TF2 device), recorded with its profile.

    Args:
      plan: the ``SessionPlan``.
      trace_level: how its runs are traced, e.g. "SOFTWARE_TRACE".
    Returns:
      The context dict.
    """
    options = plan.options
    return {
        "rank_id": plan.world.rank_id,
        "rank_size": plan.world.rank_size,
        "device_id": plan.world.device_id,
        "backend": plan.backend,
        "precision_mode": options.get("precision_mode"),
        "precision_mode_v2": options.get("precision_mode_v2"),
        "iterations_per_loop": options.get("iterations_per_loop"),
        "trace_level": trace_level,
    }
