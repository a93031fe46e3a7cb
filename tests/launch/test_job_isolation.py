"""A rank's server serves only its own job: the attack of a client outside the job.

TensorFlow's gRPC server listens on every interface and authenticates nobody, so a plain TensorFlow client that
reaches a rank's port can run a graph in it (here: one that writes a file, with the rank's privileges). npu-run runs
a job that lives on one machine in a private network: the same client, on the same machine, through 127.0.0.1,
cannot even connect, and the job's own collectives still work. With ``--share-network`` the ranks' servers are the
library's (``job_server``): through this machine's outward address the attack is refused, through 127.0.0.1 it is
refused to another user and succeeds for the job's own (which shows the test can fail). Ranks started by hand on
one machine have the same servers and warn of nothing. Jobs run as root and as an unprivileged user
(``helpers.unprivileged_users``: the private network is then a user and a network namespace), and another local
user can neither connect to a rank nor join its namespaces.
"""

import json
import os
import pathlib
import socket
import subprocess
import sys
import time

import helpers.unprivileged_users
import pytest
from helpers.collectives import FIRST_FRAME_PROBE, OUTSIDE_CLIENT, Ranks, outward_address, parse_results
from helpers.markdown import anchors
from helpers.paths import REPO_ROOT, TESTS_DIR, WORKERS

from npu_bridge.core.collectives import exposure
from npu_bridge.core.launch import cli, job_network, plan


def _start_job(tmp_path, launcher_args, user=None):
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([REPO_ROOT, TESTS_DIR]),
        HCCL_CONNECT_TIMEOUT="120",
        TF_CPP_MIN_LOG_LEVEL="2",
        HOME=str(tmp_path),
        TMPDIR=str(tmp_path),
    )
    prefix = user.prefix() if user else []
    command = [*prefix, sys.executable, "-m", "npu_bridge.core.launch", *launcher_args, "--stop-timeout", "5", "--"]
    command += [
        sys.executable,
        os.path.join(WORKERS, "exposure_worker.py"),
        str(tmp_path / "ready"),
        str(tmp_path / "go"),
    ]
    return subprocess.Popen(
        command,
        env=env,
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _wait_ready(job, tmp_path, timeout=150):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and job.poll() is None:
        if (tmp_path / "ready").exists():
            return int((tmp_path / "ready").read_text())
        time.sleep(0.2)
    job.kill()
    out, err = job.communicate()
    pytest.fail(f"the job did not get ready (exit {job.returncode}):\n{out}\n{err}")


def _attack(port, victim, host="127.0.0.1"):
    return subprocess.run(
        [sys.executable, "-c", OUTSIDE_CLIENT, f"{host}:{port}", str(victim)],
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )


def _attack_is_refused(port, victim, host="127.0.0.1"):
    attack = _attack(port, victim, host)
    assert attack.returncode == 3 and "REFUSED" in attack.stdout, attack.stdout + attack.stderr
    assert not victim.exists()


def _finish(job, tmp_path):
    (tmp_path / "go").touch()
    try:
        out, err = job.communicate(timeout=90)
    finally:
        if job.poll() is None:
            os.killpg(job.pid, 9)
            job.wait()
    return out, err


def _one_server_table(tmp_path):
    path = tmp_path / "table.json"
    path.write_text(json.dumps(plan.local_rank_table(2)))
    return ["--rank-table", str(path), "--job-id", "isolation-test"]


def _as_other_user(argv):
    """Runs ``argv`` as another local user without privileges (no interpreter needed: util-linux and bash)."""
    other = helpers.unprivileged_users.attacker()
    return subprocess.run(
        [*other.prefix(view=False), *argv], capture_output=True, text=True, timeout=30, check=False, cwd="/"
    )


def _another_user_cannot_reach_or_join(job_pid, port):
    connect = _as_other_user(["bash", "-c", f"exec 3<>/dev/tcp/127.0.0.1/{port}"])
    assert connect.returncode != 0 and "Connection refused" in connect.stderr, connect
    for namespaces in (["-n"], ["-U", "-n"]):
        join = _as_other_user(["nsenter", "-t", str(job_pid), *namespaces, "true"])
        assert join.returncode != 0 and "Permission denied" in join.stderr + join.stdout, (namespaces, join)


@pytest.mark.slow
@pytest.mark.timeout(420)
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="network namespaces are Linux's")
@pytest.mark.parametrize("who", ["root", "unprivileged user"])
@pytest.mark.parametrize("world", ["-n 2", "one-server rank table"])
def test_a_client_outside_a_one_machine_job_cannot_reach_its_ranks(world, who):
    user = helpers.unprivileged_users.as_root() if who == "root" else helpers.unprivileged_users.job_user()
    with user.directory() as tmp_path:
        _outside_client_cannot_reach(user, tmp_path, world)


