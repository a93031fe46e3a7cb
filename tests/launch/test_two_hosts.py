"""A job across two hosts: two network namespaces of this machine joined by a virtual Ethernet link play two
machines, each with its own address. A rank table lists both servers with two ranks each; ``npu-run`` runs
once per host, without --server-id (each launcher finds its server by address), with the same job secret
(``--job-secret``): the ranks of each host run in a private network, joined by npu-run's authenticated relays.
Checked: allreduce, allgather and broadcast across all four ranks, a data-parallel training that ends with
equal weights everywhere, that a third host (linked to host a) which does not know the secret cannot run
anything in a rank, that SIGKILL to one host's launcher ends every rank of the other host with a non-zero
code within the collective timeout, and that so does cutting the link between the hosts (for the ranks of
both). The job runs with an (unreachable) HTTP proxy set, as in many clusters: npu-run keeps the ranks off it.
The cut-link test runs the job as an unprivileged user (``helpers.unprivileged_users``), while the third host floods
host a's gate with thousands of silent and slow connections from many addresses as the job forms and trains: the job
still forms and trains to equal weights, and the gate's threads and open files stay bounded.

Needs root and ``ip`` (iproute2) with network namespace support; skipped otherwise. The namespaces, the link
and its addresses (a random 10.x.y.0/24) exist only during the test; every process the test starts is ended
by PID, and the namespaces are removed, also when the test fails.
"""

import contextlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time

import helpers.unprivileged_users
import numpy as np
import pytest
from helpers.collectives import FIRST_FRAME_PROBE, OUTSIDE_CLIENT, VECTOR, parse_results, vector
from helpers.paths import REPO_ROOT, TESTS_DIR, WORKERS

from npu_bridge.core.launch import gate_admission

EXEC_TIMEOUT = 15  # HCCL_EXEC_TIMEOUT of the job: the bound on noticing that the other host is gone
CONNECT_TIMEOUT = 90  # HCCL_CONNECT_TIMEOUT: 4 ranks importing TensorFlow on 2 shared cores can take a while
PORT_BASE = 61000  # above the outgoing-connection port range (32768-60999): see docs/multi_host.md
START_TIMEOUT = 150
FLOOD_SOURCES = 30  # addresses of the third host the flood comes from
FEATURES_STEPS_RATE = (3, 5, 0.1)  # as in workers/two_host_worker.py


