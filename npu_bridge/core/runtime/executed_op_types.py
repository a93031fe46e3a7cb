"""The op types of the user's graph that the op types TensorFlow executed stand for.

TensorFlow renames ops after Grappler. With oneDNN on (its default on x86-64 CPUs with AVX512_VNNI,
AVX512_BF16 or AMX; ``TF_ENABLE_ONEDNN_OPTS``), its layout pass gives ops oneDNN kernels (``MatMul`` ->
``_MklMatMul``, ``Conv2D`` -> ``_MklNativeConv2D``) and merges some pairs, whatever the remapper setting
(``Conv2D`` + the ``BiasAdd`` it feeds -> ``_MklNativeConv2DWithBias``, named after the BiasAdd;
``Pad`` + ``Conv2D`` -> ``_MklNativePadWithConv2D``). With remapping on, on every CPU, Grappler's remapper fuses
ops with their bias and activation (``_FusedConv2D``, ``_FusedMatMul``, named after the last fused op), which
oneDNN renames again (``_MklNativeFusedConv2D``). ``user_op_type`` is the one place that maps these names
back, so whatever reads executed op types (step stats, partition graphs) sees the same types on every CPU
(except for fusions with no op of their own, such as oneDNN's ``_MklLayerNorm``).
"""

import functools
import re

from tensorflow.python.framework import op_def_registry

_KERNEL_PREFIXES = ("__MklDummy", "_MklNative", "_Mkl")  # longest first
_FUSED_PREFIX = "_Fused"
_FUSED_WORD = "Fused"
_MERGE_WORD = "With"  # PadWithConv2D, Conv2DWithBias: ops the layout pass merges
_EXTENDED_SUFFIX = "Ex"  # _FusedBatchNormEx: an op extended by the remapper
_VERSIONED = re.compile(r"V\d+$")
_NEWEST_VERSION = 9


@functools.lru_cache(maxsize=None)
def user_op_type(op_type):
    """The op type of the user's graph that an executed op type stands for.

    The oneDNN prefix (``_Mkl``, ``_MklNative``) is dropped; a name that is then a registered op is that op
    (``_MklMatMul`` -> ``MatMul``, ``_MklQuantizedConv2DWithBias`` -> ``QuantizedConv2DWithBias``). A fused
    or merged kernel stands for the first registered op among its parts -- the parts around ``With``, with
    and without ``Fused`` and a trailing ``Ex``, each newest version first -- whose inputs and outputs begin
    the kernel's (``_FusedConv2D`` -> ``Conv2D``; ``_MklNativePadWithConv2D`` -> ``Conv2D``, not ``Pad``;
    ``_FusedBatchNormEx`` -> ``FusedBatchNormV3``). A fusion of ops with no op of its own keeps its name
    without the prefixes (``_MklSwish`` -> ``Swish``). Every other op type is returned unchanged.

    Args:
      op_type: an op type from an executed graph.

    Returns:
      The op type as the user's graph has it.
    """
    name = _without_kernel_prefix(op_type)
    if name == op_type:
        if not op_type.startswith(_FUSED_PREFIX):
            return op_type
        name = op_type[1:]
    if op_def_registry.get(name) is not None:
        return name
    kernel = op_def_registry.get(op_type)
    for candidate in _candidates(name):
        for version in _versions(candidate):
            op_def = op_def_registry.get(version)
            if op_def is not None and (kernel is None or _extends(kernel, op_def)):
                return version
    return _without_fused(name)


def _without_kernel_prefix(op_type):
    for prefix in _KERNEL_PREFIXES:
        if op_type.startswith(prefix):
            return op_type[len(prefix) :]
    return op_type


def _without_fused(name):
    return name.removeprefix(_FUSED_WORD)


def _candidates(name):
    """The names of the ops a fused or merged kernel may stand for, in the order they are tried."""
    for part in name.split(_MERGE_WORD):
        forms = [part, part.removesuffix(_EXTENDED_SUFFIX)]
        yield from dict.fromkeys(forms + [_without_fused(form) for form in forms])


def _versions(name):
    """``name`` if it has a version suffix, else its possible versions, newest first."""
    if _VERSIONED.search(name):
        return [name]
    return [f"{name}V{n}" for n in range(_NEWEST_VERSION, 1, -1)] + [name]


def _extends(kernel, op_def):
    """True when the kernel's inputs and outputs begin with those of ``op_def`` (by argument name)."""
    for kernel_args, op_args in ((kernel.input_arg, op_def.input_arg), (kernel.output_arg, op_def.output_arg)):
        names = [arg.name for arg in op_args]
        if [arg.name for arg in kernel_args][: len(names)] != names:
            return False
    return True
