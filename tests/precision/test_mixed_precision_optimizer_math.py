"""Optimizer math written by hand under allow_mix_precision (docs/precision.md, "Optimizer math written by hand").

A dense layer's weight gradient comes out of a white-listed MatMul (its backprop), so it holds fp16 values. A
hand-written Adam update squares it with ``tf.square`` and scales the square by ``1 - beta2``: gray ops that
follow the fp16 gradient, so for gradients below about 5e-3 the second-moment increment underflows fp16, ``v``
stays 0 and the update becomes ``lr * m / epsilon``. These tests pin what the pass does today, including two
deviation from Ascend that docs/precision.md describes (the test says which assertions change with a fix):

* ``npu_ops.adam_apply_one(_with_decay)_assign`` are compositions of the same gray ops here, while Ascend's
  AdamApplyOne* kernels are black-listed (float32) -- and Ascend's graph fusion rules turn BERT's hand-written
  Adam into them before it picks dtypes, which the pass does not emulate.
"""

import contextlib
import json

import numpy as np
import pytest
import tensorflow as tf
from helpers.config import npu_config
from helpers.precision import executed_nodes, fp16

from npu_bridge.core.runtime import system
from npu_bridge.estimator import npu_ops
from npu_bridge.estimator.npu.npu_scope import keep_dtype_scope

v1 = tf.compat.v1
RNG = np.random.RandomState(3)
X = RNG.randn(16, 8).astype(np.float32)
Y = RNG.randn(16, 4).astype(np.float32)
W0 = (RNG.randn(8, 4) * 0.1).astype(np.float32)
B1, B2, EPS, LR = 0.9, 0.999, 1e-6, 1e-3
MIXED = {"precision_mode": "allow_mix_precision"}
# Ops of adam_graph's update by what the pass does with them, as Ascend: gray ops whose first input is the fp16
# gradient (fp16), gray ops whose first input is float32 state (float32), and ops on constants and variables
# only (float32; Sqrt is black; sqrt + eps follows Sqrt).
FOLLOW_THE_GRADIENT = {"sq", "g1", "g2"}
FIRST_INPUT_IS_STATE = {"next_m", "next_v", "upd", "lr_upd", "new_w"}
FLOAT32 = {"b1m", "b2v", "sqrt", "denom"}


def dense_loss(w):
    """A dense layer's loss whose weight gradients are 3e-6 .. 3e-4: their squares are ~1e-11 .. 1e-7."""
    return 1e-3 * tf.reduce_mean(tf.square(tf.matmul(tf.constant(X), w, name="dense") - Y))


def adam_graph(resource=False, assign_sub=False, keep=False, loss_scale=None, clip=False):
    """One dense layer and one step of Adam written with TensorFlow ops, as BERT's AdamWeightDecayOptimizer is.

    Args:
      resource: resource variables instead of reference variables.
      assign_sub: update the weight with ``w.assign_sub(lr * update)`` instead of ``w.assign(w - lr * update)``.
      keep: build the update math in ``keep_dtype_scope``.
      loss_scale: scale the loss by this and unscale the gradient before the update.
      clip: clip the gradient with ``tf.clip_by_global_norm`` first, as BERT does.
    Returns:
      (graph, {"grad", "train", "init", "w", "m", "v"}).
    """
    graph = tf.Graph()
    with graph.as_default():
        w = v1.get_variable("w", initializer=tf.constant(W0), use_resource=resource)
        m = v1.get_variable("m", initializer=tf.zeros([8, 4]), use_resource=resource)
        v = v1.get_variable("v", initializer=tf.zeros([8, 4]), use_resource=resource)
        if loss_scale:
            (grad,) = tf.gradients(dense_loss(w) * loss_scale, [w])
            grad = grad * (1.0 / loss_scale)
        else:
            (grad,) = tf.gradients(dense_loss(w), [w])
        (clipped,), _ = tf.clip_by_global_norm([grad], 1.0) if clip else ((grad,), None)
        with keep_dtype_scope() if keep else contextlib.nullcontext():
            sq = tf.square(clipped, name="sq")
            next_m = tf.add(tf.multiply(B1, m, name="b1m"), tf.multiply(1.0 - B1, clipped, name="g1"), name="next_m")
            next_v = tf.add(tf.multiply(B2, v, name="b2v"), tf.multiply(1.0 - B2, sq, name="g2"), name="next_v")
            denom = tf.add(tf.sqrt(next_v, name="sqrt"), EPS, name="denom")
            lr_upd = tf.multiply(LR, tf.divide(next_m, denom, name="upd"), name="lr_upd")
            update_w = w.assign_sub(lr_upd) if assign_sub else w.assign(tf.subtract(w, lr_upd, name="new_w"))
        train = tf.group(update_w, m.assign(next_m), v.assign(next_v))
        init = v1.global_variables_initializer()
    return graph, {"grad": clipped, "train": train, "init": init, "w": w, "m": m, "v": v}


