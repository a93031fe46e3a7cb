"""Process-level resources: ``npu_resource_init`` / ``npu_resource_shutdown`` / ``npu_close`` and the
``init_resource`` / ``shutdown_resource`` / ``close_session`` helpers of ``npu_init``."""

from npu_bridge.core.options import environment_options
from npu_bridge.core.options import parse as option_parse
from npu_bridge.core.runtime import close_callbacks, job_values, log, system
from npu_bridge.core.runtime.errors import NpuArgumentError
from npu_bridge.core.session import config_proto, system_ops
from npu_bridge.core.world import world

# npu_resource_init's argument names that are not the name of their option
ARGUMENT_OPTIONS = {"enable_profiling": "profiling_mode"}


def npu_resource_init(
    graph_run_mode=1,
    op_debug_level=0,
    enable_profiling=False,
    profiling_options=None,
    precision_mode=None,
    enable_scope_fusion_passes=None,
    enable_exception_dump=2,
    aoe_mode=None,
    work_path=None,
    op_compiler_cache_mode=None,
    op_compiler_cache_dir=None,
    debug_dir=None,
    hcom_multi_mode=False,
    distribute_config=None,
    aoe_config_file=None,
    precision_mode_v2=None,
    export_compile_stat=1,
    aicore_num=None,
    oo_constant_folding=True,
    input_batch_cpy=False,
    oo_level="O3",
    optimization_switch=None,
):
    """Initializes the NPU system globally for this process (upstream's ``PluginInit``).

    Afterwards ``NPUInit`` / ``NPUShutdown`` ops do nothing and every session uses these init options.
    Arguments are the init options of the same name (``enable_profiling`` is ``profiling_mode``); None means
    "not set".

    Returns:
      True if this call initialized the system, False if it was already initialized.
    Raises:
      NpuOptionError: an argument has a bad value.
      ValueError: ``enable_profiling`` without ``profiling_options`` (as upstream).
    """
    arguments = dict(locals())  # every argument is the init option of its name (ARGUMENT_OPTIONS: upstream's others)
    if enable_profiling and profiling_options is None:
        raise NpuArgumentError("profiling_options must be set when use profiling")
    values = {ARGUMENT_OPTIONS.get(name, name): value for name, value in arguments.items()}
    options = option_parse.parse_values({k: v for k, v in values.items() if v is not None}, source="npu_resource_init")
    options = environment_options.apply(options)
    world.environment_world()
    initialized = system.initialize(options.by_stage("init"), "resource_init", is_global=True)
    if not initialized:
        log.warn_once(
            "resource-init-again",
            "npu_resource_init: the NPU system was already initialized (by %s); its init options stay in force",
            system.state().source,
        )
    return initialized


def npu_resource_shutdown():
    """Shuts down the system started by ``npu_resource_init`` (or any other initialization)."""
    system.shutdown(force=True)


def npu_close():
    """Releases every npu_bridge resource; registered with ``atexit`` when npu_bridge switches on."""
    close_callbacks.run_all()
    system.shutdown(force=True)


def init_resource(config=None):
    """Initializes the system in a new session of the default graph, as upstream's ``init_resource``.

    Args:
      config: a ConfigProto with the NpuOptimizer options to initialize with (made an NPU config if needed).
    Returns:
      ``(session, shutdown_op)``: keep the session, later pass both to ``shutdown_resource``.
    """
    import tensorflow as tf

    config = config_proto.npu_config_proto(config)
    job_values.global_dict_init()
    init_op = system_ops.initialize_system()
    shutdown_op = system_ops.shutdown_system()
    sess = tf.compat.v1.Session(config=config)
    sess.run(init_op)
    current = world.current_world()
    job_values.set_value("npu_rank_id", current.rank_id)
    job_values.set_value("npu_local_rank_id", current.local_rank_id)
    job_values.set_value("npu_rank_size", current.rank_size)
    job_values.set_value("npu_local_rank_size", current.local_rank_size)
    return sess, shutdown_op


def shutdown_resource(sess, npu_shutdown):
    """Runs the shutdown op returned by ``init_resource`` in its session."""
    sess.run(npu_shutdown)


def close_session(sess):
    """Closes ``sess``."""
    sess.close()


def get_npu_rank_id():
    """This process's rank id cached by ``init_resource``."""
    return job_values.get_value("npu_rank_id", 0)


def get_npu_local_rank_id():
    """This process's local rank id cached by ``init_resource``."""
    return job_values.get_value("npu_local_rank_id", 0)


def get_npu_rank_size():
    """The world size cached by ``init_resource``."""
    return job_values.get_value("npu_rank_size", 1)


def get_npu_local_rank_size():
    """The number of ranks on this server cached by ``init_resource``."""
    return job_values.get_value("npu_local_rank_size", 1)
