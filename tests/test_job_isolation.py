"""A rank's server serves only its own job: the attack of a client outside the job.

TensorFlow's gRPC server listens on every interface and authenticates nobody, so a plain TensorFlow client that
reaches a rank's port can run a graph in it (here: one that writes a file, with the rank's privileges). npu-run
runs a job that lives on one machine in a private network: the same client, on the same machine, through
127.0.0.1, cannot even connect, and the job's own collectives still work. With ``--share-network`` the attack
succeeds (which shows the test can fail) and npu-run says so, naming the ports; ranks started by hand say it
themselves.
"""

import json
import os
import pathlib
import socket
import subprocess
import sys
import time

import pytest
from collective_helpers import OUTSIDE_CLIENT, REPO_ROOT, TESTS_DIR, WORKERS, Ranks, parse_results

from npu_bridge.core.collectives import exposure
from npu_bridge.core.launch import plan


def _start_job(tmp_path, launcher_args):
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([REPO_ROOT, TESTS_DIR]),
        HCCL_CONNECT_TIMEOUT="120",
        TF_CPP_MIN_LOG_LEVEL="2",
    )
    command = [sys.executable, "-m", "npu_bridge.core.launch", *launcher_args, "--stop-timeout", "5", "--"]
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


def _attack(port, victim):
    return subprocess.run(
        [sys.executable, "-c", OUTSIDE_CLIENT, f"127.0.0.1:{port}", str(victim)],
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )


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


@pytest.mark.slow
@pytest.mark.timeout(420)
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="network namespaces are Linux's")
@pytest.mark.parametrize("world", ["-n 2", "one-server rank table"])
def test_a_client_outside_a_one_machine_job_cannot_reach_its_ranks(tmp_path, world):
    launcher_args = ["-n", "2"] if world == "-n 2" else _one_server_table(tmp_path)
    job = _start_job(tmp_path, launcher_args)
    try:
        port = _wait_ready(job, tmp_path)
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
        victim = tmp_path / "victim"
        attack = _attack(port, victim)
        assert attack.returncode == 3, attack.stdout + attack.stderr
        assert "REFUSED" in attack.stdout
        assert not victim.exists()
    finally:
        out, err = _finish(job, tmp_path)
    if "private network" not in err:
        pytest.skip(f"npu-run could not make a private network here: {err.splitlines()[0]}")
    assert job.returncode == 0, out + err
    assert "in a private network (loopback only)" in err
    assert "without authentication" not in err
    results = parse_results(out)
    assert [results[r]["first"] for r in (0, 1)] == [[3.0], [3.0]]
    assert [results[r]["second"] for r in (0, 1)] == [[3.0], [3.0]]


@pytest.mark.slow
@pytest.mark.timeout(420)
def test_with_share_network_the_attack_succeeds_and_npu_run_names_the_open_ports(tmp_path):
    job = _start_job(tmp_path, ["-n", "2", "--share-network"])
    try:
        port = _wait_ready(job, tmp_path)
        victim = tmp_path / "victim"
        attack = _attack(port, victim)
        assert attack.returncode == 0, attack.stdout + attack.stderr
        assert victim.read_text() == "written by a client outside the job"
    finally:
        out, err = _finish(job, tmp_path)
    assert job.returncode == 0, out + err
    warnings = [line for line in err.splitlines() if "without authentication" in line]
    assert len(warnings) == 1, err
    assert f"TCP ports {port}-{port + 1} of every interface" in warnings[0]
    assert "--share-network was given" in warnings[0]
    assert "[rank" not in warnings[0]  # said once, by npu-run, not by every rank


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_ranks_started_by_hand_warn_that_their_servers_are_open(tmp_path):
    port_base = plan.find_free_ports(2)
    with Ranks("allreduce_worker.py", 2, port_base, tmp_path=tmp_path, env={"HCCL_CONNECT_TIMEOUT": "120"}) as ranks:
        ended = ranks.wait([0, 1], timeout=240)
        outputs = [ranks.output(r) for r in (0, 1)]
    assert [ended[r][0] for r in (0, 1)] == [0, 0], outputs
    for rank, output in enumerate(outputs):
        lines = [line for line in output.splitlines() if "without authentication" in line]
        assert len(lines) == 1, (output, _network_seen_by_this_process())
        assert f"server of rank {rank} listens on TCP port {port_base + rank} of every interface" in lines[0]
        assert "not started by npu-run" in lines[0]


def _network_seen_by_this_process():
    """What decides the rank warning, as this process sees it (for a failure's message)."""
    with open("/proc/self/net/dev", encoding="ascii") as f:
        interfaces = [line.split(":", 1)[0].strip() for line in f.readlines()[2:]]
    return {"interfaces": interfaces, "log_level": os.environ.get("ASCEND_GLOBAL_LOG_LEVEL")}


def test_the_rank_warning_is_left_to_npu_run_and_to_private_networks():
    assert exposure.rank_warning({exposure.NETWORK_VARIABLE: "shared"}, 0, 60000, True, private=lambda: False) is None
    assert exposure.rank_warning({}, 0, 60000, True, private=lambda: True) is None
    several = exposure.rank_warning({}, 3, 60003, False, private=lambda: False)
    assert "server of rank 3 listens on TCP port 60003" in several
    assert "spans several machines" in several and "60003 only from the job's machines" in several


def test_a_private_network_has_only_loopback(tmp_path):
    net_dev = tmp_path / "dev"
    header = "Inter-|   Receive\n face |bytes\n"
    net_dev.write_text(header + "    lo: 0 0\n")
    assert exposure.is_private(str(net_dev))
    net_dev.write_text(header + "    lo: 0 0\n  eth0: 0 0\n")
    assert not exposure.is_private(str(net_dev))
    assert not exposure.is_private(str(tmp_path / "missing"))


def test_the_warnings_link_to_sections_that_exist():
    from test_docs_layout import anchors  # a test helper, only for this test

    for link in (exposure.DOCS_ONE_HOST, exposure.DOCS_MULTI_HOST):
        page, _, anchor = link.partition("#")
        assert anchor in anchors(pathlib.Path(REPO_ROOT, page)), link
