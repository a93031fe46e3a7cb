"""The data model of one ``NpuOptimizer`` parameter_map option."""

import dataclasses
from typing import Any, Callable, Optional

KINDS = ("b", "i", "s")
STAGES = ("init", "session", "graph", "pass")
STATUSES = ("works", "emulated", "no_effect")

STATUS_TEXT = {
    "works": "works",
    "emulated": "emulated",
    "no_effect": "accepted, no effect here",
}


@dataclasses.dataclass(frozen=True)
class OptionSpec:
    """Everything the project knows about one parameter_map key.

    Attributes:
      name: the parameter_map key, exactly as upstream spells it.
      kind: the AttrValue field upstream reads: "b" (bool), "i" (int) or "s" (bytes/str).
      stage: "init" (process-wide, fixed by the session that initializes the system), "session",
        "graph" or "pass" (TF-side partitioning options).
      default: the normalized value used when the key is absent; None means "unset".
      allowed: human-readable allowed values or syntax; used in error messages and docs.
      status: "works", "emulated" or "no_effect" (see STATUS_TEXT).
      effect: one line saying what the option does here.
      check: optional callable(value) -> normalized value; raises ValueError(detail) on a bad value.
      strict_kind: when True a value in the wrong AttrValue field is an error (upstream checks the
        kind of jit_compile and shape_generalization_mode).
      bool_texts: for a string option older upstream releases read as a bool: (text for True, text for
        False); a bool in the .b field is accepted as that text (jit_compile, a bool in r1.10-r1.11).
      checked_when: names of switch options; when not empty, ``check`` runs only if one of them is
        effectively truthy (upstream validates dump_step only with enable_dump on, and so on).
    """

    name: str
    kind: str
    stage: str
    default: Any
    allowed: str
    status: str
    effect: str
    check: Optional[Callable[[Any], Any]] = None
    strict_kind: bool = False
    bool_texts: tuple = ()
    checked_when: tuple = ()

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"{self.name}: kind {self.kind!r} not in {KINDS}")
        if self.stage not in STAGES:
            raise ValueError(f"{self.name}: stage {self.stage!r} not in {STAGES}")
        if self.status not in STATUSES:
            raise ValueError(f"{self.name}: status {self.status!r} not in {STATUSES}")
