"""``tf.estimator.WarmStartSettings``: start training from the variables of another checkpoint."""

import collections
import os

import tensorflow as tf

from npu_bridge.core.runtime.errors import NpuArgumentError


class WarmStartSettings(
    collections.namedtuple(
        "WarmStartSettings",
        ["ckpt_to_initialize_from", "vars_to_warm_start", "var_name_to_vocab_info", "var_name_to_prev_var_name"],
    )
):
    """Which checkpoint (or SavedModel, or directory) to warm-start from and which variables to take.

    Args:
      ckpt_to_initialize_from: a checkpoint path or a directory holding checkpoints or a SavedModel.
      vars_to_warm_start: a regex or list of variable names (default: every trainable variable).
      var_name_to_vocab_info: dict of variable name -> ``tf.compat.v1.train.VocabInfo``.
      var_name_to_prev_var_name: dict of variable name -> its name in the checkpoint.
    """

    def __new__(
        cls,
        ckpt_to_initialize_from,
        vars_to_warm_start=".*",
        var_name_to_vocab_info=None,
        var_name_to_prev_var_name=None,
    ):
        if not ckpt_to_initialize_from:
            raise NpuArgumentError(
                f"ckpt_to_initialize_from must be a checkpoint path or directory, given: {ckpt_to_initialize_from!r}"
            )
        return super().__new__(
            cls,
            os.fspath(ckpt_to_initialize_from),
            vars_to_warm_start,
            var_name_to_vocab_info or {},
            var_name_to_prev_var_name or {},
        )


def settings_from(warm_start_from):
    """Returns ``WarmStartSettings`` for the ``warm_start_from`` argument of an Estimator (None stays None).

    Raises:
      ValueError: ``warm_start_from`` is neither a path nor ``WarmStartSettings``.
    """
    if warm_start_from is None or isinstance(warm_start_from, WarmStartSettings):
        return warm_start_from
    if isinstance(warm_start_from, (str, bytes, os.PathLike)):
        path = os.fsdecode(warm_start_from)
        variables = os.path.join(path, "variables", "variables")
        if tf.io.gfile.exists(os.path.join(path, "saved_model.pb")) and tf.io.gfile.exists(variables + ".index"):
            path = variables
        return WarmStartSettings(ckpt_to_initialize_from=path)
    raise NpuArgumentError(f"warm_start_from must be a string or a WarmStartSettings, given: {warm_start_from!r}")


def apply(settings):
    """Makes the variables of the default graph initialize from the warm-start checkpoint."""
    tf.compat.v1.train.warm_start(
        settings.ckpt_to_initialize_from,
        settings.vars_to_warm_start,
        settings.var_name_to_vocab_info,
        settings.var_name_to_prev_var_name,
    )
