"""The dump step: how a bridged session dumps, detects overflows and captures failing ops, and its run hook.

Setup, for a session with enable_dump, enable_dump_debug or enable_exception_dump=1:
  * the session's pass plan gets what the NpuOptimizer passes (optimizers/passes/dump_pass.cc,
    overflow_check_pass.cc, exception_capture_pass.cc) need: the dump root {dump_path}/{time}/{device id}
    (``npu_bridge.core.dump.dump_root``), what to dump (dump_mode, dump_data), the parsed dump_step ranges and
    dump_layer names, the simulated Ascend backend's fp16 rule, whether golden .npy files are written
    (NPU_BRIDGE_DUMP_GOLDEN, default 1) and the exception dump directory (``dump.exception_directory``);
  * TensorFlow's remapper and arithmetic optimizer, which fuse ops or replace them by ops of other names, are
    turned off for the session, so every op of the script is dumped and checked under its own name (Ascend
    scripts turn the remapper off anyway);
  * a ``DumpRunHook`` is attached.

Each dump root gets {root}/run_config.json (``dump.run_config``: the options, HCCL_* / ASCEND_* / NPU_BRIDGE_*
variables without secrets, versions, seeds), written at setup and again with the graph's seed at the first run.

The hook costs one call into the library per run. Every few seconds (and when the session closes and the process
exits) ``dump.writer_watch`` adds the ops that got new dump files to {root}/op_sources.json, where each was created
in the user's code (looked up once per op). When the writer has news it hands over to ``dump.writer_watch``, which
warns once about overflows, notes where each overflowing op was created (op_sources.json too) and rewrites
{root}/overflow_report.txt (at most every few seconds, and when the session closes and the process exits). When a
run fails in a session with enable_exception_dump=1, it writes the failed op's inputs and says where in the error
(and where the op was created).
"""

import itertools
import re

from tensorflow.core.protobuf import rewriter_config_pb2

from npu_bridge.core.dump import dump_root, dump_writer, exception_directory, op_sources, run_config, writer_watch
from npu_bridge.core.options import checks
from npu_bridge.core.runtime import log, safe_paths
from npu_bridge.core.session.step_api import RunHook, with_note

_FAILED_NODE = re.compile(r"\{\{node ([^}]+)\}\}")
_session_ids = itertools.count(1)


def setup(plan):
    """Prepares a session that dumps, detects overflows or captures failing ops."""
    options = plan.options
    dumping, debugging = options.get("enable_dump"), options.get("enable_dump_debug")
    capturing = options.get("enable_exception_dump") == 1
    if not (dumping or debugging or capturing):
        return
    pass_plan = plan.pass_plan
    # The environment is checked before anything is recorded or written for the session.
    capture_dir = exception_directory.exception_dir(plan.world.device_id) if capturing else None
    directory_mode = safe_paths.directory_mode(dump_writer.configure_from_environment())
    session_id = next(_session_ids)
    if dumping or debugging:
        base = options.get("dump_path")
        root = dump_root.session_root(base, plan.world.device_id, directory_mode)
        golden = dump_writer.golden_files_wanted()
        pass_plan.dump_root = root
        pass_plan.dump_base = base
        pass_plan.overflow_check = bool(debugging)
        pass_plan.overflow_fp16_saturation = bool(debugging) and plan.backend == "ascend"
        _keep_op_names(plan.config.graph_options.rewrite_options)
        writer_watch.open_root(root, base, directory_mode)
        writer_watch.record_run_config(root, run_config.collect(options, plan.backend))
        if pass_plan.function_graphs:
            op_sources.note_function_graphs()  # no run hook runs for them: their graphs are noted when traced
            writer_watch.watch_function_graphs()  # ... and their dumps polled while the process runs
    if dumping:
        pass_plan.dump_enabled = True
        pass_plan.dump_inputs = options.get("dump_mode") != "output"
        pass_plan.dump_outputs = options.get("dump_mode") != "input"
        pass_plan.dump_stats = options.get("dump_data") == "stats"
        pass_plan.dump_golden = golden and not pass_plan.dump_stats
        step = options.get("dump_step")
        pass_plan.dump_steps = checks.dump_step_ranges(step) if step is not None else ()
        pass_plan.dump_layers = tuple((options.get("dump_layer") or "").split())
    if capturing:
        pass_plan.exception_dump = True
        pass_plan.exception_dir = capture_dir
        pass_plan.exception_base = exception_directory.exception_base(capture_dir)
        pass_plan.session_id = session_id
    writer_watch.finish_at_exit()
    hook = DumpRunHook(session_id, capturing, pass_plan.dump_layers, pass_plan.dump_root or None)
    hook.run_config = (options, plan.backend) if pass_plan.dump_root else None
    plan.run_hooks.append(hook)


def _keep_op_names(rewrite_options):
    """Turns off the grappler passes that fuse ops or replace them by ops of other names."""
    off = rewriter_config_pb2.RewriterConfig.OFF
    changed = [name for name in ("remapping", "arithmetic_optimization") if getattr(rewrite_options, name) != off]
    for name in changed:
        setattr(rewrite_options, name, off)
    if changed:
        log.info_once(
            "dump-keeps-op-names",
            "dump: TensorFlow's %s are off in sessions that dump or detect "
            "overflows, so every op is dumped and checked under its own name",
            " and ".join(changed),
        )


class DumpRunHook(RunHook):
    """Watches the runs of one dumping session."""

    def __init__(self, session_id, capturing, layer=(), root=None):
        self._session_id, self._capturing = session_id, capturing
        self._unchecked_layer = layer
        self._root = root
        self.run_config = None  # (options, backend) until the first run writes them with the graph's seed

    def after_run(self, context, results):
        op_sources.note_graph(context.session.graph)
        if self._unchecked_layer:
            _warn_unknown_layer_ops(context.session.graph, self._unchecked_layer)
            self._unchecked_layer = ()
        if self._root is not None:
            if self.run_config is not None:
                options, backend = self.run_config
                self.run_config = None
                seed = context.session.graph.seed
                writer_watch.record_run_config(self._root, run_config.collect(options, backend, graph_seed=seed))
            writer_watch.note_dumped_ops(self._root)
        if writer_watch.has_news():
            writer_watch.poll()

    def run_failed(self, context, error):
        """Writes the failed op's inputs (enable_exception_dump=1) and adds where to the error."""
        op_sources.note_graph(context.session.graph)
        writer_watch.poll()
        if not self._capturing:
            return None
        match = _FAILED_NODE.search(str(error))
        if match is None:
            return None
        node = match.group(1)
        result = dump_writer.exception_dump(f"{self._session_id}/{node}")
        if "path" in result:
            site = op_sources.creation_site(result["op_name"])
            created = f", created at {site}" if site else ""
            note = (
                f"npu_bridge exception dump: the {result['inputs']} inputs of {result['op_type']} "
                f"{result['op_name']} (the op that failed{created}) were written to {result['path']}; read them "
                f"with `npu-dump info {result['path']}`"
            )
        else:
            note = f"npu_bridge exception dump: the inputs of {node} were not captured ({result['error']})"
        log.logger.warning("%s", note)
        return with_note(error, note)

    def end(self, session):
        writer_watch.session_closed(self._root)


def _warn_unknown_layer_ops(graph, names):
    existing = {op.name for op in graph.get_operations()}
    unknown = [name for name in names if name not in existing]
    if unknown:
        log.warn_once(
            ("dump-layer-unknown", tuple(unknown)),
            "dump_layer names ops this session's graph does not have, so they are not dumped: %s",
            ", ".join(unknown),
        )
