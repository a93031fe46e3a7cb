"""The option table: one ``OptionSpec`` per ``NpuOptimizer`` parameter_map key.

``OPTIONS`` is the single source of truth for names, kinds, stages, defaults, allowed values, validation and
what each option does in this project. It follows upstream's grouping (basic, precision, profiling, dump and
debug, distributed, memory, compilation and dynamic shape, tuning and deployment) and adds our own
``device_target``.

Defaults are upstream's adapter defaults as normalized Python values. None means upstream leaves the option
unset, including upstream's "" and -1 "not configured" sentinels, so that None is the only way to say unset.
Stages follow upstream's buckets: I -> init, S -> session, I+S -> init, G -> graph, P -> pass. The two keys
upstream writes but never reads (enable_reduce_precision, min_group_size) are "session".

One file over 500 lines on purpose: the table is the single source of every option, read and reviewed as one list
in upstream's order.
"""

import difflib
import itertools

from npu_bridge.core.collectives import settings
from npu_bridge.core.device.device_target import DEVICE_TARGETS
from npu_bridge.core.options import checks
from npu_bridge.core.options.spec import OptionSpec
from npu_bridge.core.precision import customize_dtypes, impl_mode, mixlist, modes

PRECISION_MODES = (
    "force_fp32",
    "allow_fp32_to_fp16",
    "force_fp16",
    "must_keep_origin_dtype",
    "allow_mix_precision",
    "cube_fp16in_fp32out",
    "allow_mix_precision_fp16",
    "allow_mix_precision_bf16",
    "allow_fp32_to_bf16",
)
PRECISION_MODES_V2 = (
    "fp16",
    "origin",
    "cube_fp16in_fp32out",
    "mixed_float16",
    "mixed_bfloat16",
    "cube_hif8",
    "mixed_hif8",
)
MIXED_PRECISION_MODES = ("allow_mix_precision", "allow_mix_precision_fp16", "allow_mix_precision_bf16")
MIXED_PRECISION_MODES_V2 = ("mixed_float16", "mixed_bfloat16", "mixed_hif8")
IMPL_MODES = ("high_precision", "high_performance", "high_precision_for_all", "high_performance_for_all")
MAX_INPUT_FUSION_SIZE = 32 * 1024 * 1024
MAX_HCCL_TIMEOUT = settings.MAX_SECONDS  # seconds, HCCL_EXEC_TIMEOUT's cap

WORKS, EMULATED, NO_EFFECT = "works", "emulated", "no_effect"

_RW_DIR = "existing directory with read and write permission"
_FREE_TEXT = {"b": "true / false", "i": "integer", "s": "string"}


# A byte count as scripts write it: digits, or a product of them ("21*1024*1024*1024", with or without spaces).
BYTE_COUNT = "[0-9]+( *[*] *[0-9]+)*"
BYTE_COUNT_TEXT = "a byte count: decimal digits, or a product such as 16 * 1024 * 1024 * 1024"


def _opt(name, kind, stage, default, status, effect, allowed=None, **extra):
    """Builds an OptionSpec; ``allowed`` defaults to a plain description of the kind."""
    return OptionSpec(
        name=name,
        kind=kind,
        stage=stage,
        default=default,
        allowed=allowed or _FREE_TEXT[kind],
        status=status,
        effect=effect,
        **extra,
    )


def _choice(*values, detail=None):
    """Returns ``allowed`` text and check of an allow-list option, to pass to ``_opt`` as ``**kwargs``."""
    return {"allowed": " / ".join(str(v) for v in values), "check": checks.one_of(values, detail)}


