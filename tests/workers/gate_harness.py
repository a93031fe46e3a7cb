"""A job-secret gate alone, for attacks on it: the gate of ``relay.Gate`` listens at 127.0.0.2:PORT, and a stand-in
for this machine's rank listens at 127.0.0.1:PORT and greets every connection the gate hands over.

Usage: gate_harness.py PORT KEY_HEX  (prints {"gate": PID} once the gate runs; ends when standard input closes)
"""

import json
import socket
import sys
import threading

from npu_bridge.core.launch import relay

RANK_GREETING = b"rank says hi\n"


def _rank(listener):
    while True:
        conn, _ = listener.accept()
        with conn:
            conn.sendall(RANK_GREETING)


def main(port, key_hex):
    gate = relay.Gate(
        [("127.0.0.2", port)], bytes.fromhex(key_hex), lambda text: print(f"gate: {text}", file=sys.stderr, flush=True)
    )
    gate.start()
    rank = socket.create_server(("127.0.0.1", port))
    threading.Thread(target=_rank, args=(rank,), daemon=True).start()
    gate.serve_inside([])
    print(json.dumps({"gate": gate.pid}), flush=True)
    sys.stdin.read()
    gate.stop()


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2])
