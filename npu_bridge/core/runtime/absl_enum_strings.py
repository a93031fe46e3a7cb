"""absl-py of the scripts' era for ``DEFINE_enum``: a string as ``enum_values``, which absl-py 0.x took.

TensorFlow's official models (and the 16 model-zoo directories built on their flag helpers: the ResNet and BERT
families, NCF, Transformer, DeepSpeech) define ``--fp16_implementation`` with ``enum_values=("keras',
'graph_rewrite")``: one string, where a tuple was meant. absl-py 0.x kept that string as the enum and checked a
value by ``in``, so a value that is part of the string ("keras", "graph_rewrite") was accepted; absl-py 1.x raises
"enum_values cannot be a str" while the script defines its flags. Both modes give ``EnumParser`` the 0.x behaviour
for a string (the same parse, the same help text as then) and log once, naming the string; a list, a tuple or any
other iterable goes through absl-py unchanged. Nothing that worked changes: only the error becomes 0.x's result.
"""

from npu_bridge.core.runtime import after_import, log

_MODULE = "absl.flags._argument_parser"


def install():
    """From the moment absl's flags are imported (now, if they are), a string is allowed as ``enum_values``."""
    after_import.when_imported(_MODULE, _allow_strings)


def _allow_strings(module):
    parser = module.EnumParser
    if getattr(parser.__init__, "_npu_bridge_allows_strings", False):
        return
    original = parser.__init__

    def accepting_strings(self, enum_values, case_sensitive=True):
        if not isinstance(enum_values, str) or not enum_values:
            original(self, enum_values, case_sensitive)
            return
        original(self, [enum_values], case_sensitive)
        self.enum_values = enum_values  # as absl-py 0.x kept it: a value is checked with `in` on the string
        log.warn_once(
            f"absl-enum-str:{enum_values}",
            "DEFINE_enum got the string %r as enum_values (a tuple was meant?): absl-py 0.x, which the script was "
            "written for, took it and accepts a value that is part of it, and so does npu_bridge (absl-py 1.x "
            "refuses it)",
            enum_values,
        )

    accepting_strings._npu_bridge_allows_strings = True
    accepting_strings.__doc__ = original.__doc__
    parser.__init__ = accepting_strings
