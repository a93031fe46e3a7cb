"""``ProfilingConfig``: the profiling part of ``NPURunConfig`` (upstream's current and legacy signatures)."""

from npu_bridge.core.options import parse as option_parse


class ProfilingConfig:
    """Profiling options for ``NPURunConfig(profiling_config=...)``.

    Current form: ``ProfilingConfig(enable_profiling=True, profiling_options='{"output": "./prof", ...}')``.
    Legacy form: ``ProfilingConfig(enable_profiling=True, enable_options=["training_trace", "task_trace"],
    fp_point="conv1/Conv2D", bp_point="gradients/...")``; a list given as ``profiling_options`` is read as
    ``enable_options``.

    Raises:
      NpuOptionError: a bad value (checked now by the option table, not at the first training step; whether a path
        it names exists is checked by the session it reaches, as upstream does).
    """

    def __init__(
        self, enable_profiling=False, profiling_options=None, enable_options=None, fp_point=None, bp_point=None
    ):
        if isinstance(profiling_options, (list, tuple)):
            profiling_options, enable_options = None, profiling_options
        if enable_options is not None:
            profiling_options = ":".join(enable_options)
        self._enable_profiling = enable_profiling
        self._profiling_options = profiling_options
        self._fp_point = fp_point
        self._bp_point = bp_point
        option_parse.parse_values(self.parameter_map_values(), "ProfilingConfig", paths_later=True)

    enable_profiling = property(lambda self: self._enable_profiling)
    profiling_options = property(lambda self: self._profiling_options)

    def parameter_map_values(self):
        """Returns {parameter_map key: value}: profiling_mode, and when enabled profiling_options (None -> "")
        and the legacy fp_point / bp_point when given."""
        values = {"profiling_mode": self._enable_profiling}
        if self._enable_profiling:
            values["profiling_options"] = self._profiling_options or ""
            for key, value in (("fp_point", self._fp_point), ("bp_point", self._bp_point)):
                if value is not None:
                    values[key] = value
        return values
