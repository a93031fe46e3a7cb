"""The precision step of every bridged session.

It applies the session's backend (``npu_bridge.core.device.backend``), works out the precision policy (``modes``)
and applies it, filling the precision part of the session's pass plan:
  * cube and fp16 modes, customize_dtypes: rounding rules for the C++ ``precision`` pass;
  * mixed modes: the C++ pass's own mixed region (white / black lists from ``mixlist``, edited by
    modify_mixlist), emulated by rounding on CPU and the simulated backend, really converted on GPU.
    TensorFlow's automatic mixed precision passes are never switched on;
  * the simulated Ascend backend: saturating fp16 conversions and implementation modes;
  * fp16 rounding on the cpu / gpu backends (IEEE overflow): a run that then fails on a NaN or inf (a summary
    histogram, ``CheckNumerics``) says that Ascend's saturation mode would have kept those values finite and
    how to get its numerics.
Sessions whose precision does not change are left as they are.
"""

import re

from tensorflow.core.protobuf import rewriter_config_pb2

from npu_bridge.core.device import backend
from npu_bridge.core.plan.pass_contract import EVERY_SLOT, PrecisionRule
from npu_bridge.core.precision import customize_dtypes, impl_mode, mixlist, modes
from npu_bridge.core.runtime import log
from npu_bridge.core.session.step_api import RunHook, with_note

_OFF = rewriter_config_pb2.RewriterConfig.OFF
_IMPL_OPTIONS = ("op_select_implmode", "optypelist_for_implmode", "op_precision_mode")


def setup(plan):
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
    pass_plan = plan.pass_plan
    if policy.behaviour == modes.MIXED:
        lists = mixlist.session_lists(options.get("modify_mixlist"))
        pass_plan.mixed_dtype = policy.mixed_dtype
        pass_plan.mixed_convert = target == "gpu"
        pass_plan.mixed_white, pass_plan.mixed_black = lists.white, lists.black
        if options.get("modify_mixlist") is not None:
            log.info_once(
                ("modify_mixlist", options.get("modify_mixlist"), lists),
                "modify_mixlist %s: white list %s; black list %s",
                options.get("modify_mixlist"),
                ", ".join(lists.white),
                ", ".join(lists.black),
            )
    if rules or policy.behaviour == modes.MIXED:
        # The remapper would fuse MatMul/Conv2D with their bias and activation into ops the lists and rules
        # do not name.
        rewrite.remapping = _OFF
    pass_plan.precision_rewrite = policy.behaviour != modes.UNCHANGED
    pass_plan.precision_rules = tuple(rules) if pass_plan.precision_rewrite else ()
    pass_plan.ascend_fp16 = target == "ascend"
    pass_plan.impl_modes = tuple(_implementation_modes(options, target))
    if policy.mode:
        log.info_once(("precision", policy, target), "%s (backend %s)", policy.describe(), target)
    if target != "ascend" and _rounds_to_fp16(policy, pass_plan.precision_rules):
        plan.run_hooks.append(IeeeOverflowHint(policy, target))


class IeeeOverflowHint(RunHook):
    """Adds to a run's NaN / inf error that the session's fp16 follows IEEE here, not Ascend's saturation mode."""

    # What TensorFlow's ops say when they meet a non-finite value: summaries, CheckNumerics / assert_all_finite.
    _NON_FINITE = re.compile(r"Nan in summary histogram|Infinity in Histogram|Tensor had (?:NaN|Inf|\+Inf|-Inf) values")

    def __init__(self, policy, target):
        self._policy, self._target = policy, target

    def run_failed(self, context, error):
        if not self._NON_FINITE.search(str(error)):
            return None
        note = (
            f"npu_bridge: this session computes in fp16 ({self._policy.describe()}) on the {self._target} backend, "
            "where an fp16 overflow is inf and 0/0 is NaN (IEEE); Ascend's default saturation mode gives +-65504 "
            "and 0 there instead. A script that trains on Ascend runs with its numerics on the simulated backend "
            "(NPU_BRIDGE_DEVICE_TARGET=ascend), or in float32 with precision_mode=must_keep_origin_dtype "
            "(docs/precision.md)"
        )
        return with_note(error, note)


def _rounds_to_fp16(policy, rules):
    """Whether the session's precision puts some values through fp16 (not only bfloat16)."""
    if policy.behaviour == modes.MIXED:
        return policy.mixed_dtype == "float16"
    return any(dtype == "float16" for rule in rules for _, dtype in rule.inputs + rule.outputs)


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
