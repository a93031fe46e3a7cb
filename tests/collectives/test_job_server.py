"""A rank's server is the library's (``job_server``). When every rank of the job meets at 127.0.0.1 it listens there
alone (TensorFlow's own server would listen on every interface); with another host in the job, on every interface.
Either way it serves only its own job: a connection from another user's socket on this machine is closed before a
byte of it is read, whether the rank runs as root or as an unprivileged user (``test_two_hosts.py`` checks that one
from a machine outside the job is closed too). Its sessions and collectives are TensorFlow's."""

import json
import os
import select
import signal
import socket
import subprocess
import sys
import time

import helpers.unprivileged_users
import pytest
from helpers.collectives import FIRST_FRAME_PROBE, outward_address
from helpers.paths import REPO_ROOT, TESTS_DIR
from helpers.processes import run_python

from npu_bridge.core.collectives import exposure, job_server, server
from npu_bridge.core.launch import plan
from npu_bridge.core.runtime import job_secret
from npu_bridge.core.runtime.errors import CollectiveError, LaunchError

SERVE = """
import json, socket, sys
import tensorflow as tf
from npu_bridge.core.collectives import server
addresses = json.loads(sys.argv[1])
started = server._start_server(0, addresses)
port = int(addresses[0].rpartition(":")[2])


def listening(path):
    found = []
    with open(path) as f:
        for line in f.readlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, _, hex_port = local.rpartition(":")
            if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                found.append(address)
    return found


def connects(host):
    try:
        socket.create_connection((host, port), timeout=5).close()
        return True
    except OSError:
        return False


outward = json.loads(sys.argv[2])
v1 = tf.compat.v1
v1.disable_eager_execution()
# kept on this rank's worker, as bridged sessions are (the master would wait for rank 1 otherwise)
config = v1.ConfigProto(device_filters=["/job:worker/replica:0/task:0"])
with v1.Session(started.target, config=config) as sess:
    value = sess.run(tf.constant(3.0) * 2.0)
print("RESULT " + json.dumps({
    "tcp": listening("/proc/net/tcp"), "tcp6": listening("/proc/net/tcp6"), "loopback_connects": connects("127.0.0.1"),
    "outward_connects": connects(outward) if outward else None, "value": float(value),
}))
"""
LOOPBACK_V4 = "0100007F"  # 127.0.0.1 as /proc/net/tcp shows it
LOOPBACK_V4_IN_V6 = "0000000000000000FFFF00000100007F"  # ::ffff:127.0.0.1
ANY_V4, ANY_V6 = "00000000", "0" * 32


