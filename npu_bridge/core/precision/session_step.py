"""The precision setup step (order 200) of every bridged session.

It applies the session's backend (``npu_bridge.core.device.backend``), works out the precision policy (``modes``)
and applies it, filling the precision part of the session's pass plan:
  * cube and fp16 modes, customize_dtypes: rounding rules for the C++ ``precision`` pass;
  * mixed modes: TensorFlow's automatic mixed precision -- ``auto_mixed_precision`` on GPU,
    ``auto_mixed_precision_cpu`` (fp16 emulated in float32 kernels) on CPU and the simulated backend, its
    region rounded through bfloat16 for the bf16 modes -- with modify_mixlist mapped onto its lists;
  * the simulated Ascend backend: saturating fp16 conversions and implementation modes.
Sessions whose precision does not change are left as they are.
"""

from tensorflow.core.protobuf import rewriter_config_pb2

from npu_bridge.core.device import backend
from npu_bridge.core.precision import customize_dtypes, impl_mode, mixlist, modes
from npu_bridge.core.runtime import log
from npu_bridge.core.runtime.errors import NpuOptionError
from npu_bridge.core.session.pass_contract import EVERY_SLOT, PrecisionRule
from npu_bridge.core.session.setup_steps import setup_step

_ON = rewriter_config_pb2.RewriterConfig.ON
_OFF = rewriter_config_pb2.RewriterConfig.OFF
_IMPL_OPTIONS = ("op_select_implmode", "optypelist_for_implmode", "op_precision_mode")


@setup_step(200, "precision")
def configure_precision(plan):
    """Applies the session's backend and precision options to its config (see the module docstring)."""
    target = backend.configure(plan)
    options = plan.options
    policy = modes.policy(options, target)
    rewrite = plan.config.graph_options.rewrite_options

    rules = _rounding_rules(policy)
    if options.get("customize_dtypes") is not None:
        if policy.behaviour == modes.UNCHANGED:
            log.info_once(
                ("customize_dtypes-ignored", policy.mode),
                "customize_dtypes is ignored: precision mode %s keeps the graph's dtypes (as on Ascend)",
                policy.mode or "unset",
            )
        else:
            rules += customize_dtypes.load(options.get("customize_dtypes"))
    amp_dtype = None
    if policy.behaviour == modes.MIXED:
        amp_dtype = _enable_mixed_precision(rewrite, policy, target)
    mixlist.apply_to_environment(options.get("modify_mixlist") if policy.behaviour == modes.MIXED else None)
    if rules:
        # The remapper would fuse MatMul/Conv2D with their bias and activation into ops the rules do not name.
        rewrite.remapping = _OFF

    pass_plan = plan.pass_plan
    # Without rules the pass still runs in a mixed region, for the ops marked _keep_dtype.
    pass_plan.precision_rewrite = policy.behaviour != modes.UNCHANGED
    pass_plan.precision_rules = tuple(rules) if pass_plan.precision_rewrite else ()
    pass_plan.amp_dtype = amp_dtype or ""
    pass_plan.ascend_fp16 = target == "ascend"
    pass_plan.impl_modes = tuple(_implementation_modes(options, target))
    if policy.mode:
        log.info_once(("precision", policy, target), "%s (backend %s)", policy.describe(), target)


def _implementation_modes(options, target):
    """Implementation-mode rules of the impl_mode pass (simulated backend only; reported elsewhere)."""
    if target != "ascend":
        if any(options.is_set(name) for name in _IMPL_OPTIONS):
            log.info_once(
                ("impl-off-ascend", target),
                "%s: implementation modes change numerics only on the "
                "simulated Ascend backend (device_target=ascend); the %s backend computes with "
                "TensorFlow's kernels",
                ", ".join(n for n in _IMPL_OPTIONS if options.is_set(n)),
                target,
            )
        return []
    lines, unmodelled = impl_mode.resolve(options)
    if unmodelled:
        log.info_once(
            ("impl-unmodelled", tuple(unmodelled)),
            "implementation modes for %s have no numerical model "
            "here; those ops compute as TensorFlow does (modelled: %s)",
            ", ".join(unmodelled),
            ", ".join(impl_mode.MODELLED_OPS),
        )
    return lines


def _rounding_rules(policy):
    """``PrecisionRule``s of the precision pass for cube and fp16 modes."""
    fp16 = ((EVERY_SLOT, "float16"),)
    if policy.behaviour == modes.CUBE_FP16:
        return [PrecisionRule("type", op, fp16, fp16) for op in modes.CUBE_OPS]
    if policy.behaviour == modes.CUBE_FP16_IN_FP32_OUT:
        return [PrecisionRule("type", op, fp16) for op in modes.CUBE_OPS]
    if policy.behaviour == modes.ALL_FP16:
        return [PrecisionRule("type", "*", fp16, fp16)]
    return []


def _enable_mixed_precision(rewrite, policy, target):
    """Turns on TensorFlow's AMP pass for the backend; returns the dtype to retarget its region to (or None)."""
    if target == "gpu":
        if policy.mixed_dtype == "bfloat16":
            raise NpuOptionError(
                policy.source,
                policy.mode,
                "a float16 mixed precision mode on the gpu backend, or device_target cpu / ascend",
                "TensorFlow has no bfloat16 mixed-precision pass for GPUs",
            )
        rewrite.auto_mixed_precision = _ON
        return None
    rewrite.auto_mixed_precision_cpu = _ON
    return "bfloat16" if policy.mixed_dtype == "bfloat16" else None
