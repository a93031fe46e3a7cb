"""The job-secret gate under hostile clients: floods of silent connections from many addresses, slow senders,
failing ``accept()`` calls. The gate must keep admitting a peer that knows the secret, keep its threads and
open files bounded, and report the refusals periodically.

The gate process runs in ``workers/gate_harness.py`` (at 127.0.0.2, with a stand-in rank at 127.0.0.1); the
attackers connect from other loopback addresses (127.0.1.x), so the per-address cap does not hide the flood.
"""

import contextlib
import errno
import json
import os
import resource
import select
import socket
import subprocess
import sys
import threading
import time

import pytest
from helpers.paths import REPO_ROOT, TESTS_DIR, WORKERS

from npu_bridge.core.launch import gate_admission, plan
from npu_bridge.core.runtime import job_secret

KEY = bytes(range(32))
SILENT_ADDRESSES = 120
SILENT_PER_ADDRESS = 20  # 2,400 connections, more than the per-address cap and the harness's file limit
SLOW_SENDERS = 30
FILE_LIMIT = 512  # the gate's hard open-file limit in the harness (it raises its soft limit to it)


@contextlib.contextmanager
def _more_open_files(count):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = min(hard, max(soft, count))
    resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    try:
        yield wanted
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def _harness(port):
    def limit_files():
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, FILE_LIMIT))

    return subprocess.Popen(
        [sys.executable, os.path.join(WORKERS, "gate_harness.py"), str(port), KEY.hex()],
        env=dict(os.environ, PYTHONPATH=os.pathsep.join([REPO_ROOT, TESTS_DIR])),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=limit_files,
    )


def _connect_from(source, port, host="127.0.0.2"):
    sock = socket.socket()
    sock.setblocking(False)
    sock.bind((source, 0))
    with contextlib.suppress(BlockingIOError):
        sock.connect((host, port))
    return sock


def _legitimate_peer(port):
    """Proves the key to the gate and returns what the rank behind it says (or raises)."""
    with socket.create_connection(("127.0.0.2", port), timeout=5) as sock:
        job_secret.client_handshake(sock, KEY, port)
        sock.settimeout(5)
        return sock.recv(64)


def _slow_sender(sock, stop):
    """A well-formed start of a handshake, one byte a second: never complete within the deadline."""
    for byte in b"NPUJOB\x00\x01" + bytes(32):
        if stop.wait(1.0):
            return
        try:
            select.select([], [sock], [], 1)
            sock.send(bytes([byte]))
        except OSError:
            return


def _gate_resources(pid):
    return len(os.listdir(f"/proc/{pid}/task")), len(os.listdir(f"/proc/{pid}/fd"))


@pytest.mark.slow
@pytest.mark.timeout(180)
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="loopback source addresses and /proc are Linux's")
def test_a_flood_of_silent_and_slow_clients_does_not_keep_a_peer_with_the_secret_out():
    port = plan.find_free_ports(1)
    harness = _harness(port)
    attackers, stop = [], threading.Event()
    try:
        gate = json.loads(harness.stdout.readline())["gate"]
        assert _legitimate_peer(port) == b"rank says hi\n"
        threads_before, files_before = _gate_resources(gate)
        with _more_open_files(SILENT_ADDRESSES * SILENT_PER_ADDRESS + SLOW_SENDERS + 256):
            slow = [_connect_from(f"127.0.2.{i + 1}", port) for i in range(SLOW_SENDERS)]
            senders = [threading.Thread(target=_slow_sender, args=(s, stop), daemon=True) for s in slow]
            for sender in senders:
                sender.start()
            for a in range(SILENT_ADDRESSES):
                attackers += [_connect_from(f"127.0.1.{a + 1}", port) for _ in range(SILENT_PER_ADDRESS)]
            peak = (0, 0)
            for _ in range(3):  # the peer gets in again and again while the flood holds
                time.sleep(1)
                peak = max(peak, _gate_resources(gate))
                assert _legitimate_peer(port) == b"rank says hi\n"
            threads, files = max(peak, _gate_resources(gate))
            stop.set()
            for sock in attackers + slow:
                sock.close()
        # A slow sender alone is cut at the handshake's deadline although it keeps sending.
        late_stop = threading.Event()
        late = _connect_from("127.0.2.200", port)
        threading.Thread(target=_slow_sender, args=(late, late_stop), daemon=True).start()
        started = time.monotonic()
        while time.monotonic() < started + gate_admission.HANDSHAKE_TIMEOUT + 5 and not _closed_by_peer(late):
            time.sleep(0.25)
        late_stop.set()
        assert _closed_by_peer(late), "a slow sender kept its handshake open past the deadline"
        assert time.monotonic() - started > gate_admission.HANDSHAKE_TIMEOUT - 1
        late.close()
        assert threads <= threads_before + 2, (threads_before, threads)
        assert files <= files_before + gate_admission.capacity(FILE_LIMIT) + 8, (files_before, files)
        assert harness.poll() is None
    finally:
        stop.set()
        for sock in attackers:
            sock.close()
        harness.stdin.close()
        try:
            harness.wait(timeout=30)
        finally:
            if harness.poll() is None:
                harness.kill()
                harness.wait()
    err = harness.stderr.read()
    assert "refused a connection from 127.0.1." in err, err
    assert "more than 16 handshakes in flight from this address" in err or "gate was full" in err, err


def _closed_by_peer(sock):
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        return bool(readable) and sock.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


class _FailingListener:
    """A listener whose accept() fails with EMFILE the first ``failures`` times."""

    def __init__(self, real, failures):
        self._real = real
        self.failures = failures

    def fileno(self):
        return self._real.fileno()

    def getsockname(self):
        return self._real.getsockname()

    def setblocking(self, flag):
        self._real.setblocking(flag)

    def accept(self):
        if self.failures:
            self.failures -= 1
            raise OSError(errno.EMFILE, os.strerror(errno.EMFILE))
        return self._real.accept()


def test_failed_accepts_caps_and_periodic_reports_leave_room_for_a_peer_with_the_secret(monkeypatch):
    monkeypatch.setattr(gate_admission, "REPORT_INTERVAL", 0.0)
    monkeypatch.setattr(gate_admission, "PER_ADDRESS", 2)
    reports, handed = [], []
    real = gate_admission.listening_socket("127.0.0.1", 0)
    port = real.getsockname()[1]
    listener = _FailingListener(real, failures=3)
    admission = gate_admission.Admission([listener], KEY, lambda s, p: handed.append(p), reports.append, limit=4)
    clients = [_connect_from(f"127.0.3.{i // 3 + 1}", port, "127.0.0.1") for i in range(9)]  # 3 addresses, 3 each
    try:
        for _ in range(40):
            admission.step(timeout=0.05)
        assert listener.failures == 0  # the loop went on after every failed accept()
        assert admission.in_flight == 4  # capped in total (two per address)
        assert any("accept() failed: Too many open files" in r for r in reports), reports
        assert any("more than 2 handshakes in flight from this address" in r for r in reports), reports
        assert any(r.startswith("refused ") and "connections from" in r for r in reports), reports
        peer = socket.create_connection(("127.0.0.1", port), timeout=5)
        done = threading.Event()

        def prove():
            job_secret.client_handshake(peer, KEY, port)
            done.set()

        thread = threading.Thread(target=prove, daemon=True)
        thread.start()
        for _ in range(100):
            admission.step(timeout=0.05)
            if done.is_set() and handed:
                break
        assert handed == [port] and done.is_set()
    finally:
        for sock in clients:
            sock.close()
        real.close()