class TwoHosts:
    """Two network namespaces ("hosts" a and b) joined by a veth pair, with addresses ``10.x.y.1`` and
    ``10.x.y.2`` on a random /24 and loopback up in each, and a third host c (``THIRD``), not part of the job,
    linked to host a by another veth pair on the next /24 (``10.x.y+1.2``, with a route to host a's job
    address). Use as a context manager: ``__exit__`` kills every process started in the namespaces (by PID)
    and removes them."""

    THIRD = 2

    def __init__(self):
        tag = os.getpid()
        self.namespaces = (f"npu-test-{tag}-a", f"npu-test-{tag}-b", f"npu-test-{tag}-c")
        self._links = (f"vnpu{tag}a", f"vnpu{tag}b")  # at most 15 characters
        self._third_links = (f"vnpu{tag}ac", f"vnpu{tag}c")
        first, second = random.randint(100, 254), random.randint(0, 254)
        subnet, third_subnet = f"10.{first}.{second}", f"10.{first}.{second + 1}"
        self.addresses = (f"{subnet}.1", f"{subnet}.2")
        self.third_address = f"{third_subnet}.2"
        self.flood_addresses = [f"{third_subnet}.{10 + i}" for i in range(FLOOD_SOURCES)]
        self._third_gateway = f"{third_subnet}.1"
        self.processes = []
        self._created = []

    def __enter__(self):
        try:
            for name in self.namespaces:
                self._ip("netns", "add", name)
                self._created.append(name)
            self._ip("link", "add", self._links[0], "type", "veth", "peer", "name", self._links[1])
            for name, link, address in zip(self.namespaces, self._links, self.addresses):
                self._ip("link", "set", link, "netns", name)
                self._ip("-n", name, "addr", "add", f"{address}/24", "dev", link)
                self._ip("-n", name, "link", "set", link, "up")
                self._ip("-n", name, "link", "set", "lo", "up")
            a, c = self.namespaces[0], self.namespaces[self.THIRD]
            self._ip("link", "add", self._third_links[0], "type", "veth", "peer", "name", self._third_links[1])
            self._ip("link", "set", self._third_links[0], "netns", a)
            self._ip("link", "set", self._third_links[1], "netns", c)
            self._ip("-n", a, "addr", "add", f"{self._third_gateway}/24", "dev", self._third_links[0])
            self._ip("-n", c, "addr", "add", f"{self.third_address}/24", "dev", self._third_links[1])
            for address in self.flood_addresses:
                self._ip("-n", c, "addr", "add", f"{address}/32", "dev", self._third_links[1])
            for name, link in ((a, self._third_links[0]), (c, self._third_links[1]), (c, "lo")):
                self._ip("-n", name, "link", "set", link, "up")
            self._ip("-n", c, "route", "add", f"{self.addresses[0]}/32", "via", self._third_gateway)
            self._ip("netns", "exec", self.namespaces[0], "true")  # needs to remount /sys: may be refused
        except _SetupError as e:
            self._remove()
            pytest.skip(f"cannot build two hosts from network namespaces here: {e}")
        return self

    def __exit__(self, *exc):
        for process in self.processes:
            if process.poll() is None:
                _kill_group(process.pid)
            process.wait()
        self._remove()

    def start(self, host, argv, **popen_args):
        """Starts ``argv`` in host ``host`` (0, 1 or ``THIRD``) in a process group of its own; returns the Popen."""
        process = subprocess.Popen(
            ["ip", "netns", "exec", self.namespaces[host], *argv], start_new_session=True, **popen_args
        )
        self.processes.append(process)
        return process

    def cut_link(self):
        """Takes the link down on host a's side: each host's packets to the other go nowhere from now on."""
        self._ip("-n", self.namespaces[0], "link", "set", self._links[0], "down")

    def pids(self, host):
        """PIDs of the processes running in host ``host``."""
        result = subprocess.run(
            ["ip", "netns", "pids", self.namespaces[host]], capture_output=True, text=True, check=False
        )
        return [int(pid) for pid in result.stdout.split()]

    def _remove(self):
        for host, name in enumerate(self.namespaces):
            if name not in self._created:
                continue
            for pid in self.pids(host):  # ranks run in sessions of their own: their launcher's group is not theirs
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            subprocess.run(["ip", "netns", "del", name], capture_output=True, check=False)  # takes the veth along
        self._created.clear()
        # A veth that never reached its namespace (setup failed half-way) is still here; otherwise this fails.
        for link in (self._links[0], self._third_links[0]):
            subprocess.run(["ip", "link", "del", link], capture_output=True, check=False)

    @staticmethod
    def _ip(*args):
        result = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30, check=False)
        if result.returncode != 0:
            raise _SetupError(f"`ip {' '.join(args)}` failed: {result.stderr.strip() or result.returncode}")


class _SetupError(Exception):
    pass


def _kill_group(pgid):
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _rank_table(path, addresses):
    servers = [
        {
            "server_id": address,
            "device": [
                {"device_id": str(d), "device_ip": f"192.168.{s}.{8 + d}", "rank_id": str(2 * s + d)} for d in range(2)
            ],
        }
        for s, address in enumerate(addresses)
    ]
    table = {"status": "completed", "version": "1.0", "server_count": "2", "server_list": servers}
    path.write_text(json.dumps(table, indent=1))
    return str(path)


def _read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def _sgd_reference(initial, data):
    """NPUDistributedOptimizer(SGD) from rank 0's weights: the mean of every rank's mse gradient per step."""
    features, steps, rate = FEATURES_STEPS_RATE
    kernel, bias = (np.array(v, np.float64) for v in initial)
    assert kernel.shape == (features, 1)
    for _ in range(steps):
        grads = []
        for x, y in data:
            x, y = np.array(x, np.float64), np.array(y, np.float64)
            error = 2 * (x @ kernel + bias - y) / y.size
            grads.append((x.T @ error, error.sum(axis=0)))
        kernel = kernel - rate * np.mean([g[0] for g in grads], axis=0)
        bias = bias - rate * np.mean([g[1] for g in grads], axis=0)
    return kernel, bias


@pytest.fixture
def two_hosts():
    if not sys.platform.startswith("linux"):
        pytest.skip("network namespaces exist on Linux only")
    if os.geteuid() != 0:
        pytest.skip("creating network namespaces needs root")
    if shutil.which("ip") is None:
        pytest.skip("the `ip` command (iproute2) is not installed")
    with TwoHosts() as hosts:
        yield hosts


