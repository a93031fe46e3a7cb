"""The pieces behind multi-rank sessions, one process: settings, keys, which collectives a run executes,
the watchdog, the wait for ranks, error explanations, dtype transport, and the timeout the NpuOptimizer pass
puts on collectives (and, on two ranks, the bound they keep in sessions that are not bridged)."""

import numpy as np
import pytest
import tensorflow as tf
from helpers.collectives import launch
from helpers.processes import run_python

from npu_bridge.core.collectives import (
    failures,
    keys,
    membership,
    primitives,
    registry,
    server,
    settings,
    step_sequences,
    transport,
)
from npu_bridge.core.collectives import watchdog as watchdog_lib
from npu_bridge.core.runtime.errors import CollectiveError, NpuArgumentError

PAIR = membership.Members("hccl_world_group", (0, 1), 12345, 0)


# settings


@pytest.mark.parametrize(
    "environ, hccl_timeout, expected",
    [({}, None, 1836), ({"HCCL_EXEC_TIMEOUT": "30"}, None, 30), ({"HCCL_EXEC_TIMEOUT": "30"}, 7, 7)],
)
def test_exec_timeout(environ, hccl_timeout, expected):
    assert settings.exec_timeout(hccl_timeout, environ) == expected


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda: settings.exec_timeout(None, {"HCCL_EXEC_TIMEOUT": "soon"}),
            "HCCL_EXEC_TIMEOUT has invalid value 'soon': must be a whole number of seconds >= 1",
        ),
        (lambda: settings.connect_timeout({"HCCL_CONNECT_TIMEOUT": "0"}), "HCCL_CONNECT_TIMEOUT has invalid value '0'"),
        (
            lambda: settings.port_base(4, {"HCCL_IF_BASE_PORT": "65533"}),
            "HCCL_IF_BASE_PORT has invalid value '65533': must be an integer in [1, 65532], so that the ports "
            "base..base+3 of the 4 ranks are valid",
        ),
        (
            lambda: settings.port_base(6000, {}),
            "the job has 6000 ranks: rank r's collective server listens on HCCL_IF_BASE_PORT + r, and above the "
            "default base 60000 only 5536 ranks fit; set HCCL_IF_BASE_PORT to an integer in [1, 59536]",
        ),
        (lambda: settings.port_base(70000, {"HCCL_IF_BASE_PORT": "1"}), "the job has 70000 ranks"),
        # int() would read these as 3, 1000, 40000: a hang of 1000 s, a privileged port
        (lambda: settings.connect_timeout({"HCCL_CONNECT_TIMEOUT": "٣"}), "HCCL_CONNECT_TIMEOUT has invalid value '٣'"),
        (lambda: settings.exec_timeout(None, {"HCCL_EXEC_TIMEOUT": "1_000"}), "invalid value '1_000'"),
        (lambda: settings.port_base(2, {"HCCL_IF_BASE_PORT": "４００００"}), "invalid value '４００００'"),
        (
            lambda: settings.exec_timeout(None, {"HCCL_EXEC_TIMEOUT": "9" * 30}),
            "must be a whole number of seconds >= 1 and <= 2147483647",
        ),
        (lambda: settings.connect_timeout({"HCCL_CONNECT_TIMEOUT": "x" * 100000}), "... (100002 characters)"),
    ],
)
def test_bad_settings_are_named(call, message):
    with pytest.raises(ValueError) as info:
        call()
    assert message in str(info.value)


def test_defaults():
    assert (settings.connect_timeout({}), settings.port_base(8, {})) == (120, 60000)


# keys


def test_keys_follow_the_build_order_per_group_and_never_collide():
    first = [keys.instance_key(777) for _ in range(50)]
    other_group = [keys.instance_key(778) for _ in range(50)]
    assert len(set(first + other_group)) == 100
    assert all(1 <= k < 2**30 for k in first)
    assert all(2**30 <= keys.bucket_block(777) < 2**31 - keys.BUCKETS for _ in range(20))
    assert keys.pair_group_key("g", 0, 3) == keys.pair_group_key("g", 3, 0) != keys.pair_group_key("h", 0, 3)
    assert keys.send_recv_key(5, 0, 1, 9) != keys.send_recv_key(5, 1, 0, 9)


# registry


