"""``npu-run``: starts the rank processes of a job on this machine (``python -m npu_bridge.core.launch``).

  plan        which ranks run here, with which environment; the generated rank table; free ports
  supervisor  starts them, prefixes their output with the rank, stops them all when one fails or on Ctrl-C
  rank_guard  ties each rank to the launcher: a launcher that dies by any signal takes its ranks with it
  cli         the command line

This package must not import TensorFlow: ``npu_bridge/__init__.py`` stays light when the launcher runs.
"""
