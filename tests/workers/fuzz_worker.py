"""Runs a batch of fuzz cases in this process and reports one JSON line per case (driven by tests/fuzz/fuzz_helpers.py).

    python fuzz_worker.py SCENARIO CASES_JSON FIRST_CASE

The lines go to the file descriptor named by FUZZ_RESULT_FD, so nothing a case prints can be mistaken for a
result. A case that kills the process (a signal, an abort) or hangs is noticed by the parent, which restarts
this worker after that case. Scenarios:

  option      one NpuOptimizer parameter_map value: a ConfigProto, a session, a trivial op run
  env         environment variables, then one driver (a session, system initialization, NPUEstimator, ...)
  cli         one command-line tool's main(argv), in this process, with file descriptors 1 and 2 captured
  seed_trees  writes a real dump tree and a real profile for the cli cases to corrupt
"""

import base64
import contextlib
import json
import os
import sys
import tempfile
import time
import traceback

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

_RESULT_FD = int(os.environ["FUZZ_RESULT_FD"])
_MESSAGE_LIMIT = 3000  # characters of an error message sent back (the full length is sent too)


def _report(record):
    data = (json.dumps(record) + "\n").encode()
    while data:
        data = data[os.write(_RESULT_FD, data) :]


def _exception_record(e):
    from npu_bridge.core.runtime.errors import NpuBridgeError

    message = str(e)
    return {
        "result": "raised",
        "type": f"{type(e).__module__}.{type(e).__qualname__}",
        "project": isinstance(e, NpuBridgeError),
        "key": getattr(e, "key", None) if isinstance(e, NpuBridgeError) else None,
        "message": message[:_MESSAGE_LIMIT],
        "length": len(message),
        "traceback": "".join(traceback.format_exception(type(e), e, e.__traceback__))[-2000:],
    }


# --- AttrValues ----------------------------------------------------------------------------------------------


def _bytes(encoded):
    return base64.b64decode(encoded["b64"])


def set_attr(attr, field, value):
    """Writes one encoded value (see fuzz_helpers.encode_attr) into an AttrValue."""
    import tensorflow as tf

    if field == "s":
        attr.s = _bytes(value)
    elif field == "i":
        attr.i = value
    elif field == "b":
        attr.b = value
    elif field == "f":
        attr.f = float(value)
    elif field == "list_i":
        attr.list.i.extend(value)
    elif field == "list_s":
        attr.list.s.extend(_bytes(v) for v in value)
    elif field == "type":
        attr.type = value
    elif field == "shape":
        attr.shape.CopyFrom(tf.TensorShape(value).as_proto())
    elif field == "tensor":
        attr.tensor.CopyFrom(tf.make_tensor_proto(value))
    elif field == "func":
        attr.func.name = value
    elif field == "placeholder":
        attr.placeholder = value
    elif field != "none":
        raise ValueError(f"unknown field {field}")


def npu_config(options):
    """A ConfigProto with one NpuOptimizer entry holding ``options`` ({key: [field, encoded value]})."""
    import tensorflow as tf

    config = tf.compat.v1.ConfigProto()
    entry = config.graph_options.rewrite_options.custom_optimizers.add()
    entry.name = "NpuOptimizer"
    for key, (field, value) in options.items():
        set_attr(entry.parameter_map[key], field, value)
    return config


_graphs = {}  # (system, failing) -> (graph, ops): one graph per kind of case, reused by every session


def _trivial_session(config, system=False, failing=False):
    """Creates a session with ``config`` and runs a trivial op (and, with ``system``, initializes the NPU system
    and asks its rank size; with ``failing``, runs an op that fails)."""
    import numpy as np
    import tensorflow as tf

    from npu_bridge.estimator import npu_ops
    from npu_bridge.hccl import hccl_ops  # noqa: F401

    if (system, failing) not in _graphs:
        graph = tf.Graph()
        with graph.as_default():
            x = tf.compat.v1.placeholder(tf.float32, [None], name="x")
            ops = {"x": x, "doubled": tf.multiply(x, 2.0, name="doubled")}
            if system:
                ops["init"], ops["shutdown"] = npu_ops.initialize_system(), npu_ops.shutdown_system()
            if failing:
                ops["broken"] = tf.reshape(x, [3], name="broken")
        _graphs[(system, failing)] = graph, ops
    graph, ops = _graphs[(system, failing)]
    x, doubled = ops["x"], ops["doubled"]
    init, shutdown, broken = ops.get("init"), ops.get("shutdown"), ops.get("broken")
    with tf.compat.v1.Session(graph=graph, config=config) as sess:
        if system:
            from hccl.manage.api import get_rank_size

            sess.run(init)
            get_rank_size()
        value = sess.run(doubled, {x: np.array([1.0, 2.0], np.float32)})
        if failing:
            try:
                sess.run(broken, {x: np.array([1.0, 2.0], np.float32)})
            except tf.errors.InvalidArgumentError:
                pass
            else:
                raise AssertionError("the failing op did not fail")
        if system:
            sess.run(shutdown)
    assert list(value) == [2.0, 4.0], value