def test_a_run_knows_its_collectives_ranks_and_graph_key():
    with tf.Graph().as_default() as graph:
        x = tf.constant([1.0])
        reduced = primitives.all_reduce(x, PAIR, "Add")
        exchanged = primitives.all_to_all(tf.ones([2, 1]), PAIR, 99, 99, "reduce_scatter")
        plain = x * 2
        v = tf.Variable(1.0)
    assert registry.for_run(graph, plain) is None
    assert registry.for_run(graph, v) is None
    run = registry.for_run(graph, {"caller": [reduced], object(): plain})  # MonitoredSession-style keys
    assert ([name for name, _ in run.ops], run.ranks) == (["HcomAllReduce"], {0, 1}) and run.graph_key > 0
    both = registry.for_run(graph, [tf.identity(reduced).name, exchanged.op])
    assert both.graph_key > 0 and both.graph_key == registry.for_run(graph, (exchanged, reduced)).graph_key
    assert both.describe(focus="HcomAllToAll").startswith("HcomAllToAll (reduce_scatter, group 'hccl_world_group'")
    assert registry.for_run(tf.Graph(), reduced) is None


# watchdog


class FakeProbe:
    def __init__(self):
        self.down = set()
        self.calls = []

    def __call__(self, address):
        self.calls.append(address)
        return address not in self.down


def _watchdog(clock):
    probe, aborted = FakeProbe(), []
    dog = watchdog_lib.Watchdog(
        ["h:0", "h:1", "h:2"], rank=1, probe=probe, abort=aborted.append, clock=lambda: clock[0]
    )
    return dog, probe, aborted


def test_watchdog_ends_a_rank_waiting_for_a_gone_leader():
    clock = [0.0]
    dog, probe, aborted = _watchdog(clock)
    token = dog.enter(lambda: "HcomAllReduce (allreduce)", {1, 2}, timeout=60)
    dog.check()
    assert probe.calls == []  # nothing is probed during the first second of a run
    probe.down.add("h:0")
    for t in (1.5, 2.0, 2.5, 3.0, 3.5):
        clock[0] = t
        dog.check()
    assert aborted == [
        "rank 1: rank 0 (the leader, which coordinates every collective) at h:0 is gone (its "
        "collective server refuses connections) while this rank waits for it in HcomAllReduce "
        f"(allreduce); ending this rank with exit code {watchdog_lib.EXIT_CODE}"
    ]
    dog.leave(token)


def test_watchdog_ignores_gone_ranks_nobody_waits_for_and_finished_runs():
    clock = [0.0]
    dog, probe, aborted = _watchdog(clock)
    token = dog.enter(lambda: "run", {0, 1}, timeout=60)
    probe.down.add("h:2")
    for t in (2, 3, 4, 5):
        clock[0] = t
        dog.check()
    assert aborted == [] and "h:2" not in probe.calls
    dog.leave(token)
    probe.down.add("h:0")
    clock[0] = 20
    dog.check()
    assert aborted == []


def test_watchdog_backstop_after_twice_the_timeout():
    clock = [0.0]
    dog, _, aborted = _watchdog(clock)
    dog.enter(lambda: "run", {0, 1}, timeout=10)
    clock[0] = 49
    dog.check()
    assert aborted == []
    clock[0] = 51
    dog.check()
    assert aborted and "has not finished after 51 s although every collective is bounded by 10 s" in aborted[0]


# waiting for the ranks


def test_wait_for_ranks_names_the_missing_ones(npu_log):
    clock = [0.0]

    def sleep(seconds):
        clock[0] += seconds

    arrived = {"h:1"}
    with pytest.raises(CollectiveError) as info:
        server.wait_for_ranks(
            ["h:0", "h:1", "h:2", "h:3"], 0, 25, probe=arrived.__contains__, clock=lambda: clock[0], sleep=sleep
        )
    assert str(info.value).startswith("rank 0: ranks 2 (h:2), 3 (h:3) never arrived within HCCL_CONNECT_TIMEOUT=25 s")
    assert [m for m in npu_log if "waiting for" in m] == [
        "rank 0: waiting for ranks 2 (h:2), 3 (h:3) to start (10 s of HCCL_CONNECT_TIMEOUT=25 s)",
        "rank 0: waiting for ranks 2 (h:2), 3 (h:3) to start (20 s of HCCL_CONNECT_TIMEOUT=25 s)",
    ]
    server.wait_for_ranks(["h:0", "h:1"], 0, 25, probe=arrived.__contains__, clock=lambda: clock[0], sleep=sleep)


# explaining TensorFlow's errors


class FakeRuntime:
    rank = 1
    addresses = ("127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:70021")

    def describe_rank(self, rank):
        return f"rank {rank} ({self.addresses[rank]})"


