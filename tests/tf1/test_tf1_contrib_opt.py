"""tf.contrib.opt of the TF1 mode: every optimizer against a NumPy reference written from its documented formulas,
on ref and resource variables, with dense and sparse (tf.gather, a duplicate index) gradients."""

import numpy as np
import pytest
import tensorflow as tf

from npu_bridge.core.runtime.errors import NotProvidedError, NpuArgumentError, NpuArgumentTypeError, NpuUsageError
from npu_bridge.core.tf1 import contrib
from npu_bridge.core.tf1.optimizers import (
    AdamWOptimizer,
    LARSOptimizer,
    LazyAdamOptimizer,
    MomentumWOptimizer,
    MovingAverageOptimizer,
    NadamOptimizer,
    extend_with_decoupled_weight_decay,
)

STEPS = 4
# Exact in float32: TensorFlow keeps these (and Adam's beta powers) in float32 even for float64 variables.
LR, B1, B2, EPS = 2**-6, 0.875, 0.96875, 1e-8
WD, MOMENTUM, EETA = 0.0625, 0.875, 2**-6
RNG = np.random.default_rng(7)
COEF = RNG.normal(size=(5, 3))  # loss = scale * sum(COEF * x) + sum(x * x) / 2, x = var or tf.gather(var, INDICES)
INDICES = [3, 0, 3]  # row 3 twice: its gradient rows must be summed
SPARSE_COEF = RNG.normal(size=(3, 3))
PRESENT = sorted(set(INDICES))
INITS = {"w": RNG.normal(size=(5, 3)), "bias": RNG.normal(size=(5, 3)), "zeros": np.zeros((5, 3))}

MODES = [
    pytest.param(use_resource, sparse, id=f"{'resource' if use_resource else 'ref'}-{'sparse' if sparse else 'dense'}")
    for use_resource in (False, True)
    for sparse in (False, True)
]


def close(actual, expected):
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-7)


# -- the graph side ----------------------------------------------------------------------------------------------


def _loss(variables, sparse):
    terms = []
    for scale, var in enumerate(variables.values(), start=1):
        x = tf.gather(var, INDICES) if sparse else var
        terms.append(scale * tf.reduce_sum((SPARSE_COEF if sparse else COEF) * x) + 0.5 * tf.reduce_sum(x * x))
    return tf.add_n(terms)


def train(make_optimizer, inits, use_resource, sparse, train_op=None, dtype=np.float64):
    """Runs STEPS steps of ``make_optimizer().minimize(loss)`` (or ``train_op(optimizer, loss, variables)``).

    Returns:
      [{variable name: value after step t}] for t = 1..STEPS.
    """
    with tf.Graph().as_default():
        variables = {
            name: tf.compat.v1.get_variable(name, initializer=value.astype(dtype), use_resource=use_resource)
            for name, value in inits.items()
        }
        loss = _loss(variables, sparse)
        optimizer = make_optimizer()
        op = train_op(optimizer, loss, variables) if train_op else optimizer.minimize(loss)
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            history = []
            for _ in range(STEPS):
                session.run(op)
                history.append(session.run(variables))
    return history


# -- the NumPy side ----------------------------------------------------------------------------------------------


def gradient(w, scale, sparse):
    if not sparse:
        return scale * COEF + w
    g = np.zeros_like(w)
    for j, row in enumerate(INDICES):
        g[row] += scale * SPARSE_COEF[j] + w[row]
    return g


def reference(step, inits, sparse):
    """Runs ``step(name, w, g, slots, t) -> new w`` STEPS times; returns the history as ``train`` does."""
    w = {name: value.astype(np.float64) for name, value in inits.items()}
    slots = {name: {} for name in inits}
    history = []
    for t in range(1, STEPS + 1):
        for scale, name in enumerate(inits, start=1):
            g = gradient(w[name], scale, sparse)
            w[name] = step(name, w[name].copy(), g, slots[name], t)
        history.append({name: value.copy() for name, value in w.items()})
    return history