def _job_environment():
    """This process's environment with the tests' helpers importable and the job's timeouts."""
    return dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([REPO_ROOT, TESTS_DIR]),
        TF_CPP_MIN_LOG_LEVEL="2",
        HCCL_CONNECT_TIMEOUT=str(CONNECT_TIMEOUT),
        HCCL_EXEC_TIMEOUT=str(EXEC_TIMEOUT),
    )


class Job:
    """The two-host job: ``npu-run`` in each host, started without --server-id, running
    workers/two_host_worker.py on the rank table of ``two_hosts``; output goes to files in ``tmp_path``."""

    def __init__(self, two_hosts, tmp_path, user=None, scheduler=None):
        """``scheduler``: each launcher runs ``npu-run -n 2`` with a scheduler's variables instead of a rank table
        (``SCHEDULERS``): "srun", those of task h of a two-node Slurm step (the nodes named by their addresses);
        "cm", upstream's CM_* variables (host a is the chief); "torchrun", those of a PyTorchJob pod (MASTER_ADDR
        host a); "tf_config", a TFJob worker's TF_CONFIG; "volcano", a Volcano pod's VC_TASK_INDEX and
        VC_WORKER_HOSTS."""
        self.hosts = two_hosts
        prefix = user.prefix() if user else []
        table = _rank_table(tmp_path / "hccl.json", two_hosts.addresses)
        env = dict(
            _job_environment(),
            # As in clusters behind a proxy: gRPC would send the ranks' traffic to this address (where nobody
            # listens) unless npu-run exempts the job's hosts (no_grpc_proxy).
            https_proxy=f"http://{two_hosts.addresses[0].rpartition('.')[0]}.99:3128",
        )
        if user is not None:
            env.update(HOME=str(tmp_path), TMPDIR=str(tmp_path))
        secret = str(tmp_path / "job.secret")  # one file for both hosts, as on a shared file system
        make_secret = [*prefix, sys.executable, "-m", "npu_bridge.core.launch", "--make-secret", secret]
        subprocess.run(make_secret, env=env, cwd=REPO_ROOT, check=True)
        self.outputs = [(tmp_path / f"host{h}.out", tmp_path / f"host{h}.err") for h in range(2)]
        self.launchers = []
        self.started = time.monotonic()
        for host, (out, err) in enumerate(self.outputs):
            job_id = f"two-hosts-{os.getpid()}"
            if scheduler is None:
                world, host_env = ["--rank-table", table, "--job-id", job_id], env
            else:
                variables, names_job = SCHEDULERS[scheduler]
                world = ["-n", "2"] + ([] if names_job else ["--job-id", job_id])
                host_env = dict(env, **variables(two_hosts, host))
            argv = [
                *prefix,
                sys.executable,
                "-m",
                "npu_bridge.core.launch",
                *world,
                "--port-base",
                str(PORT_BASE),
                "--stop-timeout",
                "5",
                "--job-secret",
                secret,
                "--",
                sys.executable,
                os.path.join(WORKERS, "two_host_worker.py"),
                "--loop-seconds",
                str(START_TIMEOUT),
            ]
            with open(out, "w") as stdout, open(err, "w") as stderr:
                self.launchers.append(
                    two_hosts.start(host, argv, env=host_env, cwd=REPO_ROOT, stdout=stdout, stderr=stderr)
                )

    def output(self):
        """The end of every output file, for assertion messages."""
        return "\n".join(
            f"--- host {h} {p.name}:\n{_read(p)[-3000:]}" for h, pair in enumerate(self.outputs) for p in pair
        )

    def launcher_messages(self, host):
        return _read(self.outputs[host][1])

    def results(self):
        """{rank: {name: value}} of every RESULT line so far."""
        return parse_results(_read(self.outputs[0][0]) + _read(self.outputs[1][0]))

    def wait_until_looping(self):
        """Waits until all four ranks are through the collectives and the training; returns the time."""
        deadline = self.started + START_TIMEOUT
        while sum("looping" in r for r in self.results().values()) < 4:
            assert time.monotonic() < deadline, "the ranks did not reach the allreduce loop in time\n" + self.output()
            assert all(launcher.poll() is None for launcher in self.launchers), "a launcher ended\n" + self.output()
            time.sleep(0.2)
        return time.monotonic()

    def wait_for_launcher(self, host, since):
        """Waits for the launcher of ``host`` to end; returns (exit code, seconds after ``since``)."""
        try:
            code = self.launchers[host].wait(timeout=max(0.0, since + EXEC_TIMEOUT + 30 - time.monotonic()))
        except subprocess.TimeoutExpired:
            pytest.fail(f"host {host}'s launcher still runs {EXEC_TIMEOUT + 30} s after the fault\n" + self.output())
        return code, time.monotonic() - since

    def gate_pid(self, host):
        """The PID of the gate process of ``host``'s launcher (a fork of it, with its command line), or None."""
        launcher = self.launchers[host].pid
        with open(f"/proc/{launcher}/cmdline", "rb") as f:
            command = f.read()
        for pid in self.hosts.pids(host):
            try:
                with open(f"/proc/{pid}/stat") as f:
                    parent = int(f.read().rsplit(")", 1)[1].split()[1])
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if parent == launcher and f.read() == command:
                        return pid
            except (OSError, ValueError):
                continue
        return None

    def wait_until_empty(self, host, timeout=10):
        """Waits until no process runs in ``host``; returns True if that happened within ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while self.hosts.pids(host) and time.monotonic() < deadline:
            time.sleep(0.1)
        return not self.hosts.pids(host)


def _slurm_task(two_hosts, host):
    """The variables srun gives task ``host`` of a step with one task on each of the two hosts."""
    first = two_hosts.addresses[0]
    return {
        "SLURM_JOB_ID": str(os.getpid()),
        "SLURM_STEP_ID": "0",
        "SLURM_PROCID": str(host),
        "SLURM_NODEID": str(host),
        "SLURM_LOCALID": "0",
        "SLURM_STEP_NUM_TASKS": "2",
        "SLURM_STEP_NODELIST": f"{first.rpartition('.')[0]}.[1-2]",
        "SLURM_STEP_TASKS_PER_NODE": "1(x2)",
    }


def _cm_worker(two_hosts, host):
    """Upstream's rank-table-free variables of a worker on ``host``: host a is the chief, 4 ranks in all."""
    return {
        "CM_CHIEF_IP": two_hosts.addresses[0],
        "CM_CHIEF_PORT": str(PORT_BASE - 100),
        "CM_CHIEF_DEVICE": "0",
        "CM_WORKER_SIZE": "4",
        "CM_WORKER_IP": two_hosts.addresses[host],
    }


