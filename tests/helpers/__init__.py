"""What tests share: ``paths`` (the repository and tests folders), ``processes`` (fresh interpreters and what a
user's environment is), ``config`` (NpuOptimizer ConfigProtos), and one module per domain (``collectives``: rank
jobs and what workers report, ``dump``, ``profiling``, ``precision``, ``estimator``, ``tf1``, ``tf2``, and
``unprivileged_users``: running a job as a user without privileges).

``tests/`` is on sys.path in the test process (pytest's rootdir conftest) and on PYTHONPATH of the workers and
scripts tests start, so ``from helpers.<module> import ...`` works in both. Importing this package imports nothing;
``paths`` and ``collectives`` import no TensorFlow (rank workers import them first).
"""
