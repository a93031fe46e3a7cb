"""A rank of a job whose ranks all meet at 127.0.0.1 listens there alone (``loopback_server``): TensorFlow's own
server would listen on every interface. Its sessions and collectives are TensorFlow's; a job with another host keeps
TensorFlow's protocol."""

import json

import pytest
from helpers.collectives import outward_address
from helpers.processes import run_python

from npu_bridge.core.collectives import loopback_server
from npu_bridge.core.launch import plan

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


@pytest.mark.slow
def test_a_rank_whose_job_is_all_on_loopback_listens_on_127_0_0_1_alone_and_serves_its_sessions():
    base = plan.find_free_ports(2)
    addresses = [f"127.0.0.1:{base}", f"127.0.0.1:{base + 1}"]  # rank 1 is never started
    outward = outward_address()
    result = run_python(SERVE, args=(json.dumps(addresses), json.dumps(outward)), timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    found = json.loads(next(line for line in result.stdout.splitlines() if line.startswith("RESULT "))[7:])
    assert sorted(found["tcp"] + found["tcp6"]) in ([LOOPBACK_V4], [LOOPBACK_V4_IN_V6]), found
    assert found["loopback_connects"] and found["value"] == 6.0
    if outward is not None:  # TensorFlow's own server would accept this connection
        assert found["outward_connects"] is False, (outward, found)


def test_only_a_job_all_on_127_0_0_1_gets_the_loopback_protocol():
    assert loopback_server.all_on_loopback(["127.0.0.1", "127.0.0.1"])
    assert not loopback_server.all_on_loopback(["127.0.0.1", "192.0.2.7"])
    assert not loopback_server.all_on_loopback(["::1"])
    assert loopback_server.protocol_for(["127.0.0.1:60000", "192.0.2.7:60001"]) == "grpc"
    assert loopback_server.protocol_for(["192.0.2.7:60000", "192.0.2.8:60001"]) == "grpc"
    assert loopback_server.protocol_for(["127.0.0.1:60000"]) == loopback_server.PROTOCOL
