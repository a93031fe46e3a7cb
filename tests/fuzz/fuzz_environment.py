"""The oracle and the cases of the environment and rank table categories of the fuzz test: every variable the
project reads (found in its source), the code path that reads it, the values it accepts; and rank table files."""

import base64
import dataclasses
import json
import os
import re
from typing import Callable

from fuzz_helpers import (
    ACCEPT,
    ASCII_INT,
    DEEP_ARRAY,
    DEEP_OBJECT,
    EITHER,
    INT64,
    REJECT,
    REPO_ROOT,
    b64,
    classify_exception,
    digit_variants,
    encode_attr,
    hostile_texts,
    path_kind,
    random_text,
    set_worker_dir,
    worker_path,
)
from fuzz_options import profiling_options_verdict

from npu_bridge.core.runtime.errors import shortened

# --- environment variables -------------------------------------------------------------------------------------

_ENV_NAME = re.compile(r"""["']([A-Z][A-Z0-9_]{2,})["']""")
_ENV_CONSTANT = re.compile(r"^(\w*VARIABLES?)\s*=\s*(\([^)]*\)|\"[^\"]*\")", re.M)
_CPP_GETENV = re.compile(r"getenv\(\s*\"([A-Z][A-Z0-9_]+)\"")


def discovered_environment_variables():
    """The environment variables the project's Python and C++ read: names in quotes on lines that read
    ``os.environ`` / ``getenv``, and the names in ``*_VARIABLE(S)`` constants."""
    names = set()
    for top in ("npu_bridge", "hccl"):
        for directory, _, file_names in os.walk(os.path.join(REPO_ROOT, top)):
            for file_name in file_names:
                if not file_name.endswith(".py"):
                    continue
                with open(os.path.join(directory, file_name), encoding="utf-8") as f:
                    text = f.read()
                for line in text.splitlines():
                    if "environ" in line or "getenv" in line:
                        names.update(_ENV_NAME.findall(line))
                for match in _ENV_CONSTANT.finditer(text):
                    names.update(_ENV_NAME.findall(match.group(2)))
    for top in ("ops", "optimizers"):
        for directory, _, file_names in os.walk(os.path.join(REPO_ROOT, top)):
            for file_name in file_names:
                if file_name.endswith((".cc", ".h")):
                    with open(os.path.join(directory, file_name), encoding="utf-8") as f:
                        names.update(_CPP_GETENV.findall(f.read()))
    return names


def _env_int(low, high=None, loose=(), required=False):
    """Judge of an integer variable in [low, high]; "" is unset (an error when ``required``), blanks may be either."""

    def judge(text):
        stripped = text.strip()
        if not stripped:
            return REJECT if required else (ACCEPT if not text else EITHER)
        if not ASCII_INT.fullmatch(stripped):
            return REJECT
        number = int(stripped)
        if number < low or (high is not None and number > high):
            return REJECT
        return EITHER if stripped != text or stripped.startswith("+") or text in loose else ACCEPT

    return judge


def _env_choice(*values, environmental=()):
    def judge(text):
        stripped = text.strip()
        if not text:
            return ACCEPT  # unset
        if stripped in environmental or not stripped:
            return EITHER
        if stripped in values:
            return ACCEPT if stripped == text else EITHER
        return REJECT

    return judge


def _env_bool_text(text):
    stripped = text.strip().lower()
    if stripped in ("", "true", "1", "on", "false", "0", "off"):
        return ACCEPT
    return REJECT


def _env_ip(text):
    import ipaddress

    if text != text.strip():
        return EITHER
    try:
        ipaddress.ip_address(text.strip())
    except ValueError:
        return REJECT
    return ACCEPT


def _env_worker_ip(text):
    if not text:
        return ACCEPT
    if _env_ip(text) == REJECT:
        return REJECT
    return ACCEPT if text.strip() == "127.0.0.1" else EITHER  # another machine: NotAvailableError


def _env_dir(text):
    """The base of a directory the project creates when missing ({text}/extra-info/data-dump/0): REJECT when
    something else is in the way, the directory's path is past PATH_MAX or NAME_MAX, or it is not UTF-8."""
    if not text:
        return ACCEPT
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return REJECT
    path = os.path.abspath(worker_path(text))
    directory = os.path.join(path, "extra-info", "data-dump", "0").encode()
    if len(directory) >= 4096 or any(len(part) > 255 for part in directory.split(b"/")):
        return REJECT
    while path_kind(path) == "missing":
        path = os.path.dirname(path)
    return ACCEPT if path_kind(path) == "dir" else REJECT


def _env_rank_table(text):
    return ACCEPT if not text else REJECT  # the generic values are never a rank table


