"""The session bridge: how a TF1 session with an ``NpuOptimizer`` config becomes an npu_bridge session.

Once npu_bridge is switched on (``npu_bridge.core.activation``), ``BaseSession.__init__`` -- the
constructor that ``tf.compat.v1.Session`` and ``InteractiveSession`` both call (upstream patches those two
subclasses) -- calls ``create_session``. Every session created afterwards -- directly, by
``MonitoredTrainingSession`` or by Keras -- passes through ``bridge_config``. Sessions whose config has no
``NpuOptimizer`` entry are left exactly as they are, unless ``npu_bridge.npu_init`` was imported: like
upstream, that import makes every session an NPU session (``inject_npu_config``).

For a bridged session the bridge:
  1. validates the parameter_map through the option table (a bad value raises here, at session creation);
  2. applies the process-wide init options if the system is already initialized (as on Ascend, the first
     initialization fixes them; a differing session value is logged once and ignored);
  3. writes one normalized ``NpuOptimizer`` entry back (merging several entries) and sets
     ``min_graph_nodes = -1`` so even the one-node ``initialize_system`` graph is optimized; it turns
     ``place_pruned_graph`` off (``InteractiveSession`` turns it on), because TF skips Grappler -- and so the
     NpuOptimizer pass -- for pruned-graph placement;
  4. plans the session (``npu_bridge.core.session.planner``): resolves the collective world (device id,
     rank table -- a malformed rank table fails here) and the backend once, runs the capabilities' setup
     steps, which map options onto TensorFlow's own machinery, may redirect the target and may attach run
     hooks, and writes the pass plan for the C++ passes (``npu_bridge.core.plan.pass_contract``);
  5. makes repeated runs of the same fetches and feed keys skip TensorFlow's per-run Python work
     (``npu_bridge.core.session.repeated_runs``).
The user's ConfigProto is never modified: the session gets a copy. Steps 2-4 are ``plan_validated``, which TF2's
``npu_device.open()`` calls directly, for its function graphs, with the options it validated from
``global_options()`` and the world it resolved: the same planning from the same options, without a parameter_map
in between.
"""

from tensorflow.core.protobuf import config_pb2

from npu_bridge.core.options import environment_options
from npu_bridge.core.options import parse as option_parse
from npu_bridge.core.runtime import log, native_library, system
from npu_bridge.core.runtime.errors import NpuUsageError
from npu_bridge.core.session import config_proto, planner, repeated_runs, run_hooks
from npu_bridge.core.session.step_api import PLAN_ATTRIBUTE, SessionPlan

OPTIONS_ATTRIBUTE = option_parse.SESSION_ATTRIBUTE  # set on every bridged session instance

_inject_all = False


def create_session(original_init, session, target, graph, config):
    """Creates ``session`` through TensorFlow's ``BaseSession.__init__`` as a bridged session.

    ``npu_bridge.core.activation`` wraps ``BaseSession.__init__`` so that it calls this.

    Args:
      original_init: TensorFlow's ``BaseSession.__init__``.
      session, target, graph, config: its arguments.
    Raises:
      The errors of ``bridge_config``; the session is then never created.
    """
    try:
        plan = bridge_config(target, config)
    except Exception:
        session._session = None  # BaseSession.__del__ reads it
        raise
    original_init(session, plan.target, graph, plan.config)
    setattr(session, OPTIONS_ATTRIBUTE, plan.options)
    setattr(session, PLAN_ATTRIBUTE, plan)
    if plan.options is not None:
        repeated_runs.install(session)
    run_hooks.attach_run_hooks(session, plan.run_hooks)


def inject_npu_config(enabled=True):
    """Makes every new session an NPU session (upstream's behaviour after ``from npu_bridge.npu_init import *``).

    Args:
      enabled: True to add the NpuOptimizer config to sessions created without one.
    """
    global _inject_all
    _inject_all = bool(enabled)