def adam(w, g, slots, t, nesterov=False, rows=None):
    """Adam (Nadam with ``nesterov``); ``rows``: update only these rows (LazyAdam)."""
    m = slots.setdefault("m", np.zeros_like(w))
    v = slots.setdefault("v", np.zeros_like(w))
    rows = slice(None) if rows is None else rows
    m[rows] = B1 * m[rows] + (1 - B1) * g[rows]
    v[rows] = B2 * v[rows] + (1 - B2) * g[rows] ** 2
    lr_t = LR * np.sqrt(1 - B2**t) / (1 - B1**t)
    step = B1 * m[rows] + (1 - B1) * g[rows] if nesterov else m[rows]
    w[rows] -= lr_t * step / (np.sqrt(v[rows]) + EPS)
    return w


def momentum(w, g, slots, lr, nesterov=False, rows=None):
    """TF's ApplyMomentum; ``rows``: only these rows (SparseApplyMomentum)."""
    accum = slots.setdefault("accum", np.zeros_like(w))
    rows = slice(None) if rows is None else rows
    accum[rows] = MOMENTUM * accum[rows] + g[rows]
    w[rows] -= lr * g[rows] + lr * MOMENTUM * accum[rows] if nesterov else lr * accum[rows]
    return w


def history_matches(actual, expected):
    for step, (got, want) in enumerate(zip(actual, expected), start=1):
        for name in want:
            np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-7, err_msg=f"step {step}, {name}")


def decayed(w, sparse, weight_decay=WD):
    rows = PRESENT if sparse else slice(None)
    w[rows] -= weight_decay * w[rows]
    return w


# -- the optimizers ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("use_resource, sparse", MODES)
def test_adamw_decays_every_variable_then_steps_as_adam(use_resource, sparse):
    inits = {"w": INITS["w"]}
    actual = train(lambda: AdamWOptimizer(WD, learning_rate=LR, beta1=B1, beta2=B2), inits, use_resource, sparse)
    expected = reference(lambda name, w, g, s, t: adam(decayed(w, sparse), g, s, t), inits, sparse)
    history_matches(actual, expected)
    if sparse:  # rows without a gradient are neither decayed nor moved
        for row in set(range(5)) - set(PRESENT):
            close(actual[-1]["w"][row], INITS["w"][row])


@pytest.mark.parametrize("weight_decay", [lambda: tf.constant(WD), lambda: lambda: WD], ids=["tensor", "callable"])
def test_adamw_in_float32_with_a_tensor_or_a_callable_weight_decay(weight_decay):
    inits = {"w": INITS["w"]}
    actual = train(lambda: AdamWOptimizer(weight_decay(), LR, B1, B2), inits, True, False, dtype=np.float32)
    history_matches(actual, reference(lambda name, w, g, s, t: adam(decayed(w, False), g, s, t), inits, False))


@pytest.mark.parametrize("use_resource", [False, True])
@pytest.mark.parametrize("through", ["minimize", "apply_gradients"])
@pytest.mark.parametrize("listed", [["w"], []], ids=["w", "empty"])
def test_decay_var_list_limits_the_decay_to_the_variables_in_it(use_resource, through, listed):
    # An empty list decays every variable, as TensorFlow 1.15 read it.
    inits = {"w": INITS["w"], "bias": INITS["bias"]}

    def train_op(optimizer, loss, variables):
        decay_var_list = [variables[name] for name in listed]
        if through == "minimize":
            return optimizer.minimize(loss, decay_var_list=decay_var_list)
        return optimizer.apply_gradients(optimizer.compute_gradients(loss), decay_var_list=decay_var_list)

    actual = train(
        lambda: AdamWOptimizer(WD, learning_rate=LR, beta1=B1, beta2=B2), inits, use_resource, False, train_op
    )
    decays = set(listed) or set(inits)
    expected = reference(
        lambda name, w, g, s, t: adam(decayed(w, False) if name in decays else w, g, s, t), inits, False
    )
    history_matches(actual, expected)


@pytest.mark.parametrize("use_resource, sparse", MODES)
@pytest.mark.parametrize("nesterov", [False, True])
def test_momentumw_decays_then_steps_as_momentum(use_resource, sparse, nesterov):
    inits = {"w": INITS["w"]}
    actual = train(lambda: MomentumWOptimizer(WD, LR, MOMENTUM, use_nesterov=nesterov), inits, use_resource, sparse)
    rows = PRESENT if sparse else None  # TF's sparse momentum leaves the other rows' accumulators alone
    expected = reference(lambda name, w, g, s, t: momentum(decayed(w, sparse), g, s, LR, nesterov, rows), inits, sparse)
    history_matches(actual, expected)


