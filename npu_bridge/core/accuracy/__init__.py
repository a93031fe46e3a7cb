"""Accuracy debugging: finding the ops whose reduced precision explains a divergence (``npu-debug``).

``npu-debug bisect -- COMMAND`` runs a script under the float32 reference (``must_keep_origin_dtype``) and under
its own precision, then keeps sets of ops in float32 through ``NPU_BRIDGE_OPTIONS`` (``customize_dtypes``) until
it has the smallest set that brings the script's metric back. Imports no TensorFlow.

  cli            the ``npu-debug`` command line
  bisection      one bisection: its runs in order, the files it writes
  search         the search over ordered candidates, one culprit at a time, and its bound on runs
  candidates     the candidate ops, from the dump of the reference run's first step, in data order
  fix_files      customize_dtypes lines and modify_mixlist black lists that keep ops in float32
  metric         the metric a script prints, and the tolerance check
  script_runs    running the command once with options set, in its own process group
  bisect_report  the text report
  __main__       ``python -m npu_bridge.core.accuracy``
"""