def _reset():
    """Puts the process back into the state the next case expects."""
    from npu_bridge.core.runtime import system

    system.shutdown(force=True)


def _collective_server_started():
    module = sys.modules.get("npu_bridge.core.collectives.server")
    return module is not None and getattr(module, "_runtime", None) is not None


# --- scenarios -----------------------------------------------------------------------------------------------


def run_option(case):
    options = dict(case["companions"])
    options[case["key"]] = [case["field"], case["value"]]
    _trivial_session(npu_config(options))


@contextlib.contextmanager
def _environment(changes):
    saved = {name: os.environ.get(name) for name in changes}
    try:
        for name, value in changes.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = os.fsdecode(_bytes(value))
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _driver_estimator():
    import tensorflow as tf

    from npu_bridge.estimator.npu.npu_config import NPURunConfig
    from npu_bridge.estimator.npu.npu_estimator import NPUEstimator

    def model_fn(features, labels, mode):
        loss = tf.reduce_sum(features)
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=tf.no_op())

    NPUEstimator(model_fn=model_fn, model_dir=tempfile.mkdtemp(prefix="est-", dir=os.getcwd()), config=NPURunConfig())


def _driver_run_config():
    from npu_bridge.estimator.npu.npu_config import NPURunConfig

    config = NPURunConfig()
    config.parameter_map_values()
    return {
        "result": "ok",
        "task": [config.task_type, config.task_id, config.num_ps_replicas, config.num_worker_replicas, config.is_chief],
    }


def _driver_hooks():
    from npu_bridge.npu_init import npu_hooks_append

    npu_hooks_append()


def _driver_world():
    from npu_bridge.core.world import world

    world.load_world(os.environ)


def _driver_loop_size():
    from npu_bridge.core.tf2 import loop_size

    loop_size.npu_loop_size()


_CHILD_ERROR = "NPU_BRIDGE_ERROR "