def _json_object(text):
    """The JSON object ``text`` holds, or None when it is not one."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _env_tf_config(text):
    if not text:
        return ACCEPT
    value = _json_object(text)
    if value is None:
        return REJECT
    task = value.get("task", {})
    cluster = value.get("cluster", {})
    if not isinstance(task, dict) or not isinstance(cluster, dict):
        return REJECT
    if cluster:
        return EITHER  # a cluster needs a ParameterServerStrategy in NPURunConfig
    if not isinstance(task.get("type", "worker"), str):
        return REJECT
    index = task.get("index", 0)
    if isinstance(index, bool) or not isinstance(index, int) or index < 0:
        return REJECT
    if not all(isinstance(v, (list, dict)) for v in cluster.values()):
        return REJECT
    return ACCEPT


def _env_one_node(text):
    """A Slurm node list of a one-node, one-task step: one plain name is fine, blanks or several names are not;
    bracket notation is left to the reader (it may name one node or several)."""
    if not text:
        return ACCEPT  # unset: a one-task step needs no node list
    stripped = text.strip()
    if re.fullmatch(r"[A-Za-z0-9._-]+", stripped):
        return ACCEPT if stripped == text else EITHER
    if not stripped or re.search(r"\s|,,|^,|,$", stripped) or "[" not in stripped and "," in stripped:
        return REJECT
    return EITHER


def _env_one_task(text):
    """Slurm's tasks per node for one node running one task ("1", "1(x1)")."""
    if not text:
        return ACCEPT
    if re.fullmatch(r"0*1(\(x0*1\))?", text.strip()):
        return ACCEPT if text.strip() == text else EITHER
    return REJECT


def _env_tf_config_world(text):
    """TF_CONFIG as a world: no cluster or parameter servers describe none; otherwise the cluster must be lists."""
    if not text:
        return ACCEPT
    value = _json_object(text)
    if value is None:
        return REJECT
    cluster = value.get("cluster") or {}
    if not isinstance(cluster, dict):
        return REJECT
    return ACCEPT if not cluster or "ps" in cluster else EITHER


def _env_shown(text):
    """A variable a world only shows (npu-bridge info): any value is harmless."""
    return ACCEPT


def _env_free(text):
    return ACCEPT if len(text) < 4096 else EITHER


def _env_legacy_keras(text):
    """TensorFlow's true values, the usual false ones, or unset / empty; TensorFlow reads anything else as false."""
    return ACCEPT if text in ("", "1", "true", "True", "0", "false", "False") else REJECT


def _env_data_mode(text):
    """Octal read/write bits, 3 or 4 digits, at most 0666; "" is unset."""
    if not text:
        return ACCEPT
    octal = 3 <= len(text) <= 4 and all(c in "01234567" for c in text)
    return ACCEPT if octal and not int(text, 8) & ~0o666 else REJECT


def _env_any(text):
    return EITHER


def _env_options(text):
    """NPU_BRIDGE_OPTIONS: a JSON object of known options with bool / int / str / null values; whether the values
    (and the script's options with them) pass the option table is the table's call."""
    from npu_bridge.core.options.table import OPTIONS

    if not text.strip():
        return ACCEPT if not text else EITHER
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return REJECT
    if not isinstance(value, dict):
        return REJECT
    if any(name not in OPTIONS for name in value):
        return REJECT
    if any(v is not None and not isinstance(v, (bool, int, str)) for v in value.values()):
        return REJECT
    return ACCEPT if not value else EITHER


@dataclasses.dataclass
class EnvSpec:
    """How to fuzz one environment variable.

    Attributes:
      judge: text -> ACCEPT / REJECT / EITHER.
      drivers: what reads it: "session" (a bridged session), "dump" (a dumping session), "failing_op" (an op fails
        with exception dumps on), "estimator" (NPUEstimator()), "run_config" (NPURunConfig()), "hooks"
        (npu_hooks_append()), "loop_size" (the loop size npu_device.open() checks), "world" (the collective world
        is read from the environment, as a session and ``npu-bridge info`` read it), "import" (a fresh interpreter
        imports npu_bridge; costly, few values).
      base: other variables set for every case.
      options: NpuOptimizer options of the session drivers ({key: value}, bool / int / str).
      samples: valid values.
      extra: more values worth trying.
      costly: a valid value forms a multi-rank world (a second of waiting for peers and a worker restart), so
        only the first accepted value of the generated ones is tried.
      few: try only the extra values and samples (a fresh interpreter per case).
      names: texts of which an error must hold one (default: the variable's name).
      driver_judges: {driver: judge} where a driver judges differently.
      share: the share of the generic hostile values tried (the rest are left out at random).
    """

    judge: Callable[[str], str]
    drivers: tuple = ("session",)
    base: dict = dataclasses.field(default_factory=dict)
    options: dict = dataclasses.field(default_factory=dict)
    samples: tuple = ()
    extra: tuple = ()
    costly: bool = False
    few: bool = False
    names: tuple = ()
    driver_judges: dict = dataclasses.field(default_factory=dict)
    share: float = 0.6