_BASIC = (
    _opt(
        "use_off_line",
        "b",
        "pass",
        True,
        WORKS,
        "True bridges the session to npu_bridge; False is accepted and logged, since everything runs on the "
        "host here anyway.",
        check=checks.note_when(
            False,
            "use_off_line=False: npu_bridge runs every graph on the host (CPU/GPU) "
            "either way; the session is still bridged",
        ),
    ),
    _opt(
        "graph_run_mode",
        "i",
        "init",
        1,
        WORKS,
        "Validated and recorded: 0 online inference, 1 training.",
        allowed="0 (online inference) / 1 (training)",
        check=checks.one_of((0, 1), "graph_run_mode value must be 0 or 1"),
    ),
    _opt(
        "session_device_id",
        "i",
        "session",
        None,
        WORKS,
        "Chooses this session's device id (wins over ASCEND_DEVICE_ID and DEVICE_ID).",
        allowed="integer >= 0",
        check=checks.at_least(0, "session_device_id must be nonnegative integer."),
    ),
    _opt(
        "deterministic",
        "i",
        "init",
        0,
        EMULATED,
        "1 turns on TensorFlow op determinism (mapped by the session bridge).",
        allowed="0 (off) / 1 (deterministic)",
        check=checks.one_of((0, 1), "deterministic should be 0 or 1"),
    ),
    _opt(
        "iterations_per_loop",
        "i",
        "pass",
        1,
        WORKS,
        "A sess.run of the IterationOp (util.set_iteration_per_loop, NPURunConfig) performs N training steps "
        "in a TensorFlow while loop the NpuOptimizer pass builds: N batches, global step +N, last step's fetches.",
        allowed="integer >= 1",
        check=checks.at_least(1, "iterations_per_loop must be positive"),
    ),
    _opt(
        "enable_data_pre_proc",
        "b",
        "pass",
        False,
        NO_EFFECT,
        "Offloads the dataset to the device; the input pipeline always runs in TensorFlow here.",
    ),
    _opt(
        "mix_compile_mode",
        "b",
        "pass",
        False,
        NO_EFFECT,
        "Splits graphs between host and device; TensorFlow runs every op here, so there is nothing to split.",
    ),
    _opt(
        "job",
        "s",
        "pass",
        "localhost",
        WORKS,
        "Parameter-server role of this process; recorded.",
        allowed="TF_CONFIG task type, e.g. localhost / ps / worker",
    ),
    _opt("task_index", "i", "pass", 0, WORKS, "Index of this process in its parameter-server role; recorded."),
    _opt(
        "lower_functional_ops",
        "b",
        "pass",
        False,
        NO_EFFECT,
        "Lowers If/While before device partitioning; TensorFlow runs control flow itself here.",
    ),
    _opt(
        "variable_placement",
        "s",
        "pass",
        "Device",
        NO_EFFECT,
        "Keeps variables on the device or the host; TensorFlow places variables itself here.",
        **_choice("Device", "Host", detail="variable placement should be one of the list:[Host, Device]"),
    ),
    _opt(
        "frozen_variable",
        "b",
        "pass",
        False,
        NO_EFFECT,
        "Inference-only folding of variables into constants by Ascend's graph engine.",
    ),
    _opt(
        "graph_max_parallel_model_num",
        "i",
        "pass",
        1,
        NO_EFFECT,
        "Parallel graph-engine instances for inference; TensorFlow schedules ops itself here.",
        allowed="integer >= 1",
        check=checks.at_least(1, "graph_max_parallel_model_num should not be less than 1"),
    ),
    _opt(
        "device_type",
        "s",
        "init",
        "default_device_type",
        NO_EFFECT,
        "Device type for Ascend's graph engine; device_target chooses the backend here.",
    ),
    _opt(
        "soc_config",
        "s",
        "init",
        None,
        NO_EFFECT,
        "Overrides the Ascend SoC version; there is no SoC here.",
        allowed="SoC version name",
    ),
    _opt(
        "device_target",
        "s",
        "init",
        "auto",
        WORKS,
        "npu_bridge extension (upstream ignores unknown keys): the backend that computes. auto = gpu when "
        "TensorFlow sees one, else cpu; ascend = the simulated Ascend backend (CPU kernels with Ascend's default "
        "precision, fp16 saturation, float-status register and implementation modes). Also "
        "NPU_BRIDGE_DEVICE_TARGET.",
        **_choice(*DEVICE_TARGETS),
    ),
)

