"""The distributed training helpers on every rank: optimizers (dense, sparse, sharded, wrapped, Keras),
npu_allreduce, module-level allreduce / reduce, the broadcast hook, function and Keras callback.
Every rank starts from different values (seeded by rank); checked by test_distributed_training."""

import numpy as np
from helpers.collectives import report

from npu_bridge.estimator.npu import npu_optimizer
from npu_bridge.estimator.npu.npu_hook import broadcast_global_variables
from npu_bridge.npu_init import *  # noqa: F401,F403

init_sess = tf.Session(config=npu_config_proto())
init_sess.run(npu_ops.initialize_system())
rank, size = get_rank_id(), get_rank_size()
rng = np.random.RandomState(rank)


def dense_model(name, optimizer_factory, steps=3):
    """Two variables trained on rank-dependent data; returns their final values."""
    with tf.Graph().as_default():
        w = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name=f"{name}_w")
        b = tf.Variable(np.ones(3, np.float32), name=f"{name}_b")
        x = tf.constant(np.full((4, 2), rank + 1.0, np.float32))
        loss = tf.reduce_sum(tf.square(tf.matmul(x, w) + b))
        train = optimizer_factory().minimize(loss)
        with tf.Session(config=npu_config_proto()) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(steps):
                sess.run(train)
            return sess.run([w, b])


report("sgd", dense_model("sgd", lambda: NPUDistributedOptimizer(tf.train.GradientDescentOptimizer(0.01))))
report("adam", dense_model("adam", lambda: NPUDistributedOptimizer(tf.train.AdamOptimizer(0.1))))
report(
    "adam_sharded",
    dense_model(
        "sharded", lambda: NPUDistributedOptimizer(tf.train.AdamOptimizer(0.1), is_weight_update_sharding=True)
    ),
)
report("adam_wrapped", dense_model("wrapped", lambda: npu_distributed_optimizer_wrapper(tf.train.AdamOptimizer(0.1))))

# Sparse gradients (IndexedSlices) of an embedding: rank r looks up rows r and 3.
with tf.Graph().as_default():
    table = tf.Variable(np.zeros((4, 2), np.float32))
    rows = tf.nn.embedding_lookup(table, tf.constant([rank, 3]))
    loss = tf.reduce_sum(rows * tf.constant([[1.0, 2.0], [3.0, 4.0]]) * (rank + 1))
    train = NPUDistributedOptimizer(tf.train.GradientDescentOptimizer(1.0)).minimize(loss)
    with tf.Session(config=npu_config_proto()) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        report("embedding", sess.run(table))

# npu_allreduce / allreduce / reduce, and the broadcast hook and function.
with tf.Graph().as_default():
    x = tf.constant([rank + 1.0, 10.0 * (rank + 1)])
    fetches = {
        "npu_allreduce_mean": npu_allreduce(x),
        "npu_allreduce_list": npu_allreduce([x, tf.constant([rank], tf.int32)], reduction="max"),
        "module_allreduce": npu_optimizer.allreduce(x),
        "module_allreduce_sum": npu_optimizer.allreduce(x, average=False),
        "module_reduce": npu_optimizer.reduce(x, root_rank=0),
    }
    v = tf.Variable([float(rank), 1.0 + rank])
    frozen = tf.Variable([float(rank)], trainable=False)
    hooks = npu_hooks_append()
    with tf.train.MonitoredTrainingSession(hooks=hooks, config=npu_config_proto()) as sess:
        for name, value in sess.run(fetches).items():
            report(name, value)
        report("hook_trainable", sess.run(v))
        report("hook_not_trainable", sess.run(frozen))
    with tf.Session(config=npu_config_proto()) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(tf.compat.v1.assign(v, [5.0 * rank, 6.0 * rank]))
        sess.run(broadcast_global_variables(1))
        report("function_from_1", sess.run(v))

# Keras: KerasDistributeOptimizer + NPUBroadcastGlobalVariablesCallback; every rank fits its own data.
with tf.Graph().as_default():
    tf.keras.backend.set_session(tf.Session(config=npu_config_proto()))
    model = tf.keras.Sequential(
        [tf.keras.layers.Dense(2, input_shape=(3,), kernel_initializer=tf.keras.initializers.RandomNormal(seed=rank))]
    )
    model.compile(KerasDistributeOptimizer(tf.keras.optimizers.legacy.SGD(0.1)), "mse")
    report("keras_initial", [w.tolist() for w in model.get_weights()])
    features = rng.normal(size=(8, 3)).astype(np.float32)
    labels = rng.normal(size=(8, 2)).astype(np.float32)
    model.fit(features, labels, batch_size=8, epochs=3, verbose=0, callbacks=npu_callbacks_append())
    report("keras", [w.tolist() for w in model.get_weights()])
    report("keras_data", [features.tolist(), labels.tolist()])
init_sess.run(npu_ops.shutdown_system())