def fused_adam_graph(decay):
    """The same step with upstream's fused op npu_ops.adam_apply_one(_with_decay)_assign."""
    graph = tf.Graph()
    with graph.as_default():
        w = v1.get_variable("w", initializer=tf.constant(W0))
        m = v1.get_variable("m", initializer=tf.zeros([8, 4]))
        v = v1.get_variable("v", initializer=tf.zeros([8, 4]))
        (grad,) = tf.gradients(dense_loss(w), [w])
        lr = tf.constant(LR)
        if decay:
            outputs = npu_ops.adam_apply_one_with_decay_assign(grad, v, m, w, lr, B1, 1 - B1, B2, 1 - B2, 0.01, EPS)
        else:
            outputs = npu_ops.adam_apply_one_assign(grad, v, m, w, lr, B1, 1 - B1, B2, 1 - B2, EPS)
        train = tf.group(*outputs)
        init = v1.global_variables_initializer()
    return graph, {"grad": grad, "train": train, "init": init, "w": w, "m": m, "v": v}


def one_step(graph, ops, run_metadata=None, **options):
    """Runs one training step in a bridged session with ``options``.

    Returns:
      {"grad": the (clipped) gradient the step used, "w", "m", "v": the variables after the step}.
    """
    system.shutdown()  # precision_mode is an init option: the first initialization fixes it
    with v1.Session(graph=graph, config=npu_config(**options)) as sess:
        sess.run(ops["init"])
        grad = sess.run(ops["grad"])
        if run_metadata is None:
            sess.run(ops["train"])
        else:
            sess.run(ops["train"], options=v1.RunOptions(output_partition_graphs=True), run_metadata=run_metadata)
        w, m, v = sess.run([ops["w"], ops["m"], ops["v"]])
    return {"grad": grad, "w": w, "m": m, "v": v}


def float32_adam(grad):
    """The step in float32 numpy from a gradient: (w, m, v) after it."""
    m = (1.0 - B1) * grad
    v = (1.0 - B2) * np.square(grad)
    return W0 - LR * m / (np.sqrt(v) + EPS), m, v


def assert_fp16_gradient(grad):
    """The premise: the gradient holds fp16 values (the MatMul backprop's output), small but not zero."""
    np.testing.assert_array_equal(fp16(grad), grad)
    assert np.all(grad != 0) and np.abs(grad).max() < 5e-3


@pytest.mark.parametrize("resource", [False, True], ids=["ref", "resource"])
@pytest.mark.parametrize("assign_sub", [False, True], ids=["assign", "assign_sub"])
def test_second_moment_of_small_fp16_gradients_is_zero_under_mixed_precision(resource, assign_sub):
    graph, ops = adam_graph(resource=resource, assign_sub=assign_sub)
    plain = one_step(graph, ops)
    mixed = one_step(graph, ops, **MIXED)

    # Without mixed precision the step is Adam's: v = (1 - beta2) g^2 > 0.
    assert np.all(plain["v"] > 0)
    w, _, v = float32_adam(plain["grad"])
    np.testing.assert_allclose(plain["v"], v, rtol=1e-5)
    np.testing.assert_allclose(plain["w"], w, rtol=1e-5, atol=1e-7)

    # Mixed: g^2 and (1 - beta2) g^2 follow the fp16 gradient and underflow, so v stays exactly 0 ...
    assert_fp16_gradient(mixed["grad"])
    assert np.all(mixed["v"] == 0)
    assert np.all(mixed["m"] != 0)  # (1 - beta1) g is representable
    # ... and the step is lr * m / epsilon: proportional to g, several times float32 Adam's.
    step = W0 - mixed["w"]
    np.testing.assert_allclose(step, LR * mixed["m"] / EPS, rtol=5e-2, atol=2e-4)
    assert np.abs(step).mean() > 3 * np.abs(W0 - plain["w"]).mean()


def test_clip_by_global_norm_puts_its_scale_first_so_the_clipped_gradient_is_float32():
    """TensorFlow's arithmetic optimizer, which runs before the pass (as it ran before the adapter's NpuOptimizer
    on Ascend), reorders clip_by_global_norm's ``gradient * scale`` to ``scale * gradient``: the first input is
    the float32 scale, so the clipped gradient, its square and v are float32, and the step is Adam's on the fp16
    gradient."""
    graph, ops = adam_graph(clip=True)
    mixed = one_step(graph, ops, **MIXED)
    assert_fp16_gradient(mixed["grad"])  # the norm is below 1: the clipped gradient equals the fp16 gradient
    w, m, v = float32_adam(mixed["grad"])
    assert np.all(mixed["v"] > 0)
    np.testing.assert_allclose(mixed["v"], v, rtol=1e-5)
    np.testing.assert_allclose(mixed["w"], w, rtol=1e-5, atol=1e-7)


