"""Floods a gate from a host outside the job: silent connections and slow senders, bounded in count and time.

Usage: gate_flood.py TARGET PORTS SOURCES SECONDS
  TARGET   the gate's address; PORTS: comma-separated ports; SOURCES: comma-separated local addresses to connect
  from; SECONDS: how long to keep the flood up.
Keeps up to 40 connections per source and port open (those the gate closes are opened again), a tenth of them
sending a well-formed handshake start one byte a second. Prints {"opened": N} at the end.
"""

import contextlib
import json
import selectors
import signal
import socket
import sys
import time

PER_SOURCE_AND_PORT = 40
_START = b"NPUJOB\x00\x01" + bytes(32)


def _open(source, target, port):
    sock = socket.socket()
    sock.setblocking(False)
    sock.bind((source, 0))
    with contextlib.suppress(BlockingIOError):
        sock.connect((target, port))
    return sock


def main(target, ports, sources, seconds):
    selector = selectors.DefaultSelector()
    slots = [(s, p, i) for s in sources for p in ports for i in range(PER_SOURCE_AND_PORT)]
    open_socks, progress = {}, {}
    end = time.monotonic() + seconds
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        _flood(selector, slots, open_socks, progress, target, end)
    finally:
        for sock in open_socks.values():
            sock.close()
        print(json.dumps({"opened": _opened[0]}), flush=True)


_opened = [0]


def _flood(selector, slots, open_socks, progress, target, end):
    next_byte = time.monotonic()
    while time.monotonic() < end:
        for slot in slots:
            if slot not in open_socks:
                try:
                    sock = _open(slot[0], target, slot[1])
                except OSError:
                    continue
                open_socks[slot], progress[slot] = sock, 0
                selector.register(sock, selectors.EVENT_READ, slot)
                _opened[0] += 1
        for key, _ in selector.select(0.2):  # readable: closed (or refused) by the gate
            slot = key.data
            selector.unregister(key.fileobj)
            key.fileobj.close()
            del open_socks[slot]
        if time.monotonic() >= next_byte:
            next_byte += 1.0
            for slot, sock in list(open_socks.items()):
                if slot[2] % 10 == 0 and progress[slot] < len(_START):
                    with contextlib.suppress(OSError):
                        progress[slot] += sock.send(_START[progress[slot] : progress[slot] + 1])


if __name__ == "__main__":
    main(sys.argv[1], [int(p) for p in sys.argv[2].split(",")], sys.argv[3].split(","), float(sys.argv[4]))