def _torchrun_pod(two_hosts, host):
    """The variables Kubeflow's PyTorchJob gives pod ``host`` of two (the launchers meet at MASTER_ADDR)."""
    return {
        "MASTER_ADDR": two_hosts.addresses[0],
        "MASTER_PORT": str(PORT_BASE - 99),
        "WORLD_SIZE": "2",
        "RANK": str(host),
    }


def _tf_config_worker(two_hosts, host):
    """A TFJob worker's TF_CONFIG: two workers, at the hosts' addresses."""
    cluster = {"worker": [f"{address}:2222" for address in two_hosts.addresses]}
    return {"TF_CONFIG": json.dumps({"cluster": cluster, "task": {"type": "worker", "index": host}})}


def _volcano_pod(two_hosts, host):
    """A Volcano pod's variables (env and svc plugins), its task's pods named by their addresses."""
    return {"VC_TASK_INDEX": str(host), "VC_WORKER_HOSTS": ",".join(two_hosts.addresses)}


# scheduler -> (its variables for the launcher of a host, whether they name the job)
SCHEDULERS = {
    "srun": (_slurm_task, True),
    "cm": (_cm_worker, False),
    "torchrun": (_torchrun_pod, False),
    "tf_config": (_tf_config_worker, False),
    "volcano": (_volcano_pod, False),
}
FOUND = {"cm": "from the chief's rendezvous", "torchrun": "from the chief's rendezvous"}


BY_HOST = ["CollectiveReduce", "HcomShmAllGather", "HcomShmReduceScatter"]  # segment, TensorFlow across hosts, segment
GATHER_BY_HOST = ["CollectiveGather", "HcomShmAllGather"]  # TensorFlow across hosts, then the segment
# A broadcast from rank 3 (host b's second rank): across hosts between ranks 1 and 3, then each host's segment
BROADCAST_BY_HOST = [
    ["HcomShmBroadcastRecv"],
    ["CollectiveBcastRecv", "HcomShmBroadcastSend"],
    ["HcomShmBroadcastRecv"],
    ["CollectiveBcastSend", "HcomShmBroadcastSend"],
]
FLAT_BROADCAST = {False: "CollectiveBcastRecv", True: "CollectiveBcastSend"}


