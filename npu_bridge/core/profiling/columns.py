"""Column names of the exported CSVs: upstream's (those of msprof's export; docs/profiling.md lists them),
the "Estimated ..." columns npu_bridge adds on the simulated Ascend backend, and the TensorFlow op type npu_bridge
adds as op_summary's last column."""

OP_SUMMARY = (
    "Device_id",
    "Model Name",
    "Model ID",
    "Task ID",
    "Stream ID",
    "Infer ID",
    "Op Name",
    "OP Type",
    "OP State",
    "Task Type",
    "Task Start Time(us)",
    "Task Duration(us)",
    "Task Wait Time(us)",
    "Block Num",
    "Mix Block Num",
    "HF32 Eligible",
)
OP_SUMMARY_SHAPES = (
    "Input Shapes",
    "Input Data Types",
    "Input Formats",
    "Output Shapes",
    "Output Data Types",
    "Output Formats",
)
# The op type TensorFlow ran (oneDNN's kernel names mapped back) where OP Type has Ascend's name for it: NpuRound
# for Cast, the function call for a composed op.
OP_SUMMARY_TENSORFLOW = "TensorFlow Op Type"
OP_SUMMARY_ESTIMATES = ("Estimated Ascend Duration(us)", "Estimated FLOPs", "Estimated Bytes", "Estimate Bound")
OP_STATISTIC = (
    "Device_id",
    "OP Type",
    "Core Type",
    "Count",
    "Total Time(us)",
    "Min Time(us)",
    "Avg Time(us)",
    "Max Time(us)",
    "Ratio(%)",
)
OP_STATISTIC_ESTIMATE = "Estimated Ascend Total Time(us)"
STEP_TRACE = (
    "Device_id",
    "Iteration ID",
    "FP Start(us)",
    "BP End(us)",
    "Iteration End(us)",
    "Iteration Time(us)",
    "FP to BP Time(us)",
    "Iteration Refresh(us)",
    "Data Aug Bound(us)",
    "Model ID",
)
STEP_TRACE_ESTIMATE = "Estimated Ascend Iteration Time(us)"