def test_loss_scaling_does_not_rescue_the_square_of_the_unscaled_gradient():
    # Unscaling multiplies the fp16 gradient: a gray op whose first input is fp16, so the result is fp16 again.
    graph, ops = adam_graph(loss_scale=1024.0)
    mixed = one_step(graph, ops, **MIXED)
    assert_fp16_gradient(mixed["grad"])
    assert np.all(mixed["v"] == 0)


@pytest.mark.parametrize("remedy", ["keep_dtype_scope", "modify_mixlist"])
def test_float32_optimizer_math_keeps_the_second_moment(remedy, tmp_path):
    if remedy == "keep_dtype_scope":
        graph, ops = adam_graph(keep=True)
        mixed = one_step(graph, ops, **MIXED)
    else:  # Square in the black list: v's branch is float32 (m's branch still follows the gradient)
        path = tmp_path / "mixlist.json"
        path.write_text(json.dumps({"black-list": {"to-add": ["Square"]}}))
        graph, ops = adam_graph()
        mixed = one_step(graph, ops, modify_mixlist=str(path), **MIXED)
    assert_fp16_gradient(mixed["grad"])  # the gradient is still the fp16 MatMul's
    w, m, v = float32_adam(mixed["grad"])
    assert np.all(mixed["v"] > 0)
    np.testing.assert_allclose(mixed["v"], v, rtol=1e-5)
    if remedy == "keep_dtype_scope":  # the whole update is float32 math on the fp16 gradient
        np.testing.assert_allclose(mixed["m"], m, rtol=1e-5)
        np.testing.assert_allclose(mixed["w"], w, rtol=1e-6, atol=1e-8)


def test_apply_adam_keeps_the_second_moment():
    graph = tf.Graph()
    with graph.as_default():
        w = v1.get_variable("w", initializer=tf.constant(W0))
        (grad,) = tf.gradients(dense_loss(w), [w])
        optimizer = v1.train.AdamOptimizer(LR, B1, B2, EPS)
        train = optimizer.apply_gradients([(grad, w)])
        init = v1.global_variables_initializer()
    ops = {"grad": grad, "train": train, "init": init, "w": w}
    ops.update(m=optimizer.get_slot(w, "m"), v=optimizer.get_slot(w, "v"))
    mixed = one_step(graph, ops, **MIXED)
    assert_fp16_gradient(mixed["grad"])
    # ApplyAdam updates its variables through references: never in the region, its arithmetic is float32
    # (Ascend's ApplyAdamD is black-listed).
    np.testing.assert_allclose(mixed["v"], (1.0 - B2) * np.square(mixed["grad"]), rtol=1e-4)
    assert not np.array_equal(fp16(mixed["w"]), mixed["w"])


@pytest.mark.parametrize("decay", [False, True], ids=["adam_apply_one", "with_decay"])
def test_the_fused_adam_steps_keep_float32_as_ascends_black_listed_kernels(decay):
    """AdamApplyOne* are black-listed on Ascend (float32: v > 0, w keeps float32 values); their compositions here
    are built in keep_dtype_scope, so the precision pass leaves them in float32 too."""
    mixed = one_step(*fused_adam_graph(decay), **MIXED)
    assert_fp16_gradient(mixed["grad"])
    assert np.all(mixed["v"] > 0)
    assert not np.array_equal(fp16(mixed["w"]), mixed["w"])


@pytest.mark.op_types
@pytest.mark.parametrize("resource", [False, True], ids=["ref", "resource"])
def test_gray_ops_follow_their_first_input_so_the_float32_state_stays_float32(resource):
    """Ascend's rule (docs/precision.md, "Optimizer math written by hand"): a gray op is typed after its first
    float input, inputs holding a constant or a variable's value counted last. The ops fed first by the fp16
    gradient are rounded; ``beta2 * v + ...``, the division and ``w - ...`` have float32 state first and stay
    float32, so the weight keeps float32 values."""
    graph, ops = adam_graph(resource=resource)
    run_metadata = v1.RunMetadata()
    mixed = one_step(graph, ops, run_metadata, **MIXED)
    executed = executed_nodes(run_metadata)
    rounded_outputs = {
        n.input[0].split(":")[0] for n in executed if n.op == "NpuRound" and n.attr["_npu_rounds_output"].b
    }
    assert FOLLOW_THE_GRADIENT <= rounded_outputs
    assert not (FLOAT32 | FIRST_INPUT_IS_STATE) & rounded_outputs
    by_name = {n.name: n for n in executed}
    reads = [by_name[i.split(":")[0]] for i in by_name["new_w"].input if not i.startswith("^")]
    assert "NpuRound" not in [r.op for r in reads]  # w - lr * update reads the weight as it is
    assert not np.array_equal(fp16(mixed["w"]), mixed["w"])  # (m is 0 + an fp16 value after one step)