_TWO_RANKS = {"RANK_SIZE": "2", "RANK_ID": "0", "HCCL_CONNECT_TIMEOUT": "1"}
_CM = {
    "CM_CHIEF_IP": "127.0.0.1",
    "CM_CHIEF_PORT": "29000",
    "CM_CHIEF_DEVICE": "0",
    "CM_WORKER_SIZE": "1",
    "RANK_ID": "0",
}
_DUMP = {"enable_dump": True}
# one-rank worlds of each scheduler source, for fuzzing one of its variables at a time
_SLURM = {
    "SLURM_STEP_ID": "0",
    "SLURM_PROCID": "0",
    "SLURM_STEP_NUM_TASKS": "1",
    "SLURM_STEP_NODELIST": "n1",
    "SLURM_STEP_TASKS_PER_NODE": "1",
}
_TORCHRUN = {"RANK": "0", "WORLD_SIZE": "1"}
_OMPI = {"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "1"}
_PMI = {"PMI_RANK": "0", "PMI_SIZE": "1"}
_VOLCANO = {"VC_TASK_INDEX": "0", "VC_WORKER_HOSTS": "pod-0"}
# The scheduler variables are read by a few small parsers (integers, node lists, tasks per node): a quarter of the
# generic hostile values each covers them, and keeps the fuzz test's time in bounds.
_WORLD_SHARE = 0.25
_JOB = {"JOB_ID": "10086"}

ENV_SPECS = {
    "ASCEND_GLOBAL_LOG_LEVEL": EnvSpec(_env_choice("0", "1", "2", "3", "4"), samples=("0", "3")),
    "ASCEND_SLOG_PRINT_TO_STDOUT": EnvSpec(_env_choice("0", "1"), samples=("0", "1")),
    "HCCL_CONNECT_TIMEOUT": EnvSpec(_env_int(1, 2**31 - 1), base=dict(_TWO_RANKS), samples=("1",), costly=True),
    "HCCL_EXEC_TIMEOUT": EnvSpec(_env_int(1, 2**31 - 1), samples=("1", "1836")),
    "NPU_LOOP_SIZE": EnvSpec(_env_int(1), drivers=("loop_size",), samples=("1", "1558")),
    "HCCL_IF_BASE_PORT": EnvSpec(_env_int(1, 65534), base=dict(_TWO_RANKS), samples=("40000",), costly=True),
    "RANK_TABLE_FILE": EnvSpec(_env_rank_table, names=("RANK_TABLE_FILE", "rank table")),
    "RANK_SIZE": EnvSpec(
        _env_int(1, 32768),
        drivers=("session", "estimator"),
        base={"RANK_ID": "0", "HCCL_CONNECT_TIMEOUT": "1", **_JOB},
        samples=("1", "2"),
        costly=True,
    ),
    "RANK_ID": EnvSpec(
        _env_int(0, 1),
        drivers=("session", "hooks"),
        base={"RANK_SIZE": "2", "HCCL_CONNECT_TIMEOUT": "1"},
        samples=("0", "1"),
        costly=True,
    ),
    "POD_NAME": EnvSpec(_env_free, drivers=("session", "estimator"), base=dict(_JOB), samples=("pod-0",)),
    "JOB_ID": EnvSpec(
        lambda text: REJECT if not text else (EITHER if not text.strip() else _env_free(text)),
        drivers=("estimator",),
        samples=("10086",),
    ),
    "HEARTBEAT": EnvSpec(_env_free, drivers=("estimator",), base=dict(_JOB), samples=("10",)),
    "LOCAL_CHECKPOINT_DIR": EnvSpec(_env_any, drivers=("estimator",), base=dict(_JOB)),
    "RESTORE_FROM": EnvSpec(_env_any, drivers=("estimator",), base=dict(_JOB)),
    "CM_CHIEF_IP": EnvSpec(_env_ip, base=dict(_CM), samples=("127.0.0.1",)),
    "CM_CHIEF_PORT": EnvSpec(_env_int(0, 65520, required=True), base=dict(_CM), samples=("0", "65520")),
    "CM_CHIEF_DEVICE": EnvSpec(_env_int(0, required=True), base=dict(_CM), samples=("0", "7")),
    "CM_WORKER_IP": EnvSpec(_env_worker_ip, base=dict(_CM), samples=("127.0.0.1",), extra=("10.0.0.1", "::1")),
    "CM_WORKER_SIZE": EnvSpec(
        _env_int(1, 32768, required=True),
        driver_judges={"estimator": _env_int(1, 32768)},  # NPUEstimator alone does not need CM mode complete
        drivers=("session", "estimator"),
        base={**_CM, "HCCL_CONNECT_TIMEOUT": "1", **_JOB},
        samples=("1",),
        costly=True,
    ),
    "PROFILING_MODE": EnvSpec(_env_bool_text, samples=("true", "0", "on")),
    "PROFILING_OPTIONS": EnvSpec(
        lambda text: EITHER if not text.strip() else profiling_options_verdict(text),
        base={"PROFILING_MODE": "1"},
        samples=('{"training_trace":"on"}',),
        extra=(
            '{"storage_limit": "\u0663\u0660\u0660MB"}',
            '{"output": "a\\u0000b"}',
            '{"task_trace": "l2"}',
            "op_trace:training_trace",
        ),
    ),
    "NPU_BRIDGE_DUMP_QUEUE_MB": EnvSpec(_env_int(1, 2**20), drivers=("dump",), options=_DUMP, samples=("1", "256")),
    "NPU_BRIDGE_DUMP_THREADS": EnvSpec(_env_int(1, 16), drivers=("dump",), options=_DUMP, samples=("1", "16")),
    "NPU_BRIDGE_DUMP_GOLDEN": EnvSpec(_env_choice("0", "1"), drivers=("dump",), options=_DUMP, samples=("0", "1")),
    "NPU_COLLECT_PATH": EnvSpec(_env_dir, drivers=("failing_op",), options={"enable_exception_dump": 1}),
    "ASCEND_WORK_PATH": EnvSpec(_env_dir, drivers=("failing_op",), options={"enable_exception_dump": 1}),
    "ASCEND_DEVICE_ID": EnvSpec(_env_int(0, INT64[1]), samples=("0", "7")),
    "DEVICE_ID": EnvSpec(_env_int(0, INT64[1]), samples=("0", "7")),
    "NPU_BRIDGE_DEVICE_TARGET": EnvSpec(
        _env_choice("auto", "cpu", "gpu", "ascend", environmental=("gpu",)), samples=("cpu", "ascend")
    ),
    "TF_CONFIG": EnvSpec(
        _env_tf_config,
        drivers=("run_config", "world"),
        driver_judges={"world": _env_tf_config_world},
        base={"HCCL_CONNECT_TIMEOUT": "1"},
        samples=('{"task": {"type": "worker", "index": 3}}',),
        extra=(
            '{"task": 5}',
            '{"task": {"index": "abc"}}',
            '{"task": {"index": -1}}',
            '{"task": {"type": 5}}',
            '{"cluster": 5}',
            '{"cluster": {"ps": 5}, "task": {"type": "ps", "index": 0}}',
            '{"task": {"index": 1e30}}',
        ),
    ),
    # Job schedulers' and launchers' variables (npu_bridge.core.world.scheduler_env), read with the world.
    "RANK": EnvSpec(
        _env_int(0, 0, required=True), drivers=("world",), share=_WORLD_SHARE, base={"WORLD_SIZE": "1"}, samples=("0",)
    ),
    "WORLD_SIZE": EnvSpec(
        _env_int(1, 1, required=True), drivers=("world",), share=_WORLD_SHARE, base={"RANK": "0"}, samples=("1",)
    ),
    "LOCAL_WORLD_SIZE": EnvSpec(
        _env_int(1, 1), drivers=("world",), share=_WORLD_SHARE, base=dict(_TORCHRUN), samples=("1",)
    ),
    "LOCAL_RANK": EnvSpec(_env_shown, drivers=("world",), share=_WORLD_SHARE, base=dict(_TORCHRUN), samples=("0",)),
    "MASTER_ADDR": EnvSpec(
        _env_shown, drivers=("world",), share=_WORLD_SHARE, base=dict(_TORCHRUN), samples=("10.0.0.1",)
    ),
    "MASTER_PORT": EnvSpec(
        _env_shown, drivers=("world",), share=_WORLD_SHARE, base=dict(_TORCHRUN), samples=("29500",)
    ),
    "TORCHELASTIC_RUN_ID": EnvSpec(
        _env_shown, drivers=("world",), share=_WORLD_SHARE, base=dict(_TORCHRUN), samples=("job-1",)
    ),
    # "True": the port of rank 0's rendezvous (ranks across machines) is the one after torchrun's store
    "TORCHELASTIC_USE_AGENT_STORE": EnvSpec(
        _env_shown, drivers=("world",), share=_WORLD_SHARE, base=dict(_TORCHRUN), samples=("True",)
    ),
    "OMPI_COMM_WORLD_RANK": EnvSpec(
        _env_int(0, 0, required=True),
        drivers=("world",),
        share=_WORLD_SHARE,
        base={"OMPI_COMM_WORLD_SIZE": "1"},
        samples=("0",),
    ),
    "OMPI_COMM_WORLD_SIZE": EnvSpec(
        _env_int(1, 1, required=True),
        drivers=("world",),
        share=_WORLD_SHARE,
        base={"OMPI_COMM_WORLD_RANK": "0"},
        samples=("1",),
    ),
    "OMPI_COMM_WORLD_LOCAL_SIZE": EnvSpec(
        _env_int(1, 1), drivers=("world",), share=_WORLD_SHARE, base=dict(_OMPI), samples=("1",)
    ),
    "PMI_RANK": EnvSpec(
        _env_int(0, 0, required=True), drivers=("world",), share=_WORLD_SHARE, base={"PMI_SIZE": "1"}, samples=("0",)
    ),
    "PMI_SIZE": EnvSpec(
        _env_int(1, 1, required=True), drivers=("world",), share=_WORLD_SHARE, base={"PMI_RANK": "0"}, samples=("1",)
    ),
    "MPI_LOCALNRANKS": EnvSpec(_env_int(1, 1), drivers=("world",), share=_WORLD_SHARE, base=dict(_PMI), samples=("1",)),
    "SLURM_PROCID": EnvSpec(
        _env_int(0, 0),
        drivers=("world",),
        share=_WORLD_SHARE,
        base={k: v for k, v in _SLURM.items() if k != "SLURM_PROCID"},
    ),
    "SLURM_STEP_ID": EnvSpec(
        _env_shown,
        drivers=("world",),
        share=_WORLD_SHARE,
        base={k: v for k, v in _SLURM.items() if k != "SLURM_STEP_ID"},
    ),
    "SLURM_STEP_NUM_TASKS": EnvSpec(
        _env_int(1, 1, required=True),
        drivers=("world",),
        share=_WORLD_SHARE,
        base={k: v for k, v in _SLURM.items() if k != "SLURM_STEP_NUM_TASKS"},
        samples=("1",),
    ),
    "SLURM_NTASKS": EnvSpec(
        _env_int(1, 1, required=True),
        drivers=("world",),
        share=_WORLD_SHARE,
        base={k: v for k, v in _SLURM.items() if k != "SLURM_STEP_NUM_TASKS"},
        samples=("1",),
    ),
    "SLURM_STEP_NODELIST": EnvSpec(
        _env_one_node,
        drivers=("world",),
        share=_WORLD_SHARE,
        base={k: v for k, v in _SLURM.items() if k != "SLURM_STEP_NODELIST"},
    ),
    "SLURM_JOB_NODELIST": EnvSpec(
        _env_one_node,
        drivers=("world",),
        share=_WORLD_SHARE,
        base={k: v for k, v in _SLURM.items() if k != "SLURM_STEP_NODELIST"},
    ),
    "SLURM_NODELIST": EnvSpec(
        _env_one_node,
        drivers=("world",),
        share=_WORLD_SHARE,
        base={k: v for k, v in _SLURM.items() if k != "SLURM_STEP_NODELIST"},
    ),
    "SLURM_STEP_TASKS_PER_NODE": EnvSpec(
        _env_one_task,
        drivers=("world",),
        share=_WORLD_SHARE,
        base={k: v for k, v in _SLURM.items() if k != "SLURM_STEP_TASKS_PER_NODE"},
    ),
    "SLURM_TASKS_PER_NODE": EnvSpec(
        _env_one_task,
        drivers=("world",),
        share=_WORLD_SHARE,
        base={k: v for k, v in _SLURM.items() if k != "SLURM_STEP_TASKS_PER_NODE"},
    ),
    "SLURM_DISTRIBUTION": EnvSpec(
        _env_shown, drivers=("world",), share=_WORLD_SHARE, base=dict(_SLURM), samples=("cyclic",)
    ),
    "SLURM_DIST_PLANESIZE": EnvSpec(  # read under a plane distribution, where it is needed
        _env_int(1, 32768, required=True),
        drivers=("world",),
        share=_WORLD_SHARE,
        base=dict(_SLURM, SLURM_DISTRIBUTION="plane"),
        samples=("2",),
    ),
    "SLURM_NODEID": EnvSpec(_env_int(0, 0), drivers=("world",), share=_WORLD_SHARE, base=dict(_SLURM), samples=("0",)),
    "SLURM_LOCALID": EnvSpec(_env_int(0, 0), drivers=("world",), share=_WORLD_SHARE, base=dict(_SLURM), samples=("0",)),
    "SLURM_JOB_ID": EnvSpec(_env_shown, drivers=("world",), share=_WORLD_SHARE, base=dict(_SLURM), samples=("4242",)),
    "VC_TASK_INDEX": EnvSpec(
        _env_int(0, 0), drivers=("world",), share=_WORLD_SHARE, base={"VC_WORKER_HOSTS": "pod-0"}, samples=("0",)
    ),
    "VK_TASK_INDEX": EnvSpec(
        _env_int(0, 0), drivers=("world",), share=_WORLD_SHARE, base={"VC_WORKER_HOSTS": "pod-0"}, samples=("0",)
    ),
    "HOSTNAME": EnvSpec(_env_shown, drivers=("world",), share=_WORLD_SHARE, base=dict(_VOLCANO), samples=("pod-0",)),
    "TF_USE_LEGACY_KERAS": EnvSpec(
        _env_legacy_keras, drivers=("import",), samples=("0",), extra=("garbage", "TRUE"), few=True
    ),
    "TF_CPP_MIN_LOG_LEVEL": EnvSpec(_env_any, extra=("garbage", "-1", "9" * 30), few=True),
    # Shows TensorFlow's C++ start-up lines (npu_bridge.core.runtime.log): read when TensorFlow is imported.
    "NPU_BRIDGE_TF_LOGS": EnvSpec(_env_choice("0", "1"), drivers=("import",), samples=("0", "1"), few=True),
    # Owner-only tensor data unless widened (npu_bridge.core.runtime.safe_paths): read when a dump session starts.
    "NPU_BRIDGE_DATA_MODE": EnvSpec(_env_data_mode, drivers=("dump",), options=_DUMP, samples=("600", "640")),
    # Set by npu-run for its ranks (npu_bridge.core.collectives.exposure): only compared, any value is harmless.
    "NPU_RUN_NETWORK": EnvSpec(_env_any, drivers=("import",), samples=("private",), extra=("shared",), few=True),
    # Set by npu-run for its ranks (collectives.shm_segment): a number that is not npu-run's memfd is ignored.
    "NPU_BRIDGE_SHM_FD": EnvSpec(_env_any, drivers=("import",), samples=("3",), extra=("garbage", "-1"), few=True),
    # The collective path (collectives.shm_segment): checked when a bridged session is made.
    "NPU_BRIDGE_COLLECTIVES": EnvSpec(_env_choice("auto", "shm", "tf"), samples=("auto", "tf")),
    # TensorFlow's thread spinning in ranks (collectives.thread_spinning): checked when a bridged session is made.
    "NPU_BRIDGE_THREAD_SPINNING": EnvSpec(_env_choice("auto", "0", "1"), samples=("auto", "1")),
    # npu-run's default for --job-secret (fuzzed through that flag by fuzz_cli); ranks read it only when their job
    # spans machines (the rendezvous at rank 0, vouching: tests/world, tests/launch/test_two_hosts.py).
    "NPU_RUN_JOB_SECRET": EnvSpec(_env_any, drivers=("import",), samples=("/nonexistent/secret",), few=True),
    # Read only when a job across machines has no secret (collectives.server); a one-machine world ignores it.
    "NPU_RUN_INSECURE_OPEN_PORTS": EnvSpec(_env_any, drivers=("world",), samples=("1",), extra=("yes", "0"), few=True),
    # Where npu-run's launchers of one user meet (launch.shared_private_network), used only when it is this user's
    # private directory; nothing in a rank reads it.
    "XDG_RUNTIME_DIR": EnvSpec(_env_any, drivers=("import",), samples=("/nonexistent/run",), extra=("",), few=True),
    # The TF1 mode (npu_bridge.core.tf1.environment): only "1" turns it on, at import; its tests run it (the fuzz
    # worker must keep TensorFlow 2), so here every other value must be harmless.
    "NPU_BRIDGE_TF1": EnvSpec(_env_any, drivers=("import",), samples=("0",), extra=("yes", "2", "1 0"), few=True),
    "NPU_BRIDGE_TF1_QUIET": EnvSpec(_env_any, drivers=("import",), samples=("1",), few=True),
    "NPU_BRIDGE_TF1_PATH": EnvSpec(_env_any, drivers=("import",), samples=("/nonexistent",), few=True),
    "NPU_BRIDGE_TF1_PY_COMPAT": EnvSpec(_env_any, drivers=("import",), samples=("1",), few=True),
    # The TF2 adapter's import mapping in child Pythons (npu_bridge.core.tf2.environment): read only by its
    # sitecustomize, and only "1" turns it on, so every other value must be harmless.
    "NPU_BRIDGE_TF2": EnvSpec(_env_any, drivers=("import",), samples=("0",), extra=("yes", "1 0"), few=True),
    # Its Python-level compatibility, read when the mapping is installed: only "1" turns it on.
    "NPU_BRIDGE_TF2_PY_COMPAT": EnvSpec(_env_any, drivers=("import",), samples=("1",), extra=("yes",), few=True),
    # tensorflow_addons' own switch to its Python ops (npu_bridge.core.runtime.addons_keras sets it only when unset).
    "TF_ADDONS_PY_OPS": EnvSpec(_env_any, drivers=("import",), samples=("0",), extra=("garbage",), few=True),
    # The stall report's threshold (npu_bridge.core.collectives.settings): checked when a bridged session is made.
    "NPU_BRIDGE_STALL_SECONDS": EnvSpec(_env_int(0, 2**31 - 1), samples=("0", "60")),
    # npu-run's status directory for stall reports (collectives.stall_watch): opened when a multi-rank world forms;
    # a value that is not this user's private directory only costs the report its peers' activity.
    "NPU_RUN_STATUS_DIR": EnvSpec(_env_any, drivers=("import",), samples=("/nonexistent/status",), few=True),
    # Recorded in a dump's run_config.json (npu_bridge.core.dump.run_config), never interpreted.
    "PYTHONHASHSEED": EnvSpec(_env_any, drivers=("dump",), options=_DUMP, samples=("0",), extra=("random",), few=True),
    # NpuOptimizer options set over every session's (npu_bridge.core.options.environment_options): applied when a
    # bridged session is created; npu-debug bisect sets it for its runs.
    "NPU_BRIDGE_OPTIONS": EnvSpec(
        _env_options,
        samples=("{}", '{"customize_dtypes": null}'),
        extra=('{"precison_mode": "force_fp16"}', "[1]", '{"precision_mode": 1.5}', '{"precision_mode": "bogus"}'),
    ),
    # npu-run's stop file (npu_bridge.core.runtime.interrupt): read at import; no file there means "not stopping".
    "NPU_RUN_STOP_FILE": EnvSpec(
        _env_any, drivers=("import",), samples=("/nonexistent/stop",), extra=("/dev/null",), few=True
    ),
}


def env_values(files, rng):
    """The hostile values every variable gets (environment values cannot hold NUL)."""
    core, extra = hostile_texts(files)
    values = [t for t in core + extra if "\x00" not in t and len(t) < 200000]
    values += [random_text(rng).replace("\x00", "") or "x" for _ in range(3)]
    values += [b"\xff\xfe".decode("utf-8", "surrogateescape")]
    return values


def env_cases(files, rng, workdir):
    """Every variable's cases for the worker's "env" scenario, with "label", "name" and "shown"."""
    set_worker_dir(workdir)
    cases = []
    for name, spec in ENV_SPECS.items():
        if spec.few:
            values = list(spec.extra) + list(spec.samples)
        else:
            values = [v for v in env_values(files, rng) if rng.random() < spec.share] + list(spec.samples)
            values += list(spec.extra) + [m for s in spec.samples for m in digit_variants(s)]
            values += [s + "\n" for s in spec.samples[:1]]
        seen = set()
        for value in values:
            if value in seen:
                continue
            seen.add(value)
            for driver in spec.drivers:
                label = spec.driver_judges.get(driver, spec.judge)(value)
                if spec.costly and label != REJECT and driver == "session":
                    continue  # a valid value forms a world, waits for its peers and ends the worker
                options = {k: encode_attr(*_attr_of(v)) for k, v in spec.options.items()}
                if spec.options.get("enable_dump"):
                    options["dump_path"] = encode_attr("s", files.paths["dir"].encode())
                env = {k: b64(v) for k, v in spec.base.items()}
                env[name] = b64(value)
                cases.append(
                    {
                        "env": env,
                        "driver": driver,
                        "options": options,
                        "label": label,
                        "name": name,
                        "names": list(spec.names or (name,)),
                        "shown": [shortened(value)[:60], value[:60], shortened(value.strip())[:60]]
                        if value.strip()
                        else [],
                    }
                )
    return cases


def group_import_cases(cases):
    """Splits ``cases`` into (the others, [(group case, its members)]): the "import" cases whose value may be
    accepted (labels accept and either), in groups of at most one value per variable. Each such case costs a
    fresh interpreter that imports TensorFlow and runs a session (seconds); a group tries its values in one, and
    ``expand_import_groups`` tries the members of a group that does not pass one by one, so every rejection and
    failure is judged, and named, case by case."""
    others, pending = [], []
    for case in cases:
        (pending if case["driver"] == "import" and case["label"] in (ACCEPT, EITHER) else others).append(case)
    groups = []
    while pending:
        members, taken, left = [], set(), []
        for case in pending:
            if taken.isdisjoint(case["env"]):
                members.append(case)
                taken.update(case["env"])
            else:
                left.append(case)
        merged = dict(members[0], env={k: v for m in members for k, v in m["env"].items()}, name=None, names=[])
        groups.append((merged, members))
        pending = left
    return others, groups


def expand_import_groups(groups, records, run_one_by_one):
    """(cases, records) of every member of ``groups``: a group's record when it passed, else the members' own from
    ``run_one_by_one(members)``."""
    cases, expanded = [], []
    for (_, members), record in zip(groups, records):
        passed = record.get("result") == "ok" and not record.get("exit_problem")
        cases += members
        if passed:
            expanded += [dict(record, seconds=record.get("seconds", 0.0) / len(members)) for _ in members]
        else:
            expanded += run_one_by_one(members)
    return cases, expanded


def _attr_of(value):
    if isinstance(value, bool):
        return "b", value
    if isinstance(value, int):
        return "i", value
    return "s", value.encode()


def _collective_peer_missing(record):
    return "never arrived within HCCL_CONNECT_TIMEOUT" in record.get("message", "")


def tally_env(cases, records, tally):
    for case, record in zip(cases, records):
        outcome, reason = classify_exception(
            record, case["label"], case["names"], case["shown"], tolerated=_collective_peer_missing
        )
        value = case["env"][case["name"]]
        shown = "unset" if value is None else shortened(os.fsdecode(base64.b64decode(value["b64"])), 80)
        tally.add(outcome, f"{case['name']}={shown} ({case['driver']})", reason)


# --- rank tables -----------------------------------------------------------------------------------------------


def _table(devices_per_server, server_ids=None, **top):
    """A template 1 rank table: ``devices_per_server`` devices on each server, ranks in order."""
    servers, rank = [], 0
    server_ids = server_ids or ["127.0.0.1"]
    for server_id in server_ids:
        devices = []
        for device in range(devices_per_server):
            devices.append({"device_id": str(device), "device_ip": f"192.168.1.{device}", "rank_id": str(rank)})
            rank += 1
        servers.append({"server_id": server_id, "device": devices})
    table = {"status": "completed", "version": "1.0", "server_count": str(len(servers)), "server_list": servers}
    table.update(top)
    return table


def _with(table, path, value):
    """A deep copy of ``table`` with the value at ``path`` (keys and indexes) replaced (or removed: ``...``)."""
    table = json.loads(json.dumps(table))
    target = table
    for step in path[:-1]:
        target = target[step]
    if value is ...:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return table


def rank_table_inputs(files, rng, root):
    """(label, path, tokens) of rank table files: valid ones, malformed JSON, wrong types and values, huge ones,
    special files. ``tokens``: texts of which the error must hold one (empty: any)."""
    os.makedirs(root, exist_ok=True)
    inputs = []
    counter = [0]

    def add(label, content, tokens=()):
        counter[0] += 1
        path = os.path.join(root, f"table_{counter[0]}.json")
        with open(path, "wb") as f:
            f.write(content if isinstance(content, bytes) else content.encode())
        inputs.append((label, path, list(tokens)))

    one = _table(1)
    add(ACCEPT, json.dumps(one))
    template2 = {
        "status": "completed",
        "group_count": "1",
        "group_list": [
            {
                "group_name": "job",
                "instance_count": "1",
                "device_count": "1",
                "instance_list": [
                    {"pod_name": "pod-0", "rank_id": "0", "server_id": "127.0.0.1", "devices": [{"device_id": "0"}]}
                ],
            }
        ],
    }
    add(ACCEPT, json.dumps(template2))
    add(EITHER, json.dumps(_table(2, ["127.0.0.1", "127.0.0.2"])))
    add(EITHER, json.dumps(_with(one, ["version"], "9.9")))
    # an empty server_id: a single server's ranks use loopback whatever its id; with two servers it is an error
    add(ACCEPT, json.dumps(_with(one, ["server_list", 0, "server_id"], "")))
    add(REJECT, json.dumps(_table(1, ["127.0.0.1", ""])), ["server_id"])
    for text in ("{", "", " ", "[1]", "5", "null", '"completed"', DEEP_ARRAY, DEEP_OBJECT, '{"status": "completed"'):
        add(REJECT, text)
    add(REJECT, rng.randbytes(2048))
    add(REJECT, b'{"status": "compl\xff\xfeted"}')
    add(REJECT, json.dumps(one).encode() + b"\x00")
    bad_values = {
        ("status",): [5, "initializing", "", None, "x" * 100000],
        ("server_count",): ["abc", "-1", "1e20", 1e20, True, "٣", "9" * 30, [], "2", 2**70],
        ("server_list",): [{}, "x", [], [5], [{}], None],
        ("server_list", 0, "server_id"): [5, None, ["127.0.0.1"]],
        ("server_list", 0, "host_ip"): ["999.1.1.1", 5, "a" * 100000],
        ("server_list", 0, "container_ip"): ["10.0.0.256", 5, ["10.0.0.1"], "a" * 100000],
        ("server_list", 0, "device"): [{}, [], "x", [None]],
        ("server_list", 0, "device", 0, "device_id"): [
            "99",
            99,
            1e20,
            -1,
            "-1",
            "0x1",
            "١",
            "１",
            True,
            None,
            [],
            "9" * 30,
            2**64,
            "",
            " 0",
        ],
        ("server_list", 0, "device", 0, "rank_id"): ["1", "٣", 1e20, -1, "9" * 30, 2**64, None, "0.0", ""],
        ("server_list", 0, "device", 0, "device_ip"): ["999.1.1.1", 5, "a" * 100000, "1.2.3.4\x00"],
        ("server_list", 0, "device", 0): [None, "x", [], {}],
    }
    for path, values in bad_values.items():
        for value in values:
            token = path[-1] if isinstance(path[-1], str) else ""
            add(REJECT, json.dumps(_with(one, list(path), value)), [token] if token else [])
    for path in (("status",), ("server_list",), ("server_count",), ("server_list", 0, "device", 0, "device_id")):
        add(REJECT, json.dumps(_with(one, list(path), ...)), [path[-1]])
    duplicate = _table(2)
    duplicate["server_list"][0]["device"][1]["rank_id"] = "0"
    add(REJECT, json.dumps(duplicate), ["rank_id"])
    same_device = _table(2)
    same_device["server_list"][0]["device"][1]["device_id"] = "0"
    add(REJECT, json.dumps(same_device), ["device_id"])
    add(REJECT, json.dumps(_with(one, ["server_count"], "100000")), ["server_count"])
    crowded = _table(1)
    crowded["server_list"][0]["device"] = [
        {"device_id": str(i % 16), "rank_id": str(i)} for i in range(100000)
    ]  # 100000 devices on one server
    add(REJECT, json.dumps(crowded), ["device_id"])
    many = [f"10.{i // 250}.{i % 250}.1" for i in range(2000)]
    add(EITHER, json.dumps(_table(16, many)))  # 32000 ranks: valid, but which one is this process?
    too_many = [f"10.{i // 250}.{i % 250}.1" for i in range(2100)]
    add(REJECT, json.dumps(_table(16, too_many)))  # 33600 ranks, past the 32768 ranks of a job
    padded = os.path.join(root, "padded.json")
    with open(padded, "wb") as f:
        f.write(json.dumps(one).encode())
        f.truncate(17 * 1024 * 1024)
    inputs.append((REJECT, padded, []))
    for name in ("fifo", "dev_zero", "dev_null", "dir", "missing", "loop", "long_path", "to_fifo", "deep_dir"):
        inputs.append((REJECT, files.paths[name], []))
    odd_name = os.path.join(root, "new\nline table.json")
    with open(odd_name, "w", encoding="utf-8") as f:
        json.dump(one, f)
    inputs.append((ACCEPT, odd_name, []))
    return inputs


def rank_table_cases(inputs):
    """The worker's "env" cases of RANK_TABLE_FILE: a bridged session with each table."""
    return [
        {
            "env": {"RANK_TABLE_FILE": b64(path), "HCCL_CONNECT_TIMEOUT": b64("1")},
            "driver": "session",
            "options": {},
            "label": label,
            "name": "RANK_TABLE_FILE",
            "names": ["RANK_TABLE_FILE", "rank table"],
            "shown": tokens,
            "path": path,
        }
        for label, path, tokens in inputs
    ]


def tally_rank_tables(cases, records, tally):
    for case, record in zip(cases, records):
        outcome, reason = classify_exception(record, case["label"], case["names"], case["shown"])
        tally.add(outcome, f"RANK_TABLE_FILE={_describe_table(case['path'])}", reason)


def _describe_table(path):
    if path_kind(path) != "file" or os.path.getsize(path) > 4096:
        return shortened(path, 80)
    with open(path, "rb") as f:
        return shortened(f.read().decode("utf-8", "replace"), 160)