def _outside_client_cannot_reach(user, tmp_path, world):
    launcher_args = ["-n", "2"] if world == "-n 2" else _one_server_table(tmp_path)
    job = _start_job(tmp_path, launcher_args, user)
    try:
        port = _wait_ready(job, tmp_path)
        for rank_port in (port, port + 1):
            with pytest.raises(ConnectionRefusedError):
                socket.create_connection(("127.0.0.1", rank_port), timeout=5).close()
        if user.privileged:  # the full attack once; for the other user, refused connections to every port show it
            _attack_is_refused(port, tmp_path / "victim")
        if os.geteuid() == 0:
            _another_user_cannot_reach_or_join(job.pid, port)
    finally:
        out, err = _finish(job, tmp_path)
    assert job.returncode == 0, out + err
    mechanism = "network namespace" if user.privileged else "user and network namespace"
    if "could not give them a private network" in err:
        pytest.skip(f"npu-run could not make a private network here: {err.splitlines()[0]}")
    assert f"in a private network (loopback only, a {mechanism})" in err, err
    assert "without authentication" not in err
    results = parse_results(out)
    assert [results[r]["first"] for r in (0, 1)] == [[3.0], [3.0]]
    assert [results[r]["second"] for r in (0, 1)] == [[3.0], [3.0]]


@pytest.mark.slow
@pytest.mark.timeout(420)
def test_with_share_network_only_the_jobs_own_user_can_reach_its_ranks(tmp_path):
    other = helpers.unprivileged_users.attacker()
    job = _start_job(tmp_path, ["-n", "2", "--share-network"])
    outward = outward_address()
    try:
        port = _wait_ready(job, tmp_path)
        if outward is not None:  # the ranks listen on 127.0.0.1 alone: another machine cannot connect
            _attack_is_refused(port, tmp_path / "victim", host=outward)
        # their servers close other users' connections before reading a byte
        probe = _as_other_user(["bash", "-c", FIRST_FRAME_PROBE, "127.0.0.1", str(port)])
        assert probe.stdout.strip() == "0", probe
        victim = tmp_path / "victim"
        attack = _attack(port, victim)  # the job's own user: what TensorFlow's server allows anyone
        assert attack.returncode == 0, attack.stdout + attack.stderr
        assert victim.read_text() == "written by a client outside the job"
    finally:
        out, err = _finish(job, tmp_path)
    assert job.returncode == 0, out + err
    assert "without authentication" not in err
    assert "in this machine's network (--share-network was given); their servers serve only this user's" in err
    assert f"closed a connection from user {other.uid} of this machine: it serves only its job" in err


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_ranks_started_by_hand_on_one_machine_need_no_warning(tmp_path):
    """Their servers listen on 127.0.0.1 and serve their user alone (``job_server``): nothing to warn about."""
    port_base = plan.find_free_ports(2)
    with Ranks("allreduce_worker.py", 2, port_base, tmp_path=tmp_path, env={"HCCL_CONNECT_TIMEOUT": "120"}) as ranks:
        ended = ranks.wait([0, 1], timeout=240)
        outputs = [ranks.output(r) for r in (0, 1)]
    assert [ended[r][0] for r in (0, 1)] == [0, 0], outputs
    for output in outputs:
        assert "without authentication" not in output, (output, _network_seen_by_this_process())


def test_a_loopback_job_in_this_machines_network_says_why_and_warns_of_nothing(tmp_path):
    table = tmp_path / "hccl.json"
    table.write_text(json.dumps(plan.local_rank_table(2)))
    job = plan.plan_from_table(str(table), "127.0.0.1", {"JOB_ID": "j"}, port_base=60000)
    network = job_network.choose(job, share=True, secret_path=None, report=print)
    assert (network.kind, network.warning, network.reason) == (exposure.SHARED, None, "--share-network was given.")
    assert cli._network_words(network) == (
        ", in this machine's network (--share-network was given); their servers serve only this user's processes"
    )


def _network_seen_by_this_process():
    """What decides the rank warning, as this process sees it (for a failure's message)."""
    with open("/proc/self/net/dev", encoding="ascii") as f:
        interfaces = [line.split(":", 1)[0].strip() for line in f.readlines()[2:]]
    return {"interfaces": interfaces, "log_level": os.environ.get("ASCEND_GLOBAL_LOG_LEVEL")}