def _check_collectives_and_training(per_rank, two_hosts, by_host=True):
    """``by_host``: the ranks have a shared-memory segment on each host (npu-run's, or the keeper's of ranks started
    one by one), so a reduction, an all-gather and a broadcast go by host (``hierarchy``); else one TensorFlow
    collective over the four ranks."""
    # 1. Collectives. [rank, rank size, local rank id, local rank size]; servers at the hosts' addresses.
    assert [per_rank[r]["world"] for r in range(4)] == [[0, 4, 0, 2], [1, 4, 1, 2], [2, 4, 0, 2], [3, 4, 1, 2]]
    expected_addresses = [f"{two_hosts.addresses[r // 2]}:{PORT_BASE + r}" for r in range(4)]
    assert all(per_rank[r]["addresses"] == expected_addresses for r in range(4))
    inputs = np.array([vector(r) for r in range(4)])
    for r in range(4):
        assert per_rank[r]["allreduce_ops"] == (BY_HOST if by_host else ["CollectiveReduce"])
        assert per_rank[r]["allgather_ops"] == (GATHER_BY_HOST if by_host else ["CollectiveGather"])
        assert per_rank[r]["broadcast_ops"] == (BROADCAST_BY_HOST[r] if by_host else [FLAT_BROADCAST[r == 3]])
        np.testing.assert_array_equal(per_rank[r]["allreduce_sum"], per_rank[0]["allreduce_sum"])
        np.testing.assert_allclose(per_rank[r]["allreduce_odd"], np.arange(7.0) * 10)
        np.testing.assert_allclose(per_rank[r]["allreduce_sum"], inputs.sum(axis=0), rtol=1e-6)
        np.testing.assert_allclose(per_rank[r]["allreduce_max"], inputs.max(axis=0))
        np.testing.assert_array_equal(per_rank[r]["allgather"], inputs)
        np.testing.assert_array_equal(per_rank[r]["broadcast"], 4 * VECTOR)  # rank 3's input

    # 2. Training: equal weights everywhere, equal to one process averaging the four ranks' gradients.
    assert per_rank[0]["initial"] != per_rank[2]["initial"]  # the broadcast made them equal
    for r in range(1, 4):
        assert per_rank[r]["trained"] == per_rank[0]["trained"], r
    kernel, bias = _sgd_reference(per_rank[0]["initial"], [per_rank[r]["data"] for r in range(4)])
    np.testing.assert_allclose(per_rank[0]["trained"][0], kernel, rtol=1e-5)
    np.testing.assert_allclose(per_rank[0]["trained"][1], bias, rtol=1e-5)


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_collectives_training_and_a_killed_launcher_across_two_hosts(two_hosts, tmp_path):
    job = Job(two_hosts, tmp_path)
    ready = job.wait_until_looping()
    per_rank = job.results()
    for host, address in enumerate(two_hosts.addresses):
        assert (
            f"ranks ({2 * host}-{2 * host + 1}) of server '{address}' (its address is this machine's)"
            in job.launcher_messages(host)
        )
        assert "npu-run: warning" not in job.launcher_messages(host)

    _check_collectives_and_training(per_rank, two_hosts)

    # 3. A third host that does not know the job's secret: a plain TensorFlow client connects to rank 0's port
    # at host a's job address and tries to run a graph there (one that writes a file). The gate refuses it.
    victim = tmp_path / "victim"
    attack = two_hosts.start(
        TwoHosts.THIRD,
        [sys.executable, "-c", OUTSIDE_CLIENT, f"{two_hosts.addresses[0]}:{PORT_BASE}", str(victim)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"),
    )
    attack_output = attack.communicate(timeout=120)[0]
    assert attack.returncode == 3 and "REFUSED" in attack_output, attack_output
    assert not victim.exists()
    refused = f"npu-run: refused a connection from {two_hosts.third_address} to port {PORT_BASE}"
    assert refused in job.launcher_messages(0), job.output()
    # The job's own collectives still work after the attempt.
    assert all(launcher.poll() is None for launcher in job.launchers), job.output()

    # 4. SIGKILL to host 0's launcher: its ranks end (parent-death signal), and every rank of host 1 fails its
    # collective and exits non-zero within HCCL_EXEC_TIMEOUT, after which host 1's launcher ends too.
    killed = time.monotonic()
    os.kill(job.launchers[0].pid, signal.SIGKILL)
    code, launcher_seconds = job.wait_for_launcher(1, killed)
    per_rank = job.results()
    assert code != 0, job.output()
    assert job.wait_until_empty(1, timeout=0), "processes of host 1 outlived its launcher"
    # The first rank of host 1 to notice reports its failed collective; the other one may be stopped by the
    # launcher before it reports its own (it may only notice when the first one exits), or its watchdog may find
    # the leader gone first and end it with exit code 70, saying so.
    failed = [r for r in (2, 3) if "error" in per_rank[r]]
    assert failed, "no rank of host 1 reported a failed collective\n" + job.output()
    for r in failed:
        assert per_rank[r]["failed_at"] - killed < EXEC_TIMEOUT, job.output()
        assert "cannot be reached" in per_rank[r]["error"], per_rank[r]["error"]
    for r in {2, 3} - set(failed):
        stopped = f"stopping rank {r}" in job.launcher_messages(1)
        leader_gone = f"rank {r}: rank 0 (the leader, which coordinates every collective)" in job.launcher_messages(1)
        assert stopped or (leader_gone and f"rank {r} exited with code 70" in job.launcher_messages(1)), job.output()
    assert launcher_seconds < EXEC_TIMEOUT, job.output()
    assert job.wait_until_empty(0), "ranks of host 0 outlived their killed launcher"
    print(
        f"\ntwo hosts, killed launcher: ranks ready after {ready - job.started:.1f} s (collectives "
        f"{max(per_rank[r]['collectives_seconds'] for r in range(4)):.2f} s, training "
        f"{max(per_rank[r]['training_seconds'] for r in range(4)):.2f} s); host 1's first rank failed "
        f"{min(per_rank[r]['failed_at'] for r in failed) - killed:.2f} s and its launcher ended "
        f"{launcher_seconds:.2f} s after host 0's launcher was killed (HCCL_EXEC_TIMEOUT={EXEC_TIMEOUT})"
    )


@pytest.mark.slow
@pytest.mark.timeout(240)
@pytest.mark.parametrize("scheduler", sorted(SCHEDULERS))
def test_one_npu_run_per_host_started_by_a_scheduler_forms_the_job(two_hosts, tmp_path, scheduler):
    job = Job(two_hosts, tmp_path, scheduler=scheduler)
    job.wait_until_looping()
    job_id = f"slurm-{os.getpid()}" if scheduler == "srun" else f"two-hosts-{os.getpid()}"
    found = FOUND.get(scheduler, "the scheduler's variables name it")
    for host, address in enumerate(two_hosts.addresses):
        messages = job.launcher_messages(host)
        starting = f"job {job_id}: starting 2 of 4 ranks ({2 * host}-{2 * host + 1}) of server '{address}' ({found})"
        assert starting in messages and "authenticated relays" in messages, messages
        assert "npu-run: warning" not in messages, messages
    _check_collectives_and_training(job.results(), two_hosts)


def _first_frame_bytes(two_hosts, host, address, port, user=None):
    """From host ``host``, as root (or ``user``): connects to ``address:port``, sends the HTTP/2 preface and returns
    how many of the 9 bytes of the server's first frame header arrive (0: the server closed the connection)."""
    prefix = user.prefix(view=False) if user else []
    process = two_hosts.start(
        host, [*prefix, "bash", "-c", FIRST_FRAME_PROBE, address, str(port)], stdout=subprocess.PIPE, text=True
    )
    out, _ = process.communicate(timeout=60)
    assert process.returncode == 0, (host, process.returncode, out)
    return int(out.strip())


def _torchrun_rank(two_hosts, rank, secret):
    """What torchrun gives worker ``rank`` of 4 (two per node, node a serving torchrun's own store at
    MASTER_PORT), with the job's secret for the ranks' rendezvous."""
    return {
        "RANK": str(rank),
        "WORLD_SIZE": "4",
        "LOCAL_RANK": str(rank % 2),
        "LOCAL_WORLD_SIZE": "2",
        "GROUP_RANK": str(rank // 2),
        "MASTER_ADDR": two_hosts.addresses[0],
        "MASTER_PORT": str(PORT_BASE - 98),
        "TORCHELASTIC_RUN_ID": f"run-{os.getpid()}",
        "TORCHELASTIC_USE_AGENT_STORE": "True",
        "NPU_RUN_JOB_SECRET": secret,
    }


@pytest.mark.slow
@pytest.mark.timeout(240)
@pytest.mark.parametrize("scheduler", ["srun", "torchrun"])
def test_ranks_a_scheduler_starts_on_two_hosts_form_the_world_without_npu_run(two_hosts, tmp_path, scheduler):
    """Four ranks on two nodes, one process per rank and no npu-run. ``srun -n 4``: each rank's world comes from its
    Slurm variables alone; without a secret the ranks run open only because NPU_RUN_INSECURE_OPEN_PORTS=1 asks
    for it, and each warns. torchrun, as an unprivileged user: the ranks know only MASTER_ADDR, meet at rank 0 (on
    the port after torchrun's own store, which holds MASTER_PORT) and prove the job secret. Either way each host's
    first rank hands that host's ranks their segment, so collectives go by host as under npu-run. With the secret
    the ranks' servers also vouch for each other's connections: another user of the job's other host is refused."""
    user = helpers.unprivileged_users.job_user() if scheduler == "torchrun" else None
    with contextlib.ExitStack() as stack:
        directory = stack.enter_context(user.directory()) if user else tmp_path
        env = dict(_job_environment(), HCCL_IF_BASE_PORT=str(PORT_BASE), HOME=str(directory), TMPDIR=str(directory))
        for name in ("RANK_ID", "RANK_SIZE", "NPU_RUN_NETWORK", "DEVICE_ID", "ASCEND_DEVICE_ID", "JOB_ID"):
            env.pop(name, None)
        prefix = user.prefix() if user else []
        secret = str(directory / "job.secret")
        subprocess.run(
            [*prefix, sys.executable, "-m", "npu_bridge.core.launch", "--make-secret", secret], env=env, check=True
        )
        if scheduler == "torchrun":  # torchrun's agent on node a serves its store at MASTER_PORT
            store = [
                sys.executable,
                "-c",
                "import socket, sys, time; s = socket.create_server((sys.argv[1], int(sys.argv[2]))); time.sleep(600)",
            ]
            two_hosts.start(0, [*store, two_hosts.addresses[0], str(PORT_BASE - 98)])
        step = dict(_slurm_task(two_hosts, 0), SLURM_STEP_NUM_TASKS="4", SLURM_STEP_TASKS_PER_NODE="2(x2)")
        outputs = [tmp_path / f"rank{r}.out" for r in range(4)]
        started = time.monotonic()
        for rank, path in enumerate(outputs):
            if scheduler == "srun":
                task = dict(step, SLURM_PROCID=str(rank), SLURM_NODEID=str(rank // 2), SLURM_LOCALID=str(rank % 2))
                task["NPU_RUN_INSECURE_OPEN_PORTS"] = "1"
            else:
                task = _torchrun_rank(two_hosts, rank, secret)
            argv = [*prefix, sys.executable, os.path.join(WORKERS, "two_host_worker.py"), "--loop-seconds"]
            with open(path, "w") as out:
                two_hosts.start(
                    rank // 2,
                    [*argv, str(START_TIMEOUT)],
                    env=dict(env, **task),
                    cwd=REPO_ROOT,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                )

        def results():
            return parse_results(
                "\n".join(f"[rank {r}] {line}" for r, p in enumerate(outputs) for line in _read(p).splitlines())
            )

        ranks = two_hosts.processes[-4:]
        while sum("looping" in r for r in results().values()) < 4:
            output = "\n".join(f"--- rank {r}:\n{_read(p)[-2000:]}" for r, p in enumerate(outputs))
            assert time.monotonic() < started + START_TIMEOUT, "the ranks did not reach the allreduce loop\n" + output
            assert all(p.poll() is None for p in ranks), "a rank ended\n" + output
            time.sleep(0.2)
        _check_collectives_and_training(results(), two_hosts)  # each host's first rank keeps its ranks' segment
        # Rank 0's server (host a) serves the job alone: the other host of the job gets its first frame, a third
        # host does not, nor does root on host a when the ranks are another user's. With the secret (torchrun's
        # ranks), root on host b is another user whom no rank there vouches for; the job's own user there is served.
        a = two_hosts.addresses[0]
        assert _first_frame_bytes(two_hosts, 1, a, PORT_BASE) == (0 if user else 9)
        if user:
            assert _first_frame_bytes(two_hosts, 1, a, PORT_BASE, user) == 9
        assert _first_frame_bytes(two_hosts, TwoHosts.THIRD, a, PORT_BASE) == 0
        assert _first_frame_bytes(two_hosts, 0, a, PORT_BASE) == (0 if user else 9)
    for rank, path in enumerate(outputs):  # without the secret, open to the job's other host: each rank says so
        warned = f"server of rank {rank} listens on TCP port {PORT_BASE + rank} of every interface" in _read(path)
        assert warned == (scheduler == "srun"), _read(path)[-3000:]
    refusals = [line for line in _read(outputs[0]).splitlines() if "closed a connection from" in line]
    assert any(f"from {two_hosts.third_address}, not a host of the job" in line for line in refusals), refusals
    if user:
        vouched = f"from {two_hosts.addresses[1]} that no rank of the job there vouched for (the job's ranks there say"
        assert any(vouched in line for line in refusals), refusals


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_an_unprivileged_job_forms_under_a_gate_flood_and_a_cut_link_ends_every_rank(two_hosts):
    """Run by an unprivileged user while a third host floods host a's gate, the job forms and trains. Then a host
    vanishes (the link between the hosts goes down), which sends no connection resets: the ranks find out from the
    watchdog's probes or the collective timeout. Every rank must still end non-zero in time."""
    user = helpers.unprivileged_users.job_user()
    with user.directory() as tmp_path:
        _flooded_job_and_cut_link(two_hosts, tmp_path, user)


def _flooded_job_and_cut_link(two_hosts, tmp_path, user):
    ports = f"{PORT_BASE},{PORT_BASE + 1}"
    flood = two_hosts.start(
        TwoHosts.THIRD,
        [sys.executable, os.path.join(WORKERS, "gate_flood.py"), two_hosts.addresses[0], ports]
        + [",".join(two_hosts.flood_addresses), str(START_TIMEOUT)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    job = Job(two_hosts, tmp_path, user)
    peak = (0, 0)
    deadline = job.started + START_TIMEOUT
    while sum("looping" in r for r in job.results().values()) < 4:
        assert time.monotonic() < deadline, "the ranks did not reach the allreduce loop in time\n" + job.output()
        assert all(launcher.poll() is None for launcher in job.launchers), "a launcher ended\n" + job.output()
        assert flood.poll() is None, flood.communicate()[0]
        gate = job.gate_pid(0)
        if gate is not None:
            with contextlib.suppress(OSError):
                peak = max(peak, (len(os.listdir(f"/proc/{gate}/task")), len(os.listdir(f"/proc/{gate}/fd"))))
        time.sleep(0.5)
    _check_collectives_and_training(job.results(), two_hosts)
    flood.terminate()
    opened = json.loads(flood.communicate(timeout=30)[0].strip().splitlines()[-1])["opened"]
    assert opened > 1000, opened
    threads, files = peak
    assert threads > 0, "the gate process was never seen"
    assert threads <= 12, peak
    assert files <= gate_admission.MAX_IN_FLIGHT + 64, peak
    assert f"refused a connection from {two_hosts.flood_addresses[0].rpartition('.')[0]}." in job.launcher_messages(0)
    print(f"\ngate flood: {opened} connections from {FLOOD_SOURCES} addresses while the job formed; gate peak: {peak}")
    cut = time.monotonic()
    two_hosts.cut_link()
    ends = [job.wait_for_launcher(host, cut) for host in (0, 1)]
    for host, (code, seconds) in enumerate(ends):
        assert code != 0 and seconds < EXEC_TIMEOUT, (host, code, seconds, job.output())
        assert job.wait_until_empty(host, timeout=0), f"processes of host {host} outlived its launcher"
        # The first rank to notice names a rank of the other host; its launcher stops the rest of its host.
        other = "|".join(str(r) for r in (2 * (1 - host), 2 * (1 - host) + 1))
        assert re.search(
            rf"\[rank ({2 * host}|{2 * host + 1})\] .*\brank ({other}) .*(is gone|cannot be reached|did not finish)",
            job.launcher_messages(host) + _read(job.outputs[host][0]),
        ), job.output()
    print(f"\ntwo hosts, cut link: launchers ended {ends[0][1]:.2f} s and {ends[1][1]:.2f} s after the cut")