_PRECISION = (
    _opt(
        "precision_mode",
        "s",
        "init",
        None,
        EMULATED,
        "Ascend precision: cube ops (MatMul, Conv*, ...) round inputs (and for allow_fp32_to_fp16 outputs) "
        "through fp16 with fp32 accumulation; mixed modes compute the white-listed ops and the gray ops they feed "
        "in fp16 / bf16 (npu_bridge's precision pass with Ascend's white / black / gray lists, which modify_mixlist "
        "edits; never TensorFlow's automatic mixed precision): rounded through fp16 / bf16 on cpu and the simulated "
        "Ascend backend, really converted on gpu; unset = "
        "allow_fp32_to_fp16 on the simulated Ascend backend, unchanged on cpu / gpu.",
        allowed=" / ".join(PRECISION_MODES),
        check=modes.mode_check(
            PRECISION_MODES, "precision_mode should be one of the list:[" + ", ".join(PRECISION_MODES) + "]"
        ),
    ),
    _opt(
        "precision_mode_v2",
        "s",
        "init",
        None,
        EMULATED,
        "Newer spelling of precision_mode (not together with it), with the same effects.",
        allowed=" / ".join(PRECISION_MODES_V2) + " (cube_hif8 / mixed_hif8 need Ascend 950 and are rejected)",
        check=modes.mode_check(
            PRECISION_MODES_V2, "precision_mode_v2 should be one of the list:[" + ", ".join(PRECISION_MODES_V2) + "]"
        ),
    ),
    _opt(
        "modify_mixlist",
        "s",
        "init",
        None,
        EMULATED,
        "Edits the mixed-precision white / black / gray lists of the precision pass (docs/mixed_precision.md).",
        allowed="path to a JSON file with black-list / white-list / gray-list to-add / to-remove; needs "
        "precision_mode allow_mix_precision* or precision_mode_v2 mixed_*",
        check=checks.parsed_file(mixlist.load),
    ),
    _opt(
        "customize_dtypes",
        "s",
        "init",
        None,
        EMULATED,
        "Per-op input / output dtypes (float16 / bfloat16 round through that type, float32 keeps float32); "
        "ignored when the precision mode keeps the graph's dtypes.",
        allowed="path to a file of OpName::InputDtype:...,OutputDtype:... and "
        "OpType::Type:InputDtype:...,OutputDtype:... lines",
        check=checks.parsed_file(customize_dtypes.load),
    ),
    _opt(
        "op_precision_mode",
        "s",
        "init",
        None,
        EMULATED,
        "Per-op implementation mode by op type or node name (wins over op_select_implmode); high_precision / "
        "high_performance are reproduced on the simulated Ascend backend.",
        allowed="path to an .ini file with [ByOpType] / [ByNodeName] sections of name=mode lines",
        check=checks.parsed_file(impl_mode.load_ini),
    ),
    _opt(
        "op_select_implmode",
        "s",
        "init",
        None,
        EMULATED,
        "high_precision / high_performance implementations; on the simulated Ascend backend LayerNorm and float16 "
        "SoftmaxCrossEntropyWithLogits differ as on Ascend (default high_performance); accepted and reported "
        "elsewhere.",
        **_choice(*IMPL_MODES, detail="op select impl mode should be one of the list:[" + ", ".join(IMPL_MODES) + "]"),
    ),
    _opt(
        "optypelist_for_implmode",
        "s",
        "init",
        None,
        EMULATED,
        "Limits op_select_implmode to these op types (the others keep the default, high_performance).",
        allowed="comma-separated op types, e.g. LayerNorm,SoftmaxCrossEntropyWithLogits; needs op_select_implmode",
        check=checks.name_list(
            "optypelist_for_implmode must be op types separated by commas, e.g. 'Pooling,SoftmaxV2'"
        ),
    ),
    _opt(
        "enable_reduce_precision",
        "b",
        "session",
        None,
        NO_EFFECT,
        "Written by NPUEstimator but read by nothing, upstream included.",
    ),
    _opt(
        "experimental_accelerate_train_mode",
        "s",
        "pass",
        None,
        NO_EFFECT,
        "Graph-engine low-precision prefix of training; not reproduced here.",
        allowed="mode|step|ratio or mode|loss|ratio, e.g. fast|step|0.9",
        check=checks.matches(
            r"[A-Za-z0-9_]+\|(step|loss)\|[0-9]+(\.[0-9]+)?", "expected mode|step|ratio or mode|loss|ratio"
        ),
    ),
)

_PROFILING = (
    _opt(
        "profiling_mode",
        "b",
        "init",
        False,
        EMULATED,
        "Profiles every run with TensorFlow's step stats into Ascend-format summaries (op_summary, "
        "op_statistic, step_trace), a trace-viewer timeline and an HTML report (docs/profiling.md); "
        "PROFILING_MODE when unset.",
    ),
    _opt(
        "profiling_options",
        "s",
        "init",
        None,
        EMULATED,
        "What the profile collects and where it goes; empty means upstream's default options, unset means "
        "PROFILING_OPTIONS. NPU hardware counters (aic_metrics, l2, ...) are accepted, no effect here.",
        allowed='JSON object string, e.g. {"output":"./prof","training_trace":"on","task_trace":"on"} (keys '
        "output, storage_limit, training_trace, task_trace/task_time, hccl, aicpu, fp_point, bp_point, "
        "aic_metrics, l2, msproftx, ge_api, runtime_api, sys_*/host_sys* sampling), or the legacy colon "
        "list of training_trace / task_trace / op_trace (op_trace alone)",
        check=checks.profiling_options,
        checked_when=("profiling_mode",),
    ),
    _opt(
        "fp_point",
        "s",
        "init",
        None,
        WORKS,
        "Legacy profiling key: the first forward op of the training trace; empty detects it.",
        allowed="op name",
    ),
    _opt(
        "bp_point",
        "s",
        "init",
        None,
        WORKS,
        "Legacy profiling key: the last backward op of the training trace; empty detects it.",
        allowed="op name",
    ),
)