def test_only_ranks_of_a_job_across_machines_started_without_npu_run_warn():
    assert exposure.rank_warning({}, 0, 60000, True, private=lambda: False) is None  # one machine: the user's alone
    assert exposure.rank_warning({exposure.NETWORK_VARIABLE: "shared"}, 0, 60000, False, private=lambda: False) is None
    assert exposure.rank_warning({}, 0, 60000, False, private=lambda: True) is None
    several = exposure.rank_warning({}, 3, 60003, False, private=lambda: False)
    assert "server of rank 3 listens on TCP port 60003" in several
    assert "spans machines" in several and "any process on the job's other machines" in several
    assert "NPU_RUN_INSECURE_OPEN_PORTS=1" in several and "NPU_RUN_JOB_SECRET" in several  # why open; how to close
    assert "it closes connections from other machines than the job's" in several and "--job-secret" in several


def test_a_private_network_has_only_loopback(tmp_path):
    net_dev = tmp_path / "dev"
    header = "Inter-|   Receive\n face |bytes\n"
    net_dev.write_text(header + "    lo: 0 0\n")
    assert exposure.is_private(str(net_dev))
    net_dev.write_text(header + "    lo: 0 0\n  eth0: 0 0\n")
    assert not exposure.is_private(str(net_dev))
    assert not exposure.is_private(str(tmp_path / "missing"))


def test_the_warning_links_to_a_section_that_exists():
    page, _, anchor = exposure.DOCS_MULTI_HOST.partition("#")
    assert anchor in anchors(pathlib.Path(REPO_ROOT, page)), exposure.DOCS_MULTI_HOST


def _loopback_two_server_table(path):
    servers = [
        {
            "server_id": f"node-{s}",
            "host_ip": "127.0.0.1",
            "device": [{"device_id": str(d), "rank_id": str(2 * s + d)} for d in range(2)],
        }
        for s in range(2)
    ]
    path.write_text(json.dumps({"status": "completed", "server_count": "2", "server_list": servers}))
    return str(path)


@pytest.mark.slow
@pytest.mark.timeout(420)
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="network namespaces are Linux's")
@pytest.mark.parametrize("who", ["root", "unprivileged user"])
def test_two_launchers_of_a_loopback_two_server_table_share_one_private_network(who):
    """Both servers of the table are this machine: no flag is needed, and no port of the job is open."""
    user = helpers.unprivileged_users.as_root() if who == "root" else helpers.unprivileged_users.job_user()
    with user.directory() as tmp_path:
        table = _loopback_two_server_table(tmp_path / "hccl.json")
        base = plan.find_free_ports(4)
        launchers = [
            _start_job(
                tmp_path,
                ["--rank-table", table, "--server-id", f"node-{s}", "--job-id", "loopback", "--port-base", str(base)],
                user,
            )
            for s in range(2)
        ]
        try:
            assert _wait_ready(launchers[0], tmp_path) == base
            for rank in range(4):
                with pytest.raises(ConnectionRefusedError):
                    socket.create_connection(("127.0.0.1", base + rank), timeout=5).close()
            if user.privileged:
                _attack_is_refused(base + 2, tmp_path / "victim")
            if os.geteuid() == 0:
                for launcher in launchers:
                    _another_user_cannot_reach_or_join(launcher.pid, base)
        finally:
            ends = [_finish(launcher, tmp_path) for launcher in launchers]
    errors = "".join(err for _, err in ends)
    assert [launcher.returncode for launcher in launchers] == [0, 0], ends
    assert "without authentication" not in errors
    assert "joined from another launcher of the job" in errors, errors
    results = parse_results(ends[0][0] + ends[1][0])
    assert [results[r]["first"] for r in range(4)] == [[10.0]] * 4


def test_a_table_across_machines_without_a_secret_needs_the_explicit_opt_out(tmp_path, capsys):
    table = tmp_path / "hccl.json"
    servers = [
        {"server_id": "127.0.0.1", "device": [{"device_id": "0", "rank_id": "0"}]},
        {"server_id": "192.0.2.7", "device": [{"device_id": "0", "rank_id": "1"}]},  # TEST-NET-1: never here
    ]
    table.write_text(json.dumps({"status": "completed", "server_count": "2", "server_list": servers}))
    command = ["--rank-table", str(table), "--job-id", "j", "--", sys.executable, "-c", "pass"]
    assert cli.main(command) == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert "without a job secret their ranks' ports would be open" in err
    assert "npu-run --make-secret FILE" in err and "--insecure-open-ports" in err
    job = plan.plan_from_table(str(table), "127.0.0.1", {"JOB_ID": "j"}, port_base=60000)
    network = job_network.choose(job, share=False, secret_path=None, report=print, insecure_open_ports=True)
    assert network.kind == exposure.SHARED
    assert "--insecure-open-ports was given" in network.warning and "60000 of every interface" in network.warning
