"""The pass-parameter contract, declared once: every key Python writes for the C++ NpuOptimizer passes, the fields of
its records and the node attributes Python stamps on the user's ops.

``pass_contract.py`` builds ``PassPlan``, ``KEYS`` and the encoders from these tables; ``contract_header.py`` renders
``optimizers/pass_contract_keys.h`` from them at build time (``setup.py``), and a test fails when the checked-in
header is stale. This file is plain data and imports nothing, so the build can read it without importing npu_bridge.

Kinds name the AttrValue field that holds a value: b, i, s, list.i, list.s, list.func (a list of NameAttrList
records). A default applies only when a key is absent (bridged sessions write every key); list keys default to
empty.
"""

KEY_PREFIX = "_npu_"  # every key starts with it; C++ rejects any other key with it

# A str is a section heading (a comment in the header); a tuple is one key:
# (PassPlan field, parameter_map key, kind, default, what it means[, option]). A key with an option carries that
# option's validated value unchanged: every session's plan is filled from it (pass_contract.plan_from_options), so
# an option that reaches a pass as it is needs its row in the option table, a row here and the pass that reads it.
KEYS = (
    (
        "validated",
        "_npu_bridge_validated",
        "b",
        False,
        "The session bridge validated and normalized the parameter_map.",
    ),
    (
        "init_token",
        "_npu_bridge_init_token",
        "s",
        "",
        "Names the session's init-stage options, which only Python reads (runtime/system.py keeps them by token); "
        'NPUInit or the first graph run records it for the process. "": the defaults.',
    ),
    (
        "function_graphs",
        "_npu_function_graphs",
        "b",
        False,
        "The plan is for TF2 function graphs (npu_device): the dump, overflow check and exception capture passes "
        "instrument function bodies, the graphs TF2 runs, instead of leaving them to the graph that calls them.",
    ),
    "Data dump (dump pass). The root {dump_path}/{time}/{device id} also holds the overflow records.",
    ("dump_enabled", "_npu_dump_enabled", "b", False, "Dump op inputs / outputs (enable_dump)."),
    ("dump_root", "_npu_dump_root", "s", "", "{dump_path}/{time}/{device id}; dumps and overflow records go below it."),
    (
        "dump_base",
        "_npu_dump_base",
        "s",
        "",
        "dump_path as the user gave it: the dump writer creates the directories below it, or refuses those that are "
        "symlinks or another user's.",
    ),
    ("dump_inputs", "_npu_dump_inputs", "b", False, "Dump op inputs (dump_mode input / all)."),
    ("dump_outputs", "_npu_dump_outputs", "b", True, "Dump op outputs (dump_mode output / all)."),
    ("dump_stats", "_npu_dump_stats", "b", False, "statistic.csv instead of tensors (dump_data=stats)."),
    ("dump_golden", "_npu_dump_golden", "b", False, "Golden .npy files next to dumped outputs."),
    (
        "dump_steps",
        "_npu_dump_steps",
        "list.i",
        (),
        "Step ranges to dump (dump_step), as first, last, first, last, ...; empty: every step.",
    ),
    ("dump_layers", "_npu_dump_layers", "list.s", (), "Op names to dump (dump_layer); empty: every op."),
    "Overflow detection (overflow check pass).",
    (
        "overflow_check",
        "_npu_overflow_check",
        "b",
        False,
        "Check and report every floating-point output (enable_dump_debug).",
    ),
    (
        "overflow_fp16_saturation",
        "_npu_overflow_fp16_saturation",
        "b",
        False,
        "Overflow reports count fp16 saturation (the simulated Ascend backend).",
    ),
    "Exception dump (exception capture pass).",
    (
        "exception_dump",
        "_npu_exception_dump",
        "b",
        False,
        "Capture the inputs of ops that fail (enable_exception_dump=1).",
    ),
    ("exception_dir", "_npu_exception_dir", "s", "", "Where exception dumps go."),
    (
        "exception_base",
        "_npu_exception_base",
        "s",
        "",
        "The base the exception directory is {base}/extra-info/data-dump/{device id} of, as dump_base.",
    ),
    ("session_id", "_npu_session_id", "i", 0, "Names the session's exception-capture slots."),
    "Precision (impl_mode, precision and fp16_saturation passes).",
    (
        "precision_rewrite",
        "_npu_precision_rewrite",
        "b",
        False,
        "Run the precision pass (its rules may be empty: kept ops in a mixed region).",
    ),
    ("precision_rules", "_npu_precision_rules", "list.func", (), "The precision rules (records below)."),
    (
        "mixed_dtype",
        "_npu_precision_mixed_dtype",
        "s",
        "",
        'A mixed mode\'s reduced precision, "float16" or "bfloat16"; "" outside mixed modes.',
    ),
    (
        "mixed_convert",
        "_npu_precision_mixed_convert",
        "b",
        False,
        "The mixed region really computes in mixed_dtype (GPU); else it is emulated by rounding.",
    ),
    ("mixed_white", "_npu_precision_mixed_white", "list.s", (), "The mixed-precision white list (op types)."),
    ("mixed_black", "_npu_precision_mixed_black", "list.s", (), "The mixed-precision black list (op types)."),
    (
        "ascend_fp16",
        "_npu_precision_ascend_fp16",
        "b",
        False,
        "The simulated Ascend backend's saturating fp16 conversions.",
    ),
    (
        "impl_modes",
        "_npu_precision_impl_modes",
        "list.func",
        (),
        "The implementation modes of the simulated Ascend backend (records below).",
    ),
    "Loops and collectives.",
    (
        "iterations_per_loop",
        "_npu_iterations_per_loop",
        "i",
        1,
        "Training steps per run of an IterationOp.",
        "iterations_per_loop",
    ),
    (
        "collective_timeout",
        "_npu_collective_timeout",
        "i",
        0,
        "Seconds every collective of the session may wait; 0 leaves the ops' own timeout.",
    ),
    (
        "collective_run_bound",
        "_npu_collective_run_bound",
        "b",
        False,
        "The session's run hook bounds every run with collectives by the timeout, so the collectives outside loops "
        "drop their own (whose timer TensorFlow keeps alive per execution).",
    ),
)