_DUMP_DEBUG = (
    _opt(
        "enable_dump",
        "b",
        "session",
        False,
        WORKS,
        "Dumps op inputs/outputs in Ascend's dump layout and format, with golden .npy files (needs dump_path).",
    ),
    _opt(
        "dump_path",
        "s",
        "session",
        None,
        WORKS,
        "Directory of dumps and overflow records: {dump_path}/{time}/{device id}/{model}/{model id}/{step}.",
        allowed=_RW_DIR + "; required by enable_dump and enable_dump_debug",
        check=checks.existing_rw_dir,
        checked_when=("enable_dump", "enable_dump_debug"),
    ),
    _opt(
        "dump_step",
        "s",
        "session",
        None,
        WORKS,
        "Steps to dump (a step is one Session.run of a graph, or one loop iteration of an iterations_per_loop "
        "run, counted per graph from 0); unset dumps every step.",
        allowed="N or A-B (A < B) joined by |, at most 100 sets, e.g. 0|5|10-20",
        check=checks.dump_step,
        checked_when=("enable_dump",),
    ),
    _opt(
        "dump_mode",
        "s",
        "session",
        "output",
        WORKS,
        "Dumps op inputs, outputs or both.",
        checked_when=("enable_dump",),
        **_choice("input", "output", "all", detail="dump mode should be one of the list:[input, output, all]"),
    ),
    _opt(
        "enable_dump_debug",
        "b",
        "session",
        False,
        EMULATED,
        "Checks every floating-point op output for inf/NaN (and fp16 saturation on the simulated Ascend "
        "backend) in every step; each overflow gives an Opdebug record, a dump of the op and a line in "
        "overflow_report.txt (needs dump_path).",
    ),
    _opt(
        "dump_debug_mode",
        "s",
        "session",
        "all",
        EMULATED,
        "Accepted; every mode checks every floating-point op output here (on Ascend it selects the hardware "
        "units that report).",
        checked_when=("enable_dump_debug",),
        **_choice(
            "aicore_overflow",
            "atomic_overflow",
            "all",
            detail="dump debug mode should be one of the list:[aicore_overflow, atomic_overflow, all]",
        ),
    ),
    _opt(
        "dump_data",
        "s",
        "init",
        "tensor",
        WORKS,
        "tensor dumps tensors; stats writes statistic.csv (max, min, mean, counts) per step instead.",
        **_choice("tensor", "stats", detail="dump_data should be 'tensor' or 'stats'."),
    ),
    _opt(
        "dump_layer",
        "s",
        "session",
        None,
        WORKS,
        "Dumps only these ops (and their Placeholder inputs); unset dumps every op.",
        allowed="space-separated op names",
    ),
    _opt(
        "enable_exception_dump",
        "i",
        "init",
        2,
        EMULATED,
        "1: when an op fails, its inputs are dumped and the error names the file (costs two small graph "
        "nodes per op); 2 (lite, the default) and 0 leave TensorFlow's error as it is.",
        allowed="0 (off) / 1 (full) / 2 (lite)",
        check=checks.one_of((0, 1, 2), "enable_exception_dump should be one of 0, 1 and 2."),
    ),
    _opt(
        "quant_dumpable",
        "s",
        "session",
        None,
        NO_EFFECT,
        "Dumps pre-quantization tensors of AMCT-quantized models; there is no quantized model here.",
        **_choice("0", "1", detail="quant_dumpable should be '0' or '1'"),
    ),
    _opt(
        "op_debug_level",
        "i",
        "init",
        None,
        NO_EFFECT,
        "Keeps op compiler files in kernel_meta; no device kernels are compiled here.",
        allowed="0 .. 4",
        check=checks.between(0, 4, "op_debug_level should be in [0,4]"),
    ),
    _opt(
        "op_debug_config",
        "s",
        "init",
        None,
        NO_EFFECT,
        "Debug options of Ascend's op compiler; no device kernels are compiled here.",
        allowed="path to an existing .cfg file",
        check=checks.existing_file,
    ),
    _opt(
        "debug_dir",
        "s",
        "init",
        None,
        NO_EFFECT,
        "Where Ascend's op compiler writes debug files; no device kernels are compiled here.",
        allowed="directory path",
    ),
    _opt(
        "export_compile_stat",
        "i",
        "init",
        1,
        NO_EFFECT,
        "Writes the graph engine's fusion_result.json; no graph-engine fusion happens here.",
        allowed="0 (off) / 1 (at exit) / 2 (after compiling)",
        check=checks.one_of((0, 1, 2)),
    ),
    _opt(
        "fusion_switch_file",
        "s",
        "init",
        None,
        NO_EFFECT,
        "Turns graph-engine fusion passes on or off; no graph-engine fusion happens here.",
        allowed='path to an existing JSON file {"Switch": {"GraphFusion": {pass: "on" / "off"}, "UBFusion": {...}}}',
        check=checks.fusion_switch_file,
    ),
    _opt(
        "enable_scope_fusion_passes",
        "s",
        "init",
        None,
        NO_EFFECT,
        "Enables extra graph-engine scope fusion passes; no graph-engine fusion happens here.",
        allowed="comma-separated pass names",
        check=checks.name_list("enable_scope_fusion_passes must be pass names separated by commas"),
    ),
    _opt(
        "graph_exec_timeout",
        "i",
        "init",
        600000,
        NO_EFFECT,
        "Graph-engine execution timeout; TensorFlow runs the graph here.",
        allowed="milliseconds",
    ),
)

