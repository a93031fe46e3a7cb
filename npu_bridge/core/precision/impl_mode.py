"""Ascend implementation modes: op_select_implmode, optypelist_for_implmode and op_precision_mode.

Ascend ops may have a high-precision and a high-performance implementation (Ascend's default is
high_performance). On the simulated Ascend backend the ops whose implementations differ numerically in a
documented way are reproduced (``MODELLED_OPS``; the C++ ``impl_mode`` pass rewrites them); other ops have no
numerical model here and compute as TensorFlow does. Elsewhere the options are accepted and reported.

op_precision_mode names an .ini file with ``[ByOpType]`` and ``[ByNodeName]`` sections of
``name=mode`` lines; it wins over op_select_implmode.
"""

import configparser

from npu_bridge.core.plan.pass_contract import ImplModeRule
from npu_bridge.core.runtime import bounded_files
from npu_bridge.core.runtime.errors import OptionValueError

HIGH_PRECISION = "high_precision"
HIGH_PERFORMANCE = "high_performance"
ASCEND_DEFAULT = HIGH_PERFORMANCE

# Ops whose two implementations are reproduced, and how they differ.
MODELLED_OPS = {
    "LayerNorm": "high_performance computes the reciprocal square root as exp(-0.5 * log(variance + epsilon)) "
    "in the op's dtype (npu_aicore_ops.layer_norm)",
    "SoftmaxCrossEntropyWithLogits": "high_performance skips the max subtraction, so float16 logits above about "
    "11.1 overflow (tf.nn.softmax_cross_entropy_with_logits on float16)",
}
INI_SECTIONS = ("ByOpType", "ByNodeName")
INI_VALUES = (
    HIGH_PRECISION,
    HIGH_PERFORMANCE,
    "enable_float_32_execution",
    "enable_hi_float_32_execution",
    "support_out_of_bound_index",
    "keep_fp16",
    "super_performance",
)


def load_ini(path):
    """Reads an op_precision_mode file.

    Args:
      path: the file path.
    Returns:
      {"ByOpType": {op type: mode}, "ByNodeName": {node name: mode}}.
    Raises:
      ValueError: unreadable file, bad syntax, unknown section or value.
    """
    parser = configparser.ConfigParser(delimiters=("=",), comment_prefixes=("#", ";"), interpolation=None)
    parser.optionxform = str  # op types and node names are case-sensitive
    try:
        parser.read_string(bounded_files.read_text(path), source=str(path))
    except OSError as e:
        raise OptionValueError(f"cannot read the file: {e.strerror}") from None
    except configparser.Error as e:
        raise OptionValueError(f"the file is not a valid .ini file ({e.message.splitlines()[0]})") from None
    result = {section: {} for section in INI_SECTIONS}
    for section in parser.sections():
        if section not in INI_SECTIONS:
            raise OptionValueError(f"unknown section [{section}]; the sections are [ByOpType] and [ByNodeName]")
        for key, value in parser.items(section):
            if value not in INI_VALUES:
                raise OptionValueError(f"[{section}] {key}={value}: the value must be one of {', '.join(INI_VALUES)}")
            result[section][key] = value
    return result


def resolve(options):
    """Turns the implementation-mode options into the rules of the impl_mode pass.

    Args:
      options: the session's validated ``NpuOptions``.
    Returns:
      (rules, unmodelled): ``ImplModeRule``s by op type, by node name, and for every op (type "*");
      unmodelled lists the explicitly named ops or values that have no numerical model here.
    """
    selected = options.get("op_select_implmode")
    listed = options.get("optypelist_for_implmode")
    rules = []
    unmodelled = []
    if selected is None:
        rules.append(ImplModeRule("type", "*", ASCEND_DEFAULT))
    elif selected.endswith("_for_all"):
        rules.append(ImplModeRule("type", "*", selected[: -len("_for_all")]))
    elif listed:
        rules.append(ImplModeRule("type", "*", ASCEND_DEFAULT))
        for op in (item.strip() for item in listed.split(",") if item.strip()):
            rules.append(ImplModeRule("type", op, selected))
            if op not in MODELLED_OPS:
                unmodelled.append(op)
    else:
        rules.append(ImplModeRule("type", "*", selected))
    ini_path = options.get("op_precision_mode")
    if ini_path:
        ini = load_ini(ini_path)
        for section, selector in (("ByOpType", "type"), ("ByNodeName", "name")):
            for key, mode in ini[section].items():
                if mode in (HIGH_PRECISION, HIGH_PERFORMANCE):
                    rules.append(ImplModeRule(selector, key, mode))
                    if section == "ByOpType" and key not in MODELLED_OPS:
                        unmodelled.append(key)
                else:
                    unmodelled.append(f"{key}={mode}")
    return rules, unmodelled
