"""Profiling: Ascend-style profiles of training built on TensorFlow's own step stats.

settings        what a profile collects (profiling_mode / profiling_options / env / Profiler)
session_step    the setup step and the run hook of profiled sessions; traced runs ask TensorFlow for step stats
recorder        the profile being recorded in this process; raw data (raw_trace) and lifecycle
profiler_trace  TensorFlow profiler traces of TF2 function calls -> step stats (npu_device)
export          raw data -> op_summary / op_statistic / step_trace CSVs and the timeline (msprof JSON)
summary, report the headline numbers, the console summary and the HTML report
profiler_scope  the ``Profiler`` context manager; profiling_config: ``ProfilingConfig``
cli             ``npu-prof``
"""
