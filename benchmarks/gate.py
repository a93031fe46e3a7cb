"""What the job-secret gate adds to one connection between machines, against a plain connection in the same run.

A stand-in for a rank listens at 127.0.0.1:PORT and greets each connection; npu-run's gate (``relay.Gate``, the
real one: a forked gate process, its admission loop, the hand-over to the inside relay) listens at
127.0.0.2:PORT. Each sample is one connection until the rank's greeting arrives:

- baseline: connect straight to the rank;
- gate: connect to the gate, prove the job key (``job_secret.client_handshake``), read the greeting relayed
  through the gate process and the inside relay.

Samples alternate; the medians and their difference are printed. Target: the gate adds at most 5 ms.

Run: python benchmarks/gate.py [--connections 300]
"""

import argparse
import socket
import statistics
import threading
import time

from npu_bridge.core.launch import plan, relay
from npu_bridge.core.runtime import job_secret

GREETING = b"rank\n"


def _rank(listener):
    while True:
        conn, _ = listener.accept()
        with conn:
            conn.sendall(GREETING)


def _read_greeting(sock):
    data = b""
    while len(data) < len(GREETING):
        chunk = sock.recv(64)
        if not chunk:
            break
        data += chunk
    if data != GREETING:
        raise RuntimeError(f"unexpected reply {data!r}")


def _direct(port):
    start = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        _read_greeting(sock)
    return time.perf_counter() - start


def _through_gate(port, key):
    start = time.perf_counter()
    with socket.create_connection(("127.0.0.2", port), timeout=10) as sock:
        job_secret.client_handshake(sock, key, port)
        _read_greeting(sock)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=300)
    args = parser.parse_args()
    port = plan.find_free_ports(1)
    key = bytes(range(32))
    gate = relay.Gate([("127.0.0.2", port)], key, lambda text: None)
    gate.start()  # forks: before any thread of this process
    try:
        rank = socket.create_server(("127.0.0.1", port))
        threading.Thread(target=_rank, args=(rank,), daemon=True).start()
        gate.serve_inside([])
        direct, gated = [], []
        for _ in range(args.connections):
            direct.append(_direct(port))
            gated.append(_through_gate(port, key))
    finally:
        gate.stop()
    base, with_gate = statistics.median(direct), statistics.median(gated)
    print(f"connections: {args.connections} of each, alternating")
    print(f"plain connection to the rank, median: {base * 1e3:.3f} ms")
    print(f"through the gate (handshake + relay), median: {with_gate * 1e3:.3f} ms")
    print(f"the gate adds {(with_gate - base) * 1e3:.3f} ms per connection (target <= 5 ms)")


if __name__ == "__main__":
    main()