RUN = registry.RunCollectives(
    (("HcomAllReduce", registry.CollectiveInfo("allreduce", "g", (0, 1), 1)),), frozenset({0, 1}), 0
)


@pytest.mark.parametrize(
    "error, expected",
    [
        (
            tf.errors.DeadlineExceededError(
                None,
                None,
                "Graph execution error:\n\nCollective ops is aborted by: Collective has timed out during execution.",
            ),
            "rank 1: HcomAllReduce (allreduce, group 'g', ranks [0, 1]) did not finish within the collective "
            "timeout of "
            "9 s (hccl_timeout / HCCL_EXEC_TIMEOUT): a peer rank is hung or much slower, or did not run the matching "
            "collective (every rank must run the same collectives in the same order). TensorFlow: Collective has timed "
            "out during execution.",
        ),
        (
            tf.errors.UnavailableError(
                None,
                None,
                "failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:7000: Connection refused",
            ),
            "rank 1: HcomAllReduce (allreduce, group 'g', ranks [0, 1]) failed: rank 0 (127.0.0.1:7000) cannot be "
            "reached; it has probably exited or crashed. TensorFlow: failed to connect to all addresses; last error: "
            "UNKNOWN: ipv4:127.0.0.1:7000: Connection refused",
        ),
        (
            tf.errors.UnavailableError(
                None,
                None,
                "From /job:worker/replica:0/task:1:\nrecvmsg:Connection reset by peer\n"
                "Additional GRPC error information from remote target /job:worker/replica:0/task:2 "
                "while calling /tensorflow.WorkerService/RecvBuf:",
            ),
            "rank 1: HcomAllReduce (allreduce, group 'g', ranks [0, 1]) failed: rank 2 (127.0.0.1:70021) cannot be "
            "reached; it has probably exited or crashed. TensorFlow: recvmsg:Connection reset by peer",
        ),
        (
            tf.errors.InvalidArgumentError(None, None, "Shape mismatch in the collective instance 7."),
            "rank 1: HcomAllReduce (allreduce, group 'g', ranks [0, 1]) failed: the ranks passed different shapes; "
            "every "
            "rank must pass the same shape, and the same on every run. TensorFlow: Shape mismatch in the collective "
            "instance 7.",
        ),
    ],
)
def test_collective_errors_are_explained(error, expected):
    assert failures.explain(error, RUN.describe(), FakeRuntime(), 9) == expected


# dtypes


@pytest.mark.parametrize(
    "dtype", ["int8", "int16", "uint8", "uint16", "uint32", "uint64", "bfloat16", "bool", "float64", "int64"]
)
def test_every_dtype_travels_unchanged(dtype):
    values = np.array([0, 1, 7, 100], dtype=np.float64 if dtype == "bfloat16" else dtype)
    with tf.Graph().as_default():
        original = tf.constant(values, dtype=dtype)
        encoded = transport.encode(original, primitives.GATHER_DTYPES)
        assert encoded.dtype in primitives.GATHER_DTYPES
        decoded = transport.decode(encoded, dtype)
        with tf.compat.v1.Session() as sess:
            a, b = sess.run([original, decoded])
    assert b.dtype == a.dtype and np.array_equal(a, b)