@pytest.mark.slow
@pytest.mark.parametrize("other_host", ["127.0.0.1", "192.0.2.7"])  # the second: TEST-NET-1, never here
def test_a_rank_listens_on_127_0_0_1_alone_when_its_whole_job_does_and_serves_its_sessions(other_host):
    base = plan.find_free_ports(2)
    addresses = [f"127.0.0.1:{base}", f"{other_host}:{base + 1}"]  # rank 1 is never started
    outward = outward_address()
    result = run_python(SERVE, args=(json.dumps(addresses), json.dumps(outward)), timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    found = json.loads(next(line for line in result.stdout.splitlines() if line.startswith("RESULT "))[7:])
    listening = sorted(found["tcp"] + found["tcp6"])
    assert found["loopback_connects"] and found["value"] == 6.0
    if other_host == "127.0.0.1":
        assert listening in ([LOOPBACK_V4], [LOOPBACK_V4_IN_V6]), found
        if outward is not None:  # TensorFlow's own server would accept this connection
            assert found["outward_connects"] is False, (outward, found)
    else:  # the job has another machine, which must reach this rank
        assert listening in ([ANY_V4], [ANY_V6]), found
        if outward is not None:  # from this machine, and this user: served
            assert found["outward_connects"] is True, (outward, found)


SERVE_UNTIL_STDIN_CLOSES = """
import json, sys
from npu_bridge.core.collectives import server
server._start_server(0, json.loads(sys.argv[1]))
print("READY", flush=True)
sys.stdin.read()
"""
HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def _start_rank_server(user, directory, port):
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([REPO_ROOT, TESTS_DIR]),
        HOME=str(directory),
        TMPDIR=str(directory),
        TF_CPP_MIN_LOG_LEVEL="0",
    )
    addresses = json.dumps([f"127.0.0.1:{port}", f"127.0.0.1:{port + 1}"])  # rank 1 is never started
    return subprocess.Popen(
        [*user.prefix(), sys.executable, "-c", SERVE_UNTIL_STDIN_CLOSES, addresses],
        env=env,
        cwd=REPO_ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _wait_ready(process, timeout=120):
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        if not select.select([process.stdout], [], [], left)[0]:
            return False
        line = process.stdout.readline()
        if "READY" in line:
            return True
        if not line:
            return False
    return False


def _stop(process):
    """Ends the server (communicate closes its stdin; else by its process group) and returns its stderr."""
    try:
        return process.communicate(timeout=30)[1]
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        return process.communicate()[1]


def _first_frame_bytes(user, port):
    """As ``user``: how many bytes of the first frame of the server at 127.0.0.1:``port`` arrive (0: closed)."""
    result = subprocess.run(
        [*user.prefix(view=False), "bash", "-c", FIRST_FRAME_PROBE, "127.0.0.1", str(port)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd="/",
    )
    assert result.returncode == 0, result
    return int(result.stdout.strip())


def _first_frame_bytes_through(family, port):
    """The same probe from this process, through a socket of ``family`` (gRPC's clients use dual-stack IPv6
    sockets, which the kernel lists in /proc/net/tcp6)."""
    target = ("::ffff:127.0.0.1", port) if family == socket.AF_INET6 else ("127.0.0.1", port)
    with socket.socket(family, socket.SOCK_STREAM) as connection:
        connection.settimeout(20)
        connection.connect(target)
        connection.sendall(HTTP2_PREFACE)
        received = b""
        while len(received) < 9:
            chunk = connection.recv(9 - len(received))
            if not chunk:
                break
            received += chunk
    return len(received)


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("who", ["root", "unprivileged user"])
def test_a_loopback_rank_serves_its_own_user_and_closes_every_other_users_connection(who):
    owner = helpers.unprivileged_users.chosen(who)
    others = [helpers.unprivileged_users.attacker()]
    if who != "root":
        others.append(helpers.unprivileged_users.as_root())  # root's processes are another user's too
    port = plan.find_free_ports(2)
    with owner.directory() as directory:
        process = _start_rank_server(owner, directory, port)
        stderr = ""
        try:
            ready = _wait_ready(process)
            if not ready:
                stderr = _stop(process)
            assert ready, stderr[-3000:]
            assert _first_frame_bytes(owner, port) == 9
            if who == "root":
                assert _first_frame_bytes_through(socket.AF_INET, port) == 9
                assert _first_frame_bytes_through(socket.AF_INET6, port) == 9
            for other in others:
                assert _first_frame_bytes(other, port) == 0, other.name
            assert _first_frame_bytes(owner, port) == 9  # the server still accepts after refusing
        finally:
            if process.returncode is None:
                stderr = _stop(process)
    refusals = [line for line in stderr.splitlines() if "closed a connection from user" in line]
    assert len(refusals) == len(others), stderr[-3000:]
    for line, other in zip(refusals, others):
        assert f"from user {other.uid} of this machine: it serves only its job (processes of user {owner.uid}" in line


VOUCH = """
import hashlib, hmac, json, os, socket, struct, sys
from npu_bridge.core.collectives import job_server, server
from npu_bridge.core.runtime import job_secret
addresses = json.loads(sys.argv[1])
key = job_secret.vouching_key(b"s" * 32)
if sys.argv[2] == "keyed":
    job_server.vouch_with(key)
server._start_server(0, addresses)
port = int(addresses[0].rpartition(":")[2])


def endpoint(address):
    return socket.inet_pton(socket.AF_INET6, "::ffff:" + address[0]) + struct.pack(">H", address[1])


def ask(question, timeout=1.0, source="127.0.0.1"):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as asker:
        asker.bind((source, 0))
        asker.settimeout(timeout)
        asker.sendto(question, ("127.0.0.1", port))
        try:
            return asker.recv(200)
        except TimeoutError:
            return None


def verdict(server_end, client_end, source="127.0.0.1"):
    nonce = os.urandom(16)
    answer = ask(b"NPUVQ\\0\\0\\1" + nonce + endpoint(server_end) + endpoint(client_end), source=source)
    if answer is None:
        return None
    signed, mac = answer[:-32], answer[-32:]
    assert signed[:8] == b"NPUVA\\0\\0\\1" and signed[8:24] == nonce, answer
    return {"verdict": signed[-1], "mac_ok": hmac.compare_digest(mac, hmac.new(key, signed, hashlib.sha256).digest())}


listener = socket.create_server(("127.0.0.1", 0))
client = socket.create_connection(listener.getsockname())
accepted, _ = listener.accept()
print("RESULT " + json.dumps({
    "ours": verdict(listener.getsockname(), client.getsockname()),
    "reversed": verdict(client.getsockname(), listener.getsockname()),
    "closed_port": verdict(listener.getsockname(), ("127.0.0.1", 9)),
    "stranger": verdict(listener.getsockname(), client.getsockname(), source="127.0.0.2"),  # not a host of the job
    "garbage": ask(b"NPUVQ" + b"x" * 10) is not None,
}))
"""


@pytest.mark.slow
@pytest.mark.parametrize("keyed", ["keyed", "no key"])
def test_a_rank_of_a_job_across_machines_vouches_for_its_users_sockets_alone_under_the_jobs_key(keyed):
    """With the job secret, a rank whose job has another machine answers on UDP at its port whether a TCP socket of
    this machine is its user's, signed with the key Python's hmac derives from the secret; without it, it answers
    nothing. ``test_two_hosts.py`` checks that another user's connection from the job's other machine is closed."""
    base = plan.find_free_ports(2)
    addresses = [f"127.0.0.1:{base}", f"192.0.2.7:{base + 1}"]  # TEST-NET-1: rank 1 is never started
    result = run_python(VOUCH, args=(json.dumps(addresses), keyed), timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    found = json.loads(next(line for line in result.stdout.splitlines() if line.startswith("RESULT "))[7:])
    if keyed == "no key":
        assert found == {"ours": None, "reversed": None, "closed_port": None, "stranger": None, "garbage": False}
        return
    # the socket from the client's endpoint to the listener's is this user's: vouched, signed with the job's key
    assert found["ours"] == {"verdict": 1, "mac_ok": True}
    # the same endpoints the other way round name the accepted socket, also this user's; a closed port none
    assert found["reversed"] == {"verdict": 1, "mac_ok": True}
    assert found["closed_port"] == {"verdict": 0, "mac_ok": True}
    assert found["garbage"] is False  # not a question: no answer
    assert found["stranger"] is None  # nor to a machine outside the job


def test_ranks_across_machines_without_npu_run_vouch_with_the_secret_or_run_open_only_on_request(tmp_path, monkeypatch):
    keys = []
    monkeypatch.setattr(job_server, "vouch_with", keys.append)
    secret = tmp_path / "job.secret"
    job_secret.create(str(secret))

    class Rank:
        def __init__(self, host):
            self.host = host

    class World:
        rank_id = 1

        def __init__(self, *hosts):
            self.ranks = [Rank(host) for host in hosts]

    across, one_host = World("10.0.0.1", "10.0.0.2"), World("10.0.0.1", "10.0.0.1")
    with_secret = {job_secret.VARIABLE: str(secret)}
    assert server._vouch_across_machines(one_host, {}) is False  # one machine: the owner check suffices
    for network in ("private", "authenticated", "shared"):  # npu-run chose, and said so
        assert server._vouch_across_machines(across, {exposure.NETWORK_VARIABLE: network}) is False
    assert server._vouch_across_machines(across, {exposure.INSECURE_VARIABLE: "1"}) is False  # open, on request
    assert keys == []
    with pytest.raises(CollectiveError) as refused:
        server._vouch_across_machines(across, {exposure.INSECURE_VARIABLE: "yes"})
    assert str(refused.value).startswith(
        "rank 1: the job spans 2 machines (10.0.0.1, 10.0.0.2) and its ranks have no job secret, so any process on "
        "those machines could run code in them. Make one with npu-run --make-secret FILE and give it to every rank "
        "as NPU_RUN_JOB_SECRET=FILE"
    ), refused.value
    assert "NPU_RUN_INSECURE_OPEN_PORTS=1" in str(refused.value)
    with pytest.raises(CollectiveError, match=r"\(10\.0\.0\.1, node\\x1b\[2J\)"):  # a host's name is shown inert
        server._vouch_across_machines(World("10.0.0.1", "node\x1b[2J"), {})
    assert server._vouch_across_machines(across, with_secret) is True
    assert keys == [job_secret.vouching_key(job_secret.load(str(secret)))] and len(keys[0]) == 32
    secret.chmod(0o644)
    with pytest.raises(LaunchError, match="readable by nobody else"):
        server._vouch_across_machines(across, with_secret)