_DISTRIBUTED = (
    _opt(
        "hcom_parallel",
        "b",
        "session",
        True,
        NO_EFFECT,
        "Overlaps allreduce with compute on the device; collectives here run when TensorFlow schedules them.",
    ),
    _opt(
        "is_tailing_optimization",
        "b",
        "session",
        False,
        NO_EFFECT,
        "Graph-engine optimization of the communication tail (BERT).",
    ),
    _opt("hcom_multi_mode", "b", "init", False, NO_EFFECT, "Multi-mode setting of Ascend's collective library."),
    _opt(
        "hccl_timeout",
        "i",
        "init",
        None,
        WORKS,
        "Bounds every collective (seconds; wins over HCCL_EXEC_TIMEOUT, default 1836): a collective that waits "
        "longer fails with CollectiveError.",
        allowed=f"seconds, 1 .. {MAX_HCCL_TIMEOUT}",
        check=checks.between(
            1, MAX_HCCL_TIMEOUT, f"hccl_timeout must be a whole number of seconds in [1, {MAX_HCCL_TIMEOUT}]"
        ),
    ),
    _opt(
        "HCCL_algorithm",
        "s",
        "init",
        None,
        NO_EFFECT,
        "Algorithm choice of Ascend's collective library.",
        allowed="HCCL algorithm string",
    ),
    _opt("op_wait_timeout", "i", "init", None, NO_EFFECT, "Device op wait timeout.", allowed="seconds"),
    _opt("op_execute_timeout", "i", "init", None, NO_EFFECT, "Device op execution timeout.", allowed="seconds"),
    _opt(
        "stream_sync_timeout",
        "i",
        "init",
        -1,
        NO_EFFECT,
        "Device stream sync timeout.",
        allowed="milliseconds, -1 = none",
    ),
    _opt(
        "event_sync_timeout",
        "i",
        "init",
        -1,
        NO_EFFECT,
        "Device event sync timeout.",
        allowed="milliseconds, -1 = none",
    ),
    _opt(
        "local_rank_id",
        "i",
        "pass",
        None,
        WORKS,
        "Id of the data-preprocessing main process on this server; validated and recorded.",
        allowed="0 .. 7",
        check=checks.between(0, 7, "local rank id should be in [0,7]"),
    ),
    _opt(
        "local_device_list",
        "s",
        "pass",
        None,
        NO_EFFECT,
        "Devices that share data preprocessing; the input pipeline runs in TensorFlow here.",
        allowed="comma-separated device ids, e.g. 0,1",
        check=checks.int_list("local_device_list style is invalid, example:'1,2,3'"),
    ),
    _opt(
        "stream_max_parallel_num",
        "s",
        "session",
        None,
        NO_EFFECT,
        "Graph-engine stream parallelism per engine.",
        allowed="comma-separated engine:count list, e.g. DNN_VM_AICPU:10,AIcoreEngine:1",
        check=checks.matches(
            r"[A-Za-z_][A-Za-z0-9_]*:[0-9]+(,[A-Za-z_][A-Za-z0-9_]*:[0-9]+)*",
            "stream_max_parallel_num must be engine:count pairs separated by commas",
        ),
    ),
    _opt(
        "ac_parallel_enable",
        "s",
        "session",
        None,
        NO_EFFECT,
        "Runs AI CPU and AI Core ops in parallel in dynamic-shape graphs.",
        **_choice("0", "1", detail="ac_parallel_enable should be '0' or '1'"),
    ),
    _opt(
        "auto_multistream_parallel_mode",
        "s",
        "session",
        None,
        NO_EFFECT,
        "Graph-engine multi-stream scheduling.",
        allowed="cv / LoadBalance / LoadBalance:n / MainStream:n (n = 1 .. 64)",
        check=checks.matches(
            r"cv|LoadBalance|(LoadBalance|MainStream):([1-9]|[1-5][0-9]|6[0-4])",  # n in 1 .. 64
            "auto_multistream_parallel_mode should be cv, LoadBalance, LoadBalance:n or MainStream:n (1 <= n <= 64)",
        ),
    ),
)