# the collective timeout of a session


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_hccl_timeout_of_the_session_bounds_a_collective_built_earlier():
    result = run_python(
        """
        import time
        import tensorflow as tf
        from npu_bridge.core.collectives import membership, primitives
        tf.compat.v1.disable_eager_execution()
        config = tf.compat.v1.ConfigProto()
        entry = config.graph_options.rewrite_options.custom_optimizers.add()
        entry.name = "NpuOptimizer"
        entry.parameter_map["hccl_timeout"].i = 2
        # A 2-member collective in a 1-rank world: its peer never comes, so only the timeout ends it.
        lonely = primitives.all_reduce(tf.constant([1.0]), membership.Members("g", (0, 1), 4242, 0), "Add")
        assert lonely.op.get_attr("timeout_seconds") == 1836.0
        started = time.monotonic()
        try:
            tf.compat.v1.Session(config=config).run(lonely)
        except tf.errors.DeadlineExceededError:
            print("timed out after", round(time.monotonic() - started))
    """,
        timeout=50,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split()[-1] in ("2", "3", "4"), result.stdout


@pytest.mark.slow
@pytest.mark.timeout(150)
def test_a_collective_in_a_session_that_is_not_bridged_ends_at_its_built_in_bound():
    # No NpuOptimizer pass runs there, and the session never joins the rank's collective server, so without the
    # bound the op is built with (HCCL_EXEC_TIMEOUT) the run would wait forever for its group.
    env = {"HCCL_EXEC_TIMEOUT": "3", "NPU_BRIDGE_COLLECTIVES": "tf"}
    result, ranks = launch("unbridged_collective_worker.py", 2, env=env, timeout=120)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    for rank in (0, 1):
        assert ranks[rank]["timeouts"] == [3.0]
        assert ranks[rank]["ended"] == "DeadlineExceededError"
        assert 2.5 < ranks[rank]["seconds"] < 30


@pytest.mark.slow
@pytest.mark.timeout(150)
def test_a_collective_in_a_session_that_is_not_bridged_runs_on_the_shared_memory_path():
    # The segment needs no collective server: the same unbridged session finishes, bounded by the same timeout.
    result, ranks = launch("unbridged_collective_worker.py", 2, env={"HCCL_EXEC_TIMEOUT": "3"}, timeout=120)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    for rank in (0, 1):
        assert ranks[rank]["timeouts"] == [3.0]
        assert ranks[rank]["ended"] == "finished"


# step sequences


def test_a_step_sequence_request_encodes_its_graph_key_and_refuses_other_values():
    assert step_sequences.request_bytes(1) == b"\x08\x01"
    assert step_sequences.request_bytes(300) == b"\x08\xac\x02"
    for bad in (0, -1, 2**63):
        with pytest.raises(NpuArgumentError, match="is not a positive int64"):
            step_sequences.request_bytes(bad)


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_rank_0_holds_a_step_sequence_that_other_ranks_then_find_unchanged():
    """What another rank's request for the sequence of a key returns, before and after rank 0 held it: the
    sequence ``hold`` made stays; a second ``hold`` sends nothing; an unreachable leader is left alone."""
    result = run_python(
        """
        import grpc
        import tensorflow as tf
        from npu_bridge.core.collectives import server, step_sequences
        from npu_bridge.core.launch import plan

        port = plan.find_free_ports(1)
        cluster = tf.train.ClusterSpec({"worker": [f"localhost:{port}"]})
        leader = tf.distribute.Server(cluster, "worker", 0, config=server._server_config(), start=True)

        def next_step_id(key):  # GetStepSequenceResponse: step_sequence (1) {graph_key (1), next_step_id (2)}
            with grpc.insecure_channel(f"localhost:{port}") as channel:
                reply = channel.unary_unary(step_sequences._METHOD)(step_sequences.request_bytes(key), timeout=10)
            inner, fields, i = reply[2:], {}, 0
            while i < len(inner):
                tag, value, shift = inner[i], 0, 0
                i += 1
                while True:
                    value |= (inner[i] & 0x7F) << shift
                    shift += 7
                    i += 1
                    if not inner[i - 1] & 0x80:
                        break
                fields[tag >> 3] = value
            assert fields[1] == key
            return fields[2]

        step_sequences.hold(leader.target, 4242)
        held = next_step_id(4242)
        assert next_step_id(4242) == held
        step_sequences.hold(leader.target, 4242)  # once per key
        assert next_step_id(4242) == held and 4242 in step_sequences._held
        step_sequences.hold(f"grpc://localhost:{plan.find_free_ports(1)}", 77)  # nobody there: logged, left
        assert 77 not in step_sequences._held
        print("HELD", held)
        """,
        timeout=100,
    )
    assert result.returncode == 0 and "HELD" in result.stdout, result.stdout[-2000:] + result.stderr[-3000:]


@pytest.mark.slow
@pytest.mark.timeout(150)
def test_a_rank_that_never_aligns_its_step_sequences_fails_the_others_session_in_time():
    # Every rank's first session on TensorFlow's path takes the key of point-to-point runs together with the
    # others (step_sequences.align_point_to_point); a rank that never comes leaves them waiting up to
    # HCCL_CONNECT_TIMEOUT, then the session creation fails naming why.
    result, ranks = launch("late_alignment_worker.py", 2, env={"NPU_BRIDGE_COLLECTIVES": "tf"}, timeout=120)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert ranks[1]["ended"] == "slept"
    message = ranks[0]["ended"]
    assert message.startswith("rank 0: the 2 ranks did not all take the step sequence of their point-to-point runs")
    assert "within 3 s (timed out)" in message and "a rank that never creates one, or died" in message
    assert 2.5 < ranks[0]["seconds"] < 30