# The records of list.func keys: key -> (NameAttrList name, C++ name stem, fields). A field is (name, kind, what it
# means) with kind s, list.i or list.type; every record has every field.
RECORDS = {
    "_npu_precision_rules": (
        "precision_rule",
        "Rule",
        (
            ("selector", "s", 'How the rule selects ops: "type" (an op type, "*" for every computing op) or "name".'),
            ("target", "s", "The op type, \"*\" or the node name; name wins over type, type over '*'."),
            ("input_slots", "list.i", "Input slots it rounds or keeps (-1: every float32 slot)."),
            ("input_dtypes", "list.type", "Per input slot: float16 / bfloat16 (round through it) or float32 (keep)."),
            ("output_slots", "list.i", "Output slots, as input_slots."),
            ("output_dtypes", "list.type", "Per output slot, as input_dtypes."),
        ),
    ),
    "_npu_precision_impl_modes": (
        "impl_mode",
        "ImplMode",
        (
            ("selector", "s", "Selects ops as a precision rule does."),
            ("target", "s", 'The op type, "*" or the node name.'),
            ("mode", "s", '"high_precision" or "high_performance".'),
        ),
    ),
}

# Node attributes Python stamps on ops of the user's graph for the passes: (Python constant, attribute, meaning).
NODE_ATTRS = (
    ("KEEP_DTYPE_ATTR", "_keep_dtype", "i or b != 0: the precision passes leave the op's dtypes."),
    ("ITERATION_OP_ATTR", "_npu_iteration_op", "b: the IterationOp; a run fetching it performs iterations_per_loop."),
    ("COLLECTIVE_GROUP_ATTR", "_npu_hccl_group", "s: a collective npu_bridge built (the group name)."),
    ("IMPL_OP_ATTR", "_npu_impl_op", "s: the Ascend op a composed op implements (a LayerNorm's Rsqrt)."),
    ("IMPL_NAME_ATTR", "_npu_impl_name", "s: the name the user gave that op."),
    ("COMPOSED_OP_ATTR", "_npu_op_type", "s: a function call that computes one Ascend op (core/compute/composite.py)."),
    (
        "COMPOSED_OUTPUTS_ATTR",
        "_npu_op_outputs",
        "i: how many of that call's outputs are the op's (TensorFlow's gradient appends intermediates).",
    ),
)