_MEMORY = (
    _opt(
        "graph_memory_max_size",
        "s",
        "session",
        None,
        NO_EFFECT,
        "Legacy device memory limit; no effect in current Ascend software either.",
        allowed=BYTE_COUNT_TEXT,
        check=checks.matches(
            BYTE_COUNT,
            f"graph_memory_max_size must be {BYTE_COUNT_TEXT}",
        ),
    ),
    _opt(
        "variable_memory_max_size",
        "s",
        "session",
        None,
        NO_EFFECT,
        "Legacy device memory limit; no effect in current Ascend software either.",
        allowed=BYTE_COUNT_TEXT,
        check=checks.matches(
            BYTE_COUNT,
            f"variable_memory_max_size must be {BYTE_COUNT_TEXT}",
        ),
    ),
    _opt(
        "variable_format_optimize",
        "b",
        "session",
        None,
        NO_EFFECT,
        "Device layout (NC1HWC0) of variables; tensors keep TensorFlow's layout here.",
    ),
    _opt(
        "atomic_clean_policy",
        "i",
        "session",
        0,
        NO_EFFECT,
        "How device memory is zeroed before atomic ops.",
        allowed="0 (together) / 1 (per op)",
        check=checks.one_of((0, 1), "atomic_clean_policy should be 0 or 1"),
    ),
    _opt(
        "static_memory_policy",
        "i",
        "init",
        0,
        NO_EFFECT,
        "Device memory allocation policy.",
        allowed="0 (dynamic) / 1 (same as 2) / 2 (static-shape expandable) / 3 (dynamic-shape expandable) / 4 (both)",
        check=checks.one_of((0, 1, 2, 3, 4), "static_memory_policy should be one of 0, 1, 2, 3 and 4"),
    ),
    _opt("memory_optimization_policy", "s", "session", None, NO_EFFECT, "Graph-engine memory optimization policy."),
    _opt(
        "variable_use_1g_huge_page",
        "i",
        "init",
        0,
        NO_EFFECT,
        "1 GiB huge pages for device variables.",
        allowed="0 (off) / 1 (1 GiB) / 2 (1 GiB, else 2 MiB)",
        check=checks.one_of((0, 1, 2)),
    ),
    _opt("external_weight", "b", "session", False, NO_EFFECT, "Moves constant weights into files for the device."),
    _opt(
        "input_fusion_size",
        "i",
        "session",
        131072,
        NO_EFFECT,
        "Fuses small host-to-device input copies; there are no device copies here.",
        allowed=f"bytes, clamped to 0 .. {MAX_INPUT_FUSION_SIZE}",
        check=checks.clamped(0, MAX_INPUT_FUSION_SIZE, "input_fusion_size"),
    ),
    _opt("input_batch_cpy", "b", "init", False, NO_EFFECT, "Batched host-to-device input copies."),
    _opt(
        "graph_slice",
        "s",
        "session",
        None,
        NO_EFFECT,
        "Slices graphs to save device memory.",
        **_choice("auto", "manual", detail="graph_slice must be in ['auto', 'manual']"),
    ),
    _opt(
        "buffer_optimize",
        "s",
        "session",
        "l2_optimize",
        NO_EFFECT,
        "Device L2 buffer optimization.",
        **_choice(
            "l2_optimize",
            "off_optimize",
            detail="buffer_optimize is invalid, should be one of [l2_optimize, off_optimize]",
        ),
    ),
    _opt(
        "enable_small_channel",
        "i",
        "session",
        0,
        NO_EFFECT,
        "Device small-channel convolution optimization.",
        allowed="0 (off) / 1 (on)",
        check=checks.one_of((0, 1), "enable_small_channel should be 0 or 1"),
    ),
    _opt(
        "enable_compress_weight",
        "b",
        "session",
        False,
        NO_EFFECT,
        "Compresses weights on the device (not together with compress_weight_conf).",
    ),
    _opt(
        "compress_weight_conf",
        "s",
        "session",
        None,
        NO_EFFECT,
        "Weight-compression config of the device.",
        allowed="path to an existing compression config file; not together with enable_compress_weight=true",
        check=checks.existing_file,
    ),
)

