"""``DumpConfig``: dump settings for ``NPURunConfig(dump_config=...)``."""

from npu_bridge.core.options import parse as option_parse


class DumpConfig:
    """Dump, overflow-detection and statistics settings, as upstream's ``DumpConfig``.

    Args:
      enable_dump: dump op inputs/outputs (needs ``dump_path``).
      dump_path: an existing directory with read and write permission.
      dump_step: steps to dump, e.g. "0|5|10-20"; None dumps every step.
      dump_mode: "input", "output" or "all".
      enable_dump_debug: detect overflows (needs ``dump_path``).
      dump_debug_mode: "aicore_overflow", "atomic_overflow" or "all".
      dump_data: "tensor" or "stats".
      dump_layer: space-separated op names to dump; None dumps every op.
    Raises:
      NpuOptionError: a value is invalid (checked now, as a session would check it, except whether
        ``dump_path`` exists: the session the config reaches checks that when it is created, as upstream does).
    """

    def __init__(
        self,
        enable_dump=False,
        dump_path=None,
        dump_step=None,
        dump_mode="output",
        enable_dump_debug=False,
        dump_debug_mode="all",
        dump_data="tensor",
        dump_layer=None,
    ):
        self._enable_dump = enable_dump
        self._dump_path = dump_path
        self._dump_step = dump_step
        self._dump_mode = dump_mode
        self._enable_dump_debug = enable_dump_debug
        self._dump_debug_mode = dump_debug_mode
        self._dump_data = dump_data
        self._dump_layer = dump_layer
        option_parse.parse_values(self.parameter_map_values(), source="DumpConfig", paths_later=True)

    def parameter_map_values(self):
        """Returns {parameter_map option name: value} for what this config sets, as NPUEstimator writes it.

        enable_dump and enable_dump_debug are always present; the others when not None. As upstream,
        dump_debug_mode is only written when dump_mode is not None.
        """
        values = {"enable_dump": self._enable_dump, "enable_dump_debug": self._enable_dump_debug}
        optional = {
            "dump_path": self._dump_path,
            "dump_step": self._dump_step,
            "dump_mode": self._dump_mode,
            "dump_data": self._dump_data,
            "dump_layer": self._dump_layer,
        }
        if self._dump_mode is not None:
            optional["dump_debug_mode"] = self._dump_debug_mode
        values.update({name: value for name, value in optional.items() if value is not None})
        return values

    def __repr__(self):
        settings = ", ".join(f"{name}={value!r}" for name, value in self.parameter_map_values().items())
        return f"DumpConfig({settings})"