def test_extend_with_decoupled_weight_decay_makes_a_decaying_subclass():
    cls = extend_with_decoupled_weight_decay(tf.compat.v1.train.GradientDescentOptimizer)
    assert issubclass(cls, tf.compat.v1.train.GradientDescentOptimizer)
    inits = {"w": INITS["w"]}
    actual = train(lambda: cls(WD, LR), inits, True, False)

    def step(name, w, g, slots, t):
        return decayed(w, False) - LR * g

    history_matches(actual, reference(step, inits, False))


@pytest.mark.parametrize("use_resource, sparse", MODES)
def test_lazy_adam_moves_only_the_rows_a_sparse_gradient_has(use_resource, sparse):
    inits = {"w": INITS["w"]}
    actual = train(lambda: LazyAdamOptimizer(LR, B1, B2), inits, use_resource, sparse)
    rows = PRESENT if sparse else None
    expected = reference(lambda name, w, g, s, t: adam(w, g, s, t, rows=rows), inits, sparse)
    history_matches(actual, expected)
    if not sparse:  # dense gradients: exactly tf.compat.v1.train.AdamOptimizer
        history_matches(
            actual, train(lambda: tf.compat.v1.train.AdamOptimizer(LR, B1, B2), inits, use_resource, sparse)
        )


@pytest.mark.parametrize("use_resource", [False, True])
def test_lazy_adam_leaves_the_moments_of_rows_absent_from_a_step_alone(use_resource):
    # Every row has a gradient in step 1, only INDICES's rows later: Adam keeps moving the others, LazyAdam does not.
    steps = [[0, 1, 2, 3, 4]] + [INDICES] * (STEPS - 1)

    def run(make_optimizer):
        with tf.Graph().as_default():
            var = tf.compat.v1.get_variable("w", initializer=INITS["w"], use_resource=use_resource)
            indices = tf.compat.v1.placeholder(tf.int32, [None])
            op = make_optimizer().minimize(tf.reduce_sum(tf.gather(var, indices)))
            with tf.compat.v1.Session() as session:
                session.run(tf.compat.v1.global_variables_initializer())
                for rows in steps:
                    session.run(op, {indices: rows})
                return session.run(var)

    w, slots = INITS["w"].copy(), {}
    for t, rows in enumerate(steps, start=1):
        g = np.zeros_like(w)
        np.add.at(g, rows, 1.0)
        w = adam(w, g, slots, t, rows=sorted(set(rows)))
    lazy = run(lambda: LazyAdamOptimizer(LR, B1, B2))
    close(lazy, w)
    plain = run(lambda: tf.compat.v1.train.AdamOptimizer(LR, B1, B2))
    assert np.abs(lazy[[1, 2, 4]] - plain[[1, 2, 4]]).min() > 1e-4
    close(lazy[[0, 3]], plain[[0, 3]])


@pytest.mark.parametrize("use_resource, sparse", MODES)
def test_nadam_steps_with_nesterov_momentum_and_differs_from_adam(use_resource, sparse):
    inits = {"w": INITS["w"]}
    actual = train(lambda: NadamOptimizer(LR, B1, B2), inits, use_resource, sparse)
    history_matches(actual, reference(lambda name, w, g, s, t: adam(w, g, s, t, nesterov=True), inits, sparse))
    plain = reference(lambda name, w, g, s, t: adam(w, g, s, t), inits, sparse)
    assert np.abs(actual[-1]["w"] - plain[-1]["w"]).max() > 1e-4


def lars(skip, nesterov, sparse=False):
    """TensorFlow 1.15's LARS: the momentum accumulates the scaled update; sparse gradients get plain momentum."""

    def step(name, w, g, slots, t):
        if sparse:
            return momentum(w, g, slots, LR, nesterov, rows=PRESENT)
        lr = LR
        if name not in skip:
            w_norm, g_norm = np.linalg.norm(w), np.linalg.norm(g)
            trust = EETA * w_norm / (g_norm + WD * w_norm) if w_norm > 0 and g_norm > 0 else 1.0
            lr, g = LR * trust, g + WD * w
        return momentum(w, lr * g, slots, 1.0, nesterov)

    return step


