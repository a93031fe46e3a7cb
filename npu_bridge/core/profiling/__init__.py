"""Profiling: Ascend-style profiles of training built on TensorFlow's own step stats.

Bridged sessions are traced by the session layer's profiling step (``npu_bridge.core.session.steps.profiling``).

settings        what a profile collects (profiling_mode / profiling_options / env / Profiler)
recorder        the profile being recorded in this process; raw data (raw_trace) and lifecycle; what a run is
                recorded under (run_signature) and with (profile_context)
profiler_trace  TensorFlow profiler traces of TF2 function calls -> step stats (npu_device)
export          raw data -> op_summary / op_statistic / step_trace CSVs and the timeline (msprof JSON)
summary, report the headline numbers, the console summary and the HTML report
profiler_scope  the ``Profiler`` context manager; profiling_config: ``ProfilingConfig``
cli             ``npu-prof``

step_stats      TensorFlow's step stats of one run -> op executions, split into training iterations
graph_tensors   the inputs and outputs of a graph's nodes, for step stats that lack them
models          graphs ("models" in Ascend's profile) and their training-trace points
op_classes      what each executed TensorFlow node is, for an Ascend-style profile
streams         lays a run's ops onto streams, rows on which no two ops overlap
roofline        estimated Ascend 910 durations (a roofline model) on the simulated Ascend backend
columns         the column names of the exported CSVs
layout          where a profile's files are
charts          the report's SVG charts
"""