_COMPILATION = (
    _opt(
        "jit_compile",
        "s",
        "session",
        "auto",
        NO_EFFECT,
        "Static or dynamic device kernel compilation; TensorFlow's kernels need no compilation here.",
        strict_kind=True,
        bool_texts=("true", "false"),  # upstream r1.10-r1.11 read .b: True compiled statically, as "true" does
        **_choice("true", "false", "auto"),
    ),
    _opt(
        "shape_generalization_mode",
        "s",
        "pass",
        "STRICT",
        NO_EFFECT,
        "Generalizes input shapes for device compilation; TensorFlow accepts any shape here.",
        strict_kind=True,
        **_choice("STRICT", "FULL", "ADAPTIVE"),
    ),
    _opt(
        "compile_dynamic_mode",
        "b",
        "pass",
        False,
        NO_EFFECT,
        "Compiles every input shape as dynamic; TensorFlow accepts any shape here.",
    ),
    _opt("all_tensor_not_empty", "b", "session", False, NO_EFFECT, "Skips graph-engine empty-tensor checks."),
    _opt(
        "op_compiler_cache_mode",
        "s",
        "init",
        None,
        NO_EFFECT,
        "Ascend op compiler cache; no device kernels are compiled here.",
        **_choice("enable", "force", "disable", detail="op_compiler_cache_mode should be enable, force or disable"),
    ),
    _opt(
        "op_compiler_cache_dir",
        "s",
        "init",
        None,
        NO_EFFECT,
        "Ascend op compiler cache directory; no device kernels are compiled here.",
        allowed="directory path",
    ),
    _opt(
        "graph_compiler_cache_dir",
        "s",
        "session",
        None,
        NO_EFFECT,
        "Graph-engine compiled-graph cache; no graphs are compiled for a device here.",
        allowed="path to an existing directory",
        check=checks.existing_dir,
    ),
    _opt(
        "aicore_num",
        "s",
        "init",
        None,
        NO_EFFECT,
        "Limits the AI cores used.",
        allowed="cube|vector core counts, e.g. 2|4",
        check=checks.matches(r"[0-9]+\|[0-9]+", "aicore_num should be cube|vector core counts, e.g. '2|4'"),
    ),
    _opt(
        "oo_constant_folding",
        "b",
        "init",
        True,
        NO_EFFECT,
        "Graph-engine constant folding; TensorFlow's grappler folds constants itself.",
    ),
    _opt("oo_level", "s", "init", "O3", NO_EFFECT, "Graph-engine optimization level.", allowed="e.g. O1 / O3"),
    _opt("optimization_switch", "s", "init", None, NO_EFFECT, "Graph-engine pass switches."),
    _opt("topo_sorting_mode", "i", "session", None, NO_EFFECT, "Graph-engine topological sort order."),
    _opt(
        "insert_op_file",
        "s",
        "session",
        None,
        NO_EFFECT,
        "Inserts AIPP image preprocessing for inference.",
        allowed="path to an existing AIPP config file",
        check=checks.existing_file,
    ),
    _opt(
        "dynamic_input",
        "b",
        "pass",
        False,
        NO_EFFECT,
        "Legacy dynamic-input switch; TensorFlow handles dynamic shapes natively.",
    ),
    _opt(
        "dynamic_graph_execute_mode",
        "s",
        "pass",
        "dynamic_execute",
        NO_EFFECT,
        "Legacy dynamic-input execution mode.",
        checked_when=("dynamic_input",),
        **_choice(
            "lazy_recompile",
            "dynamic_execute",
            detail="dynamic_graph_execute_mode should be lazy_recompile or dynamic_execute.",
        ),
    ),
    _opt(
        "dynamic_inputs_shape_range",
        "s",
        "pass",
        None,
        NO_EFFECT,
        "Legacy dynamic-input shape ranges.",
        allowed="e.g. getnext:[128,3~5,-1];data:[...]",
    ),
    _opt(
        "input_shape",
        "s",
        "graph",
        None,
        NO_EFFECT,
        "Dynamic-dims input profiles for device compilation; TensorFlow runs any input shape here.",
        allowed="name:d,d,-1;name2:d,... (-1 = dynamic); with dynamic_dims and dynamic_node_type",
        check=checks.input_shape,
    ),
    _opt(
        "dynamic_dims",
        "s",
        "graph",
        None,
        NO_EFFECT,
        "Values of the dynamic dims, one group per profile.",
        allowed="groups of integers, e.g. 20,20;40,40; with input_shape and dynamic_node_type",
        check=checks.dynamic_dims,
    ),
    _opt(
        "dynamic_node_type",
        "i",
        "graph",
        None,
        NO_EFFECT,
        "Whether the dynamic inputs are dataset or placeholders.",
        allowed="0 (dataset) / 1 (placeholder); with input_shape and dynamic_dims",
        check=checks.one_of((0, 1), "dynamic_node_type should be 0 or 1."),
    ),
    _opt(
        "compile_hybrid_mode",
        "i",
        "graph",
        None,
        NO_EFFECT,
        "Hybrid gear + dynamic compilation.",
        allowed="0 / 1 (1 needs input_shape, dynamic_dims and dynamic_node_type=1)",
        check=checks.one_of((0, 1), "compile_hybrid_mode should be 0 or 1"),
    ),
    _opt("in_out_pair_flag", "b", "pass", True, NO_EFFECT, "Inference offload range (in_out_pair) switch."),
    _opt("in_out_pair", "s", "pass", None, NO_EFFECT, "Inference offload range for mixed computing."),
    _opt("const_input", "s", "pass", None, NO_EFFECT, "Device partitioning hint for constant inputs."),
)

