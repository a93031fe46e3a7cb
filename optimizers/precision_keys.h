// parameter_map keys through which the Python precision setup step (npu_bridge/core/precision/pass_params.py,
// which must use the same names) hands its decisions to the precision rewrite passes. Lists are
// newline-separated strings.
#ifndef NPU_BRIDGE_OPTIMIZERS_PRECISION_KEYS_H_
#define NPU_BRIDGE_OPTIMIZERS_PRECISION_KEYS_H_

namespace npu_bridge {

// Rounding rules, one per line: "<selector>|<inputs>|<outputs>".
//   selector: type:<OpType>, name:<node name> or type:* (every computing op)
//   inputs / outputs: empty (leave), or comma-separated <slot>=<dtype> where slot is an index or * (every
//   float32 slot) and dtype is float16 / bfloat16 (round through it) or float32 (keep float32: undo rounding).
constexpr char kPrecisionRulesKey[] = "_npu_precision_rules";
// "bfloat16": TensorFlow's fp16-emulating mixed-precision pass chose the regions; round them to bfloat16.
constexpr char kAmpDtypeKey[] = "_npu_precision_amp_dtype";
// true: the simulated Ascend device converts to fp16 (saturation mode, float-status register).
constexpr char kAscendFp16Key[] = "_npu_precision_ascend_fp16";
// Implementation modes, one per line: "<selector>=<high_precision|high_performance>".
constexpr char kImplModesKey[] = "_npu_precision_impl_modes";
// Node attribute of ops excluded from precision changes (keep_dtype_scope, util.keep_tensors_dtypes).
constexpr char kKeepDtypeAttr[] = "_keep_dtype";

}  // namespace npu_bridge

#endif  // NPU_BRIDGE_OPTIMIZERS_PRECISION_KEYS_H_