@pytest.mark.parametrize("use_resource, sparse", MODES)
@pytest.mark.parametrize("nesterov", [False, True])
def test_lars_scales_the_rate_per_variable_except_skipped_ones(use_resource, sparse, nesterov):
    make = lambda: LARSOptimizer(  # noqa: E731
        LR, MOMENTUM, weight_decay=WD, eeta=EETA, skip_list=["bias"], use_nesterov=nesterov
    )
    actual = train(make, INITS, use_resource, sparse)
    history_matches(actual, reference(lars({"bias"}, nesterov, sparse), INITS, sparse))
    if not sparse:  # without the skip list "bias" is scaled too, and ends elsewhere
        scaled = reference(lars(set(), nesterov), INITS, sparse)
        assert np.abs(actual[-1]["bias"] - scaled[-1]["bias"]).max() > 1e-4


@pytest.mark.parametrize("use_resource", [False, True])
def test_lars_momentum_accumulates_the_trust_scaled_update(use_resource):
    # ones, a constant gradient of ones, lr 0.1, momentum 0.9, weight decay 0.1, eeta 0.1, epsilon 1e-5: by hand,
    # w after 10 steps is 0.62108 (TensorFlow 1.15); accumulating the raw gradient instead would give 0.65201.
    with tf.Graph().as_default():
        var = tf.compat.v1.get_variable("w", initializer=np.ones((3, 3)), use_resource=use_resource)
        optimizer = LARSOptimizer(0.1, momentum=0.9, weight_decay=0.1, eeta=0.1, epsilon=1e-5)
        train_op = optimizer.apply_gradients([(tf.ones((3, 3), tf.float64), var)])
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            w, accum = np.ones((3, 3)), np.zeros((3, 3))
            for _ in range(10):
                session.run(train_op)
                scaled_lr = 0.1 * 0.1 * np.linalg.norm(w) / (3.0 + 0.1 * np.linalg.norm(w) + 1e-5)
                accum = 0.9 * accum + scaled_lr * (1.0 + 0.1 * w)
                w = w - accum
                close(session.run(optimizer.get_slot(var, "momentum")), accum)
            close(session.run(var), w)
    np.testing.assert_allclose(w, 0.62108017, rtol=1e-6)


# -- MovingAverageOptimizer ----------------------------------------------------------------------------------------


@pytest.fixture
def tf1_control_flow():
    """The TF1 mode builds graphs with v1 control flow; ExponentialMovingAverage's initializer (a cond that reads the
    variable) needs it when the variable is a ref variable and initialized in the same run."""
    enabled = tf.compat.v1.control_flow_v2_enabled()
    tf.compat.v1.disable_control_flow_v2()
    yield
    if enabled:
        tf.compat.v1.enable_control_flow_v2()


def _average_of(name):
    return next(v for v in tf.compat.v1.global_variables() if v.op.name == f"{name}/ExponentialMovingAverage")


def _moving_average_graph(use_resource, num_updates=False):
    w = tf.compat.v1.get_variable("w", initializer=INITS["w"], use_resource=use_resource)
    step = tf.compat.v1.train.get_or_create_global_step()
    optimizer = MovingAverageOptimizer(
        tf.compat.v1.train.GradientDescentOptimizer(0.1), average_decay=0.5, num_updates=step if num_updates else None
    )
    train_op = optimizer.minimize(tf.reduce_sum(COEF * w), global_step=step)
    return w, optimizer, train_op


@pytest.mark.parametrize("use_resource", [False, True])
@pytest.mark.parametrize("num_updates", [False, True])
def test_moving_average_follows_the_variable_after_each_update(use_resource, num_updates, tf1_control_flow):
    with tf.Graph().as_default():
        w, _, train_op = _moving_average_graph(use_resource, num_updates)
        average = _average_of("w")
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            want_w, want_average = INITS["w"].copy(), INITS["w"].copy()
            for t in range(1, STEPS + 1):
                session.run(train_op)
                want_w = want_w - 0.1 * COEF
                decay = min(0.5, (1 + t) / (10 + t)) if num_updates else 0.5
                want_average = decay * want_average + (1 - decay) * want_w
                close(session.run(w), want_w)
                close(session.run(average), want_average)