def bridge_config(target, config):
    """Decides how a session is created.

    Args:
      target: the session target the user passed.
      config: the ConfigProto the user passed (or None).
    Returns:
      A ``SessionPlan``: target and config to create the session with, the validated
      ``NpuOptions`` (None for a session that is not bridged) and run hooks to attach.
    Raises:
      NpuOptionError: an option has a bad value.
      RankTableError, DeviceIdError: the collective world is misconfigured.
      RuntimeError: the C++ library is not loaded, so the session cannot be bridged.
    """
    if config is None and _inject_all:
        config = config_pb2.ConfigProto()
    if not isinstance(config, config_pb2.ConfigProto):
        return SessionPlan(options=None, config=config, target=target)
    if not config_proto.has_npu_optimizer(config):
        if not _inject_all:
            return SessionPlan(options=None, config=config, target=target)
        config = config_proto.npu_config_proto(_copy(config))
    log.configure()
    if not native_library.is_loaded():
        raise NpuUsageError(
            "npu_bridge: this session's config names NpuOptimizer but the npu_bridge C++ library is not "
            "loaded, so the session would silently run without it. Import npu_bridge before creating sessions "
            f"and check that it imports without errors. {native_library.REBUILD_HINT}"
        )
    return plan_validated(option_parse.parse_config(config), config, target)


def plan_validated(options, config, target="", world=None, function_graphs=False):
    """Plans a bridged session, or TF2's function graphs, from options validated once by the caller.

    Args:
      options: the validated ``NpuOptions``.
      config: the ConfigProto to plan on (not modified); its NpuOptimizer entries become one, appended if it has
        none.
      target: the session target.
      world: the collective ``World``, when the caller already resolved it for the options' device id.
      function_graphs: plan for TF2 function graphs instead of a session's graphs (``npu_device``).
    Returns:
      The ``SessionPlan``.
    Raises:
      RankTableError, DeviceIdError: the collective world is misconfigured.
      NpuOptionError: a setup step rejects the options.
      EnvironmentVariableError: NPU_BRIDGE_OPTIONS is malformed or sets invalid options.
    """
    options = _with_process_init_options(environment_options.apply(options))
    bridged = _copy(config)
    _write_single_entry(bridged, options)
    bridged.graph_options.rewrite_options.min_graph_nodes = -1
    bridged.graph_options.place_pruned_graph = False
    return planner.plan_session(options, bridged, target, function_graphs, world)


def _copy(config):
    copied = config_pb2.ConfigProto()
    copied.CopyFrom(config)
    return copied


def _with_process_init_options(options):
    """Imposes the init-stage options of an already initialized system, as Ascend does."""
    state = system.state()
    if not state.initialized:
        return options
    in_force = state.init_options
    session_init = options.by_stage("init")
    overrides = {}
    for key in sorted(set(session_init) | set(in_force)):
        if session_init.get(key) != in_force.get(key):
            overrides[key] = in_force.get(key)
            if options.is_set(key):
                log.warn_once(
                    ("init-option-ignored", key, repr(session_init.get(key))),
                    "NpuOptimizer option %s=%r is an init option; the NPU system was already initialized "
                    "(by %s) with %r, which stays in force for this process as on Ascend",
                    key,
                    session_init.get(key),
                    state.source,
                    in_force.get(key),
                )
    return options.with_values(overrides) if overrides else options


def _write_single_entry(config, options):
    """Replaces every NpuOptimizer entry by one normalized entry at the position of the first (appended when
    there is none)."""
    custom = config.graph_options.rewrite_options.custom_optimizers
    kept = list(custom)
    del custom[:]
    written = False
    for entry in kept:
        if entry.name != config_proto.NPU_OPTIMIZER:
            custom.add().CopyFrom(entry)
        elif not written:
            _add_entry(custom, options)
            written = True
    if not written:
        _add_entry(custom, options)


def _add_entry(custom, options):
    entry = custom.add()
    entry.name = config_proto.NPU_OPTIMIZER
    options.write_parameter_map(entry)  # the pass-contract keys follow when the plan is done


def decorator_tf_session(session_init):
    """Wraps a ``Session.__init__`` so every session it creates gets an NPU config (upstream's decorator).

    Args:
      session_init: an ``__init__(self, target='', graph=None, config=None)`` function.
    Returns:
      The wrapped function; the config passed to ``session_init`` is a copy edited by ``npu_config_proto``.
    """

    def __init__(self, target="", graph=None, config=None):  # noqa: N807 (it replaces a class's __init__)
        config = _copy(config) if isinstance(config, config_pb2.ConfigProto) else None
        return session_init(self, target, graph, config_proto.npu_config_proto(config))

    __init__.__doc__ = session_init.__doc__
    __init__.__wrapped__ = session_init
    return __init__