_TUNING_DEPLOYMENT = (
    _opt(
        "aoe_mode",
        "s",
        "init",
        None,
        NO_EFFECT,
        "Ascend Optimization Engine tuning; there are no device kernels to tune here.",
        allowed="1 (subgraph) / 2 (operator) / 4 (gradient split)",
        check=checks.one_of(("1", "2", "4"), "aoe mode is invalid, aoe mode should be one of the list:['1', '2', '4']"),
    ),
    _opt(
        "work_path",
        "s",
        "init",
        "./",
        NO_EFFECT,
        "Working directory of AOE tuning.",
        allowed=_RW_DIR,
        check=checks.existing_rw_dir,
        checked_when=("aoe_mode",),
    ),
    _opt("distribute_config", "s", "init", None, NO_EFFECT, "Distributed tuning config of AOE."),
    _opt(
        "aoe_config_file",
        "s",
        "init",
        None,
        NO_EFFECT,
        "AOE tuning config file.",
        allowed="path to an existing AOE config file",
        check=checks.existing_file,
    ),
    _opt("auto_tune_mode", "s", "init", None, NO_EFFECT, "Legacy auto-tuning switch."),
    _opt(
        "experimental_logical_device_cluster_deploy_mode",
        "s",
        "init",
        "LB",
        NO_EFFECT,
        "Helper-device deployment mode.",
        **_choice("LB", "SINGLE", detail="experimental_logical_device_cluster_deploy_mode should be LB or SINGLE"),
    ),
    _opt("experimental_logical_device_id", "s", "init", None, NO_EFFECT, "Helper-device deployment."),
    _opt("experimental_model_deploy_mode", "s", "init", None, NO_EFFECT, "Helper-device deployment."),
    _opt("experimental_model_deploy_devicelist", "s", "init", None, NO_EFFECT, "Helper-device deployment."),
    _opt(
        "resource_config_path",
        "s",
        "session",
        None,
        NO_EFFECT,
        "Graph-engine resource config.",
        allowed="path to an existing file",
        check=checks.existing_file,
    ),
    _opt(
        "graph_parallel_option_path",
        "s",
        "session",
        None,
        NO_EFFECT,
        "Graph-engine graph parallelism config.",
        allowed="path to an existing file",
        check=checks.existing_file,
    ),
    _opt("enable_graph_parallel", "b", "session", False, NO_EFFECT, "Graph-engine graph parallelism."),
    _opt(
        "min_group_size",
        "i",
        "session",
        None,
        NO_EFFECT,
        "Written by NPUEstimator (as .b = 1) but read by nothing, upstream included.",
    ),
)


def _index(*groups):
    """Returns {name: spec} in table order; a name listed twice is a bug in this file."""
    options = {}
    for spec in itertools.chain(*groups):
        if spec.name in options:
            raise ValueError(f"option {spec.name} is listed twice")
        options[spec.name] = spec
    return options


OPTIONS = _index(_BASIC, _PRECISION, _PROFILING, _DUMP_DEBUG, _DISTRIBUTED, _MEMORY, _COMPILATION, _TUNING_DEPLOYMENT)


def did_you_mean(name):
    """Returns "; did you mean 'precision_mode'?" for a mistyped option key, or "" when nothing is close."""
    matches = difflib.get_close_matches(name, OPTIONS, n=1)
    return f"; did you mean {matches[0]!r}?" if matches else ""