@pytest.mark.parametrize("use_resource", [False, True])
def test_swapping_saver_writes_the_averages_under_the_variables_names(use_resource, tmp_path, tf1_control_flow):
    path = str(tmp_path / "model.ckpt")
    with tf.Graph().as_default():
        w, optimizer, train_op = _moving_average_graph(use_resource)
        saver = optimizer.swapping_saver()
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            for _ in range(STEPS):
                session.run(train_op)
            trained, averaged = session.run([w, _average_of("w")])
            saver.save(session, path)
    assert np.abs(trained - averaged).max() > 1e-3
    with tf.Graph().as_default():  # a plain evaluation graph gets the averages
        plain = tf.compat.v1.get_variable("w", shape=(5, 3), dtype=tf.float64, use_resource=use_resource)
        with tf.compat.v1.Session() as session:
            tf.compat.v1.train.Saver([plain]).restore(session, path)
            close(session.run(plain), averaged)
    with tf.Graph().as_default():  # the training graph gets back what it saved
        w, optimizer, _ = _moving_average_graph(use_resource)
        with tf.compat.v1.Session() as session:
            optimizer.swapping_saver().restore(session, path)
            close(session.run(w), trained)
            close(session.run(_average_of("w")), averaged)


@pytest.mark.parametrize("use_resource", [False, True])
def test_swapping_saver_writes_a_partitioned_variable_under_its_full_name(use_resource, tmp_path, tf1_control_flow):
    path = str(tmp_path / "model.ckpt")
    init = RNG.normal(size=(4, 3))
    with tf.Graph().as_default():
        w = tf.compat.v1.get_variable(
            "w",
            initializer=tf.constant(init),
            use_resource=use_resource,
            partitioner=tf.compat.v1.fixed_size_partitioner(2),
        )
        optimizer = MovingAverageOptimizer(tf.compat.v1.train.GradientDescentOptimizer(0.5), average_decay=0.5)
        train_op = optimizer.minimize(tf.reduce_sum(tf.constant(COEF[:4]) * tf.convert_to_tensor(w)))
        saver = optimizer.swapping_saver()
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            session.run(train_op)
            saver.save(session, path)
    trained = init - 0.5 * COEF[:4]
    averaged = 0.5 * init + 0.5 * trained
    keys = dict(tf.compat.v1.train.list_variables(path))
    assert keys == {"w": [4, 3], "w/ExponentialMovingAverage": [4, 3]}
    reader = tf.compat.v1.train.NewCheckpointReader(path)
    close(reader.get_tensor("w"), averaged)
    close(reader.get_tensor("w/ExponentialMovingAverage"), trained)


def test_swapping_saver_refuses_a_variable_without_its_average(tf1_control_flow):
    with tf.Graph().as_default():
        w, optimizer, _ = _moving_average_graph(use_resource=True)
        with pytest.raises(NpuArgumentError, match=r"var_list holds w but not w/ExponentialMovingAverage"):
            optimizer.swapping_saver(var_list=[w])
        with pytest.raises(ValueError, match=r"holds w/ExponentialMovingAverage but not w,"):
            optimizer.swapping_saver(var_list={"avg": _average_of("w")})
        optimizer.swapping_saver(var_list=[w, _average_of("w")])  # both: fine