def _driver_import(case):
    """A fresh interpreter imports npu_bridge and runs a session (for variables read at import)."""
    import subprocess

    code = (
        "import json\n"
        "from npu_bridge.core.runtime.errors import NpuBridgeError\n"
        "try:\n"
        "    import npu_bridge, tensorflow as tf\n"
        "    tf.compat.v1.disable_eager_execution()\n"
        "    with tf.compat.v1.Session() as sess:\n"
        "        sess.run(tf.constant(1.0) * 2.0)\n"
        "except NpuBridgeError as e:\n"
        f"    print({_CHILD_ERROR!r} + json.dumps([type(e).__name__, str(e)]))\n"
        "    raise SystemExit(3)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    for line in result.stdout.splitlines():
        if line.startswith(_CHILD_ERROR):  # the project's error in the child: judged as if raised here
            from npu_bridge.core.runtime import errors

            name, message = json.loads(line[len(_CHILD_ERROR) :])
            error_class = getattr(errors, name)
            error = error_class.__new__(error_class)
            Exception.__init__(error, message)  # the child's message as is (the constructors differ)
            raise error
    if result.returncode != 0:
        raise RuntimeError(f"the import exited with {result.returncode}: {result.stderr[-1500:]}")


def run_env(case):
    driver = case["driver"]
    with _environment(case["env"]):
        if driver == "import":
            _driver_import(case)
        elif driver == "estimator":
            _driver_estimator()
        elif driver == "run_config":
            return _driver_run_config()
        elif driver == "hooks":
            _driver_hooks()
        elif driver == "loop_size":
            _driver_loop_size()
        elif driver == "world":
            _driver_world()
        else:
            from npu_bridge.core.runtime import log

            log.configure()
            config = npu_config(case.get("options", {}))
            _trivial_session(config, system=driver == "system", failing=driver == "failing_op")


@contextlib.contextmanager
def _captured_output():
    """Sends file descriptors 1 and 2 to a temporary file; yields a callable returning what was written."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 1)
        os.dup2(captured.fileno(), 2)
        text = []
        try:
            yield text
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
            captured.seek(0)
            data = captured.read()
            if len(data) > 40000:
                data = data[:20000] + b"\n[...]\n" + data[-20000:]
            text.append(data.decode("utf-8", "replace"))
            text.append(len(data))


_CLI_MODULES = {
    "npu-bridge": "npu_bridge.core.cli.main",
    "npu-run": "npu_bridge.core.launch.cli",
    "npu-dump": "npu_bridge.core.dump.cli",
    "npu-prof": "npu_bridge.core.profiling.cli",
}


def run_cli(case):
    """Runs one tool's main() as its console script does (``sys.exit(main())``); returns what a shell sees."""
    import importlib

    main = importlib.import_module(_CLI_MODULES[case["tool"]]).main
    argv = [os.fsdecode(_bytes(arg)) for arg in case["argv"]]
    escaped = None
    cwd = os.getcwd()
    with _environment(case.get("env", {})), _captured_output() as output:
        if case.get("cwd"):
            os.chdir(case["cwd"])
        try:
            code = main(argv)
        except SystemExit as e:
            code = e.code
        except BaseException as e:  # what escapes main is a traceback
            escaped = "".join(traceback.format_exception(type(e), e, e.__traceback__))
            code = None
        finally:
            os.chdir(cwd)
    if code is None and escaped is None:
        code = 0
    elif not isinstance(code, int) and escaped is None:
        code = 1  # sys.exit("text") prints the text and exits 1
    text, size = output
    return {"result": "exited", "code": code, "escaped": escaped, "output": text[-6000:], "output_size": size}


def run_seed_trees(case):
    """Writes a dump tree (dump files, golden .npy, Opdebug overflow records) and a finished profile."""
    import numpy as np
    import tensorflow as tf

    from npu_bridge.core import dump
    from npu_bridge.estimator import npu_ops

    root = case["root"]
    dump_dir = os.path.join(root, "dump")
    golden_dir = os.path.join(root, "golden")
    profile_dir = os.path.join(root, "profile")
    for path in (dump_dir, golden_dir, profile_dir):
        os.makedirs(path)
    b64 = {"b64": ""}

    def text(value):
        return ["s", dict(b64, b64=base64.b64encode(value.encode()).decode())]

    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float16, [4], name="x")
        w = tf.Variable(np.ones(4, np.float16), name="w")
        y = tf.multiply(x, w, name="scaled")
        big = tf.multiply(y, tf.constant(60000.0, tf.float16), name="overflowing")
        out = tf.reduce_sum(tf.cast(big, tf.float32), name="total")
        init = tf.compat.v1.global_variables_initializer()
        shutdown = npu_ops.shutdown_system()
    configs = (
        {"enable_dump": ["b", True], "dump_path": text(dump_dir), "dump_mode": text("all")},
        {"enable_dump_debug": ["b", True], "dump_path": text(dump_dir)},
        {
            "profiling_mode": ["b", True],
            "profiling_options": text(json.dumps({"output": profile_dir, "training_trace": "on", "task_trace": "on"})),
        },
    )
    for options in configs:
        with tf.compat.v1.Session(graph=graph, config=npu_config(options)) as sess:
            sess.run(init)
            for step in range(2):
                sess.run(out, {x: np.full(4, 2.0 + step, np.float16)})
            sess.run(shutdown)  # ends the profile
    dump.flush()
    from npu_bridge.core.profiling import recorder

    recorder.finish()
    for name, value in (("scaled", 1.0), ("overflowing", 2.0)):
        np.save(os.path.join(golden_dir, f"{name}.0.1700000000000000.npy"), np.full(4, value, np.float32))
    return {"result": "ok", "dump": dump_dir, "golden": golden_dir, "profile": profile_dir}


def main():
    scenario, cases_path, first = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with open(cases_path, encoding="utf-8") as f:
        cases = json.load(f)
    import tensorflow as tf

    import npu_bridge  # noqa: F401

    tf.compat.v1.disable_eager_execution()
    handlers = {"option": run_option, "env": run_env, "cli": run_cli, "seed_trees": run_seed_trees}
    for index in range(first, len(cases)):
        case = cases[index]
        started = time.monotonic()
        try:
            record = handlers[scenario](case) or {"result": "ok"}
        except Exception as e:  # every outcome is reported
            record = _exception_record(e)
        record["i"] = index
        record["seconds"] = round(time.monotonic() - started, 4)
        _report(record)
        if scenario != "cli":
            _reset()
        if _collective_server_started():
            os._exit(0)  # a process serves one collective world for its whole life; the parent restarts us
    sys.stdout.flush()
    sys.stderr.flush()


if __name__ == "__main__":
    main()
