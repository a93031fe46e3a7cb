"""What the zoo's copied npu_ops.py does: unguarded gradient registrations for four NPU op types, and dropout
built from the generated op wrappers called positionally in upstream's argument order."""

import numbers

import tensorflow as tf
from tensorflow.python.framework import ops

from npu_device import gen_npu_ops


@ops.RegisterGradient("BasicLSTMCell")
def basic_lstm_cell_grad(op, dct, dht, dit, djt, dft, dot, dtanhct):
    raise NotImplementedError


@ops.RegisterGradient("DynamicRnn")
def dynamic_rnn_grad(op, dy, dh, dc, di, dj, df, do, dtanhc):
    raise NotImplementedError


@ops.RegisterGradient("DynamicGruV2")
def dynamic_gru_v2_grad(op, dy, doutput_h, dupdate, dreset, dnew, dhidden_new):
    raise NotImplementedError


@ops.RegisterGradient("DropOutDoMaskV3")
def dropout_do_mask_v3_grad(op, grad):
    raise NotImplementedError


def dropout(x, keep_prob, noise_shape=None, seed=None, name=None):
    if isinstance(keep_prob, numbers.Real) and keep_prob == 1:
        return x
    with ops.name_scope(name, "dropout", [x]) as name:
        x = ops.convert_to_tensor(x, name="x")
        keep_prob = ops.convert_to_tensor(keep_prob, dtype=x.dtype, name="keep_prob")
        if noise_shape is None:
            noise_shape = tf.shape(x)
        seed1, seed2 = tf.compat.v1.get_seed(seed)
        gen_out = gen_npu_ops.drop_out_gen_mask(noise_shape, keep_prob, seed1 or 0, seed2 or 0, name)
        return gen_npu_ops.drop_out_do_mask(x, gen_out, keep_prob, name)