@pytest.mark.parametrize("use_resource", [False, True])
def test_lazy_adam_slots_have_tensorflow_1_15s_adam_names(use_resource, tmp_path):
    path = str(tmp_path / "adam.ckpt")
    with tf.Graph().as_default():  # a checkpoint as TensorFlow 1.15's LazyAdamOptimizer (named "Adam") wrote it
        w = tf.compat.v1.get_variable("w", initializer=INITS["w"], use_resource=use_resource)
        train_op = tf.compat.v1.train.AdamOptimizer(LR).minimize(tf.reduce_sum(tf.gather(w, INDICES)))
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            session.run(train_op)
            written = {v.op.name: session.run(v) for v in tf.compat.v1.global_variables()}
            tf.compat.v1.train.Saver().save(session, path)
    assert sorted(written) == ["beta1_power", "beta2_power", "w", "w/Adam", "w/Adam_1"]
    with tf.Graph().as_default():
        w = tf.compat.v1.get_variable("w", shape=(5, 3), dtype=tf.float64, use_resource=use_resource)
        optimizer = LazyAdamOptimizer(LR)
        optimizer.minimize(tf.reduce_sum(tf.gather(w, INDICES)))
        assert optimizer.get_slot(w, "m").op.name == "w/Adam"
        assert optimizer.get_slot(w, "v").op.name == "w/Adam_1"
        with tf.compat.v1.Session() as session:
            tf.compat.v1.train.Saver().restore(session, path)
            for v in tf.compat.v1.global_variables():
                close(session.run(v), written[v.op.name])


# -- bad arguments, wrong order, the contrib route -------------------------------------------------------------------


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: AdamWOptimizer(-0.1), r"AdamWOptimizer: weight_decay must be a number >= 0.0, got -0.1"),
        (lambda: AdamWOptimizer(0.1, beta1=1.0), r"AdamWOptimizer: beta1 must be a number in \[0.0, 1.0\), got 1.0"),
        (lambda: AdamWOptimizer(0.1, epsilon=float("nan")), r"epsilon must be a number >= 0.0, got nan"),
        (lambda: MomentumWOptimizer(0.1, 0.1, -0.9), r"MomentumWOptimizer: momentum must be a number >= 0.0"),
        (lambda: LazyAdamOptimizer(learning_rate=-1), r"LazyAdamOptimizer: learning_rate must be .*got -1"),
        (lambda: NadamOptimizer(beta2=1.5), r"NadamOptimizer: beta2 must be a number in \[0.0, 1.0\), got 1.5"),
        (lambda: LARSOptimizer(0.1, eeta=-1.0), r"LARSOptimizer: eeta must be a number >= 0.0, got -1.0"),
        (lambda: LARSOptimizer(0.1, weight_decay=-1e-4), r"LARSOptimizer: weight_decay must be"),
        (
            lambda: MovingAverageOptimizer(tf.compat.v1.train.GradientDescentOptimizer(0.1), average_decay=1.5),
            r"MovingAverageOptimizer: average_decay must be a number in \[0.0, 1.0\], got 1.5",
        ),
    ],
)
def test_bad_hyperparameters_raise_naming_the_argument(make, message):
    with pytest.raises(NpuArgumentError, match=message):
        make()


def test_wrong_types_and_call_order_raise_the_projects_errors():
    with pytest.raises(NpuArgumentTypeError, match="opt must be a tf.compat.v1.train.Optimizer, got str"):
        MovingAverageOptimizer("sgd")
    with pytest.raises(NpuArgumentTypeError, match="AdamWOptimizer: learning_rate must be a number"):
        AdamWOptimizer(0.1, learning_rate="fast")
    with tf.Graph().as_default():
        w = tf.compat.v1.get_variable("w", initializer=INITS["w"])
        optimizer = AdamWOptimizer(WD)
        with pytest.raises(NpuArgumentTypeError, match="decay_var_list must hold variables"):
            optimizer.minimize(tf.reduce_sum(w), decay_var_list=[tf.constant(1.0)])
        averaging = MovingAverageOptimizer(tf.compat.v1.train.GradientDescentOptimizer(0.1))
        with pytest.raises(NpuUsageError, match="swapping_saver: call apply_gradients \\(or minimize\\) first"):
            averaging.swapping_saver()


def test_tf_contrib_opt_routes_to_these_optimizers():
    opt = contrib.ContribModule("", None, tf).opt
    assert opt.AdamWOptimizer is AdamWOptimizer
    assert opt.LARSOptimizer is LARSOptimizer
    assert opt.MovingAverageOptimizer is MovingAverageOptimizer
    assert opt.ScipyOptimizerInterface.__module__ == "npu_bridge.core.tf1.optimizers.scipy_interface"
    with pytest.raises(NotProvidedError, match=r"tf\.contrib\.opt\.ElasticAverageOptimizer is not provided"):
        opt.ElasticAverageOptimizer  # noqa: B018
