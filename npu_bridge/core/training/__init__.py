"""Training helpers around the user's optimizer and loop.

wrapped_optimizer      the base of the optimizer wrappers
iteration_loop         ``iterations_per_loop``: N steps per ``sess.run``
outfeed                device-to-host channels as TensorFlow queues
rank_sharded_strategy  ``NPUStrategy``
distributed/           gradient averaging, fusion, ``NPUDistributedOptimizer``, variable broadcast
loss_scale/            loss scale managers and ``NPULossScaleOptimizer``
"""
