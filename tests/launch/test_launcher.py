"""npu-run (python -m npu_bridge.core.launch): environment of the ranks, output prefixes, exit codes, stopping ranks,
Ctrl-C, bad arguments and rank tables, and a multi-machine job split over two launchers."""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest
from helpers.collectives import parse_results
from helpers.paths import REPO_ROOT, TESTS_DIR, WORKERS
from helpers.processes import npu_run

from npu_bridge.core.launch import addresses, cli, plan

TWO_SERVERS = os.path.join(TESTS_DIR, "data", "rank_tables", "template1_2servers.json")
PRINT_ENV = (
    "import json, os; print(json.dumps({k: os.environ.get(k) for k in ('RANK_ID', 'RANK_SIZE', "
    "'DEVICE_ID', 'ASCEND_DEVICE_ID', 'JOB_ID', 'RANK_TABLE_FILE', 'HCCL_IF_BASE_PORT', 'CM_WORKER_SIZE')}))"
)


def start_npu_run(*args, **popen_args):
    """Starts npu-run with ``args`` in the background; returns the Popen (the caller ends it)."""
    return subprocess.Popen(
        [sys.executable, "-m", "npu_bridge.core.launch", *args],
        env=dict(os.environ, PYTHONPATH=REPO_ROOT),
        cwd=REPO_ROOT,
        **popen_args,
    )


def python(code):
    return ["--", sys.executable, "-c", code]


def _envs(stdout):
    envs = {}
    for line in stdout.splitlines():
        match = re.match(r"\[rank (\d+)\] (\{.*\})$", line)
        if match:
            envs[int(match.group(1))] = json.loads(match.group(2))
    return envs


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_ranks_get_their_environment_and_prefixed_output():
    code = (
        PRINT_ENV + "; import sys; print('to stderr', file=sys.stderr); "
        "print(open(os.environ['RANK_TABLE_FILE']).read().count('rank_id'))"
    )
    result = npu_run("-n", "3", "--job-id", "job-7", *python(code), env={"CM_WORKER_SIZE": "8"})
    assert result.returncode == 0, result.stderr
    envs = _envs(result.stdout)
    assert sorted(envs) == [0, 1, 2]
    for rank, env in envs.items():
        assert env["RANK_ID"] == env["DEVICE_ID"] == env["ASCEND_DEVICE_ID"] == str(rank)
        assert (env["RANK_SIZE"], env["JOB_ID"], env["CM_WORKER_SIZE"]) == ("3", "job-7", None)
        assert env["RANK_TABLE_FILE"] == envs[0]["RANK_TABLE_FILE"]
        assert f"[rank {rank}] to stderr" in result.stderr.splitlines()
        assert f"[rank {rank}] 3" in result.stdout.splitlines()
    assert not os.path.exists(envs[0]["RANK_TABLE_FILE"])  # the generated table is removed afterwards
    assert "npu-run: job job-7: all 3 ranks finished" in result.stderr


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_a_failing_rank_stops_the_others_and_sets_the_exit_code():
    code = "import os, sys, time\nif os.environ['RANK_ID'] == '1': sys.exit(3)\ntime.sleep(50); print('survived')"
    started = time.monotonic()
    result = npu_run("-n", "3", *python(code))
    assert result.returncode == 3
    assert time.monotonic() - started < 30
    assert "survived" not in result.stdout
    assert "npu-run: rank 1 exited with code 3; stopping ranks 0, 2" in result.stderr


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_a_killed_rank_gives_128_plus_the_signal():
    result = npu_run(
        "-n",
        "2",
        *python(
            "import os, signal\nif os.environ['RANK_ID'] == '0': os.kill(os.getpid(), "
            "signal.SIGKILL)\nimport time; time.sleep(50)"
        ),
    )
    assert result.returncode == 128 + signal.SIGKILL
    assert "npu-run: rank 0 was killed by signal SIGKILL" in result.stderr


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_a_rank_ignoring_sigterm_is_killed_after_the_stop_timeout():
    code = (
        "import os, signal, sys, time\nif os.environ['RANK_ID'] == '1': time.sleep(1); sys.exit(4)\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(50)"
    )
    started = time.monotonic()
    result = npu_run("-n", "2", "--stop-timeout", "1", *python(code))
    assert result.returncode == 4
    assert time.monotonic() - started < 25


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_ctrl_c_stops_every_rank():
    code = (
        "import time\nprint('ready', flush=True)\ntry:\n    time.sleep(50)\nexcept KeyboardInterrupt:\n"
        "    print('interrupted', flush=True)"
    )
    launcher = start_npu_run("-n", "2", *python(code), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        ready = [launcher.stdout.readline() for _ in range(2)]
        assert all(line.endswith("ready\n") for line in ready), ready
        launcher.send_signal(signal.SIGINT)
        stdout, stderr = launcher.communicate(timeout=30)
    finally:
        if launcher.poll() is None:
            launcher.kill()
            launcher.wait()
    assert launcher.returncode == 130
    assert sorted(re.findall(r"\[rank (\d)\] interrupted", stdout)) == ["0", "1"]
    assert "npu-run: interrupted by Ctrl-C (SIGINT): all 2 ranks stopped" in stderr


BAD_ARGUMENTS = [
    ([*python("pass")], "say how many ranks to start with -n N"),
    (["-n", "0", *python("pass")], "-n 0: the number of ranks must be in [1, 32768]"),
    (["-n", "2"], "no command given; put it after --"),
    (["-n", "2", "--port-base", "65535", *python("pass")], "HCCL_IF_BASE_PORT has invalid value '65535'"),
    (["--server-id", "node-0", *python("pass")], "--server-id needs --rank-table"),
    (
        ["--rank-table", TWO_SERVERS, "--job-id", "j", *python("pass")],
        "several servers of the rank table " + TWO_SERVERS + " have addresses of this machine ('127.0.0.1', "
        "'localhost'); pass --server-id",
    ),
    (
        ["--rank-table", TWO_SERVERS, "--server-id", "node-9", "--job-id", "j", *python("pass")],
        "--server-id 'node-9' is not a server of the rank table",
    ),
    (
        ["--rank-table", TWO_SERVERS, "--server-id", "localhost", "-n", "3", *python("pass")],
        "-n 3 disagrees with the rank table",
    ),
    (
        ["--rank-table", TWO_SERVERS, "--server-id", "localhost", *python("pass")],
        "a multi-machine job needs the same JOB_ID on every machine",
    ),
]


@pytest.mark.parametrize("args, message", BAD_ARGUMENTS, ids=[m.split(":")[0][:30] for _, m in BAD_ARGUMENTS])
def test_bad_arguments_exit_2_with_a_clear_message(args, message, capsys, monkeypatch):
    monkeypatch.delenv("JOB_ID", raising=False)
    assert cli.main(args) == cli.EXIT_USAGE
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    "content, message",
    [
        ("{not json", "is not valid JSON"),
        ('{"status": "initializing", "server_list": []}', 'status is still "initializing" after 1 s'),
        (
            '{"status": "completed", "server_count": "1", "server_list": [{"server_id": "a", "device": '
            '[{"device_id": "0", "rank_id": "1"}]}]}',
            "rank ids must be 0..0 without gaps",
        ),
    ],
)
def test_malformed_rank_tables_exit_2_naming_the_file(content, message, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HCCL_CONNECT_TIMEOUT", "1")  # a table the scheduler never completes is waited for that long
    path = tmp_path / "hccl.json"
    path.write_text(content)
    assert cli.main(["--rank-table", str(path), "--server-id", "a", "--job-id", "j", *python("pass")]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and message in err


def _table(path, servers):
    """Writes a template 1 rank table with two devices on each of ``servers`` ((server_id, host_ip or None))."""
    server_list = []
    for i, (server_id, host_ip) in enumerate(servers):
        devices = [{"device_id": str(d), "rank_id": str(2 * i + d)} for d in range(2)]
        server_list.append(
            dict({"server_id": server_id, "device": devices}, **({"host_ip": host_ip} if host_ip else {}))
        )
    path.write_text(
        json.dumps(
            {"status": "completed", "version": "1.0", "server_count": str(len(servers)), "server_list": server_list}
        )
    )
    return str(path)


@pytest.fixture
def this_machine(monkeypatch):
    """This machine's addresses, as the launcher sees them: 10.9.0.1 and loopback (and no port range worries)."""
    monkeypatch.setattr(plan.addresses, "is_local", lambda host: host in ("10.9.0.1", "127.0.0.1"))
    monkeypatch.setattr(plan, "_ephemeral_port_warnings", lambda ports, base: [])


@pytest.mark.parametrize(
    "servers, expected",
    [
        ([("10.9.0.2", None), ("10.9.0.1", None)], ("10.9.0.1", "address", [2, 3])),
        ([("node-a", "10.9.0.1"), ("node-b", "10.9.0.2")], ("node-a", "address", [0, 1])),
        ([("10.9.0.2", None)], ("10.9.0.2", "only server", [0, 1])),
    ],
    ids=["by-server-id", "by-host-ip", "one-server"],
)
def test_the_server_is_found_by_this_machines_address(servers, expected, tmp_path, this_machine):
    job = plan.plan_from_table(_table(tmp_path / "hccl.json", servers), None, {}, job_id="j")
    assert (job.server_id, job.server_found, [r.rank_id for r in job.ranks]) == expected
    assert job.warnings == ()


def test_a_pod_finds_its_server_by_the_container_ip_mindcluster_writes(tmp_path, this_machine):
    path = _table(tmp_path / "hccl.json", [("uuid-a", "10.9.0.7"), ("uuid-b", "10.9.0.8")])
    with open(path) as f:
        table = json.load(f)
    table["server_list"][1]["container_ip"] = "10.9.0.1"  # the pod's address; its node is 10.9.0.8
    with open(path, "w") as f:
        json.dump(table, f)
    job = plan.plan_from_table(path, None, {}, job_id="j")
    assert (job.server_id, job.server_found, [r.rank_id for r in job.ranks]) == ("uuid-b", "address", [2, 3])


def test_a_table_without_this_machine_names_its_servers(tmp_path, capsys, this_machine):
    path = _table(tmp_path / "hccl.json", [("10.9.0.3", None), ("node-b", "10.9.0.2")])
    assert cli.main(["--rank-table", path, "--job-id", "j", *python("pass")]) == cli.EXIT_USAGE
    assert (
        f"no server of the rank table {path} has an address of this machine (servers: '10.9.0.3', "
        "'node-b' (10.9.0.2)); pass --server-id" in capsys.readouterr().err
    )


def test_a_server_id_whose_address_is_elsewhere_is_warned_about(tmp_path, this_machine):
    path = _table(tmp_path / "hccl.json", [("10.9.0.1", None), ("10.9.0.2", None)])
    assert plan.plan_from_table(path, "10.9.0.1", {}, job_id="j").warnings == ()
    job = plan.plan_from_table(path, "10.9.0.2", {}, job_id="j")
    assert [r.rank_id for r in job.ranks] == [2, 3]
    assert job.warnings == (
        "server '10.9.0.2' of the rank table is reached at 10.9.0.2, which is not an address of this machine; "
        "the other machines' ranks will not find its ranks unless that address leads here (check --server-id or "
        "the scheduler's node list, or the server's container_ip / host_ip in the table)",
    )


@pytest.mark.parametrize(
    "port_range, reserved, warned",
    [("32768\t60999\n", "\n", True), ("32768 60999", "59000-60001,60002\n", False), ("32768 59999", "", False)],
    ids=["in-range", "reserved", "below-range"],
)
def test_rank_ports_in_the_outgoing_port_range_are_warned_about(port_range, reserved, warned, tmp_path):
    (tmp_path / "ip_local_port_range").write_text(port_range)
    (tmp_path / "ip_local_reserved_ports").write_text(reserved)
    warnings = plan._ephemeral_port_warnings([60001, 60002], 60000, proc=str(tmp_path))
    assert bool(warnings) == warned
    if warned:
        assert warnings[0].startswith(
            "the ports of this machine's ranks (60001-60002: HCCL_IF_BASE_PORT 60000 + rank id) lie in its range "
            "for outgoing connections (32768-60999, net.ipv4.ip_local_port_range)"
        )
        assert "sysctl -w net.ipv4.ip_local_reserved_ports=60001-60002" in warnings[0]
    assert plan._ephemeral_port_warnings([60001], 60000, proc=str(tmp_path / "missing")) == []


@pytest.mark.parametrize(
    "environ, table_job, local_job",
    [
        ({}, None, None),
        ({"no_proxy": "example.com"}, None, None),
        ({"https_proxy": "http://proxy:3128"}, "10.9.0.1,localhost", "127.0.0.1"),
        (
            {"http_proxy": "http://proxy:3128", "no_proxy": "example.com, 10.9.0.1"},
            "example.com,10.9.0.1,localhost",
            "example.com,10.9.0.1,127.0.0.1",
        ),
        (
            {"grpc_proxy": "http://proxy:3128", "no_proxy": "a.com", "no_grpc_proxy": "b.com"},
            "b.com,10.9.0.1,localhost",
            "b.com,127.0.0.1",
        ),
    ],
    ids=["no-proxy", "only-no_proxy", "proxy", "proxy-and-no_proxy", "no_grpc_proxy-wins"],
)
def test_ranks_reach_each_other_without_the_http_proxy(environ, table_job, local_job, tmp_path, this_machine):
    path = _table(tmp_path / "hccl.json", [("10.9.0.1", None), ("localhost", None)])
    jobs = [
        (table_job, plan.plan_from_table(path, "10.9.0.1", environ, job_id="j")),
        (local_job, plan.plan_local(2, str(tmp_path), environ, port_base=61000)),
    ]
    for expected, job in jobs:
        assert {r.env.get("no_grpc_proxy") for r in job.ranks} == {expected}
        assert all(r.env.get("no_proxy") == environ.get("no_proxy") for r in job.ranks)


def test_loopback_is_local_and_an_unknown_name_is_not():
    # Which real addresses are local is checked by tests/launch/test_two_hosts.py, in network namespaces.
    assert addresses.is_local("127.0.0.1") and addresses.is_local("localhost")
    assert not addresses.is_local("no-such-host.invalid")  # .invalid never resolves (RFC 2606)


@pytest.mark.parametrize("flag", ["-n", "-np", "--np"])
def test_the_rank_count_takes_mpirun_and_horovodrun_spellings(flag):
    assert cli._parser().parse_args([flag, "3", "--", "python", "train.py"]).size == 3


@pytest.mark.slow
def test_a_missing_command_exits_127():
    # In a process of its own: npu-run moves itself into the job's private network before it starts the ranks.
    command = [sys.executable, "-m", "npu_bridge.core.launch", "-n", "1", "--", "/nonexistent/trainer"]
    result = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == cli.EXIT_CANNOT_START
    assert "cannot start '/nonexistent/trainer'" in result.stderr


def test_free_ports_skip_ports_in_use():
    base = plan.find_free_ports(6)  # base + 2 .. base + 4 are free as well
    with socket.socket() as taken:
        taken.bind(("0.0.0.0", base + 1))
        assert plan.find_free_ports(3, start=base) == base + 2


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_a_two_machine_job_runs_as_two_launchers():
    """The rank table has servers "127.0.0.1" (ranks 0, 1) and "localhost" (ranks 2, 3): two machines that
    happen to be this one. Each launcher starts its server's ranks; together they form one 4-rank world."""
    base = plan.find_free_ports(4)
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([REPO_ROOT, TESTS_DIR]),
        TF_CPP_MIN_LOG_LEVEL="2",
        HCCL_CONNECT_TIMEOUT="120",
        HCCL_EXEC_TIMEOUT="120",
    )
    launchers = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "npu_bridge.core.launch",
                "--rank-table",
                TWO_SERVERS,
                "--server-id",
                server,
                "--job-id",
                "two-machines",
                "--port-base",
                str(base),
                "--",
                sys.executable,
                os.path.join(WORKERS, "allreduce_worker.py"),
            ],
            env=env,
            cwd=REPO_ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for server in ("127.0.0.1", "localhost")
    ]
    try:
        outputs = [launcher.communicate(timeout=160) for launcher in launchers]
    finally:
        for launcher in launchers:
            if launcher.poll() is None:
                launcher.kill()
                launcher.wait()
    assert [launcher.returncode for launcher in launchers] == [0, 0], outputs
    results = parse_results(outputs[0][0] + outputs[1][0])
    assert {rank: r["sum"] for rank, r in results.items()} == {rank: [10.0] for rank in range(4)}
    # [rank, rank size, local rank id, local rank size, device id]
    assert [results[rank]["world"] for rank in range(4)] == [
        [0, 4, 0, 2, 0],
        [1, 4, 1, 2, 1],
        [2, 4, 0, 2, 0],
        [3, 4, 1, 2, 1],
    ]


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_ranks_end_when_the_launcher_is_killed(tmp_path):
    # Quiet ranks (no output, no failure) in their own sessions: only the parent-death signal ends them.
    # Each rank writes its pid to a temporary file and renames it, so a file that exists is complete.
    code = (
        f"import os, time\npath = r'{tmp_path}/' + os.environ['RANK_ID']\n"
        "open(path + '.tmp', 'w').write(str(os.getpid()))\nos.rename(path + '.tmp', path)\ntime.sleep(50)"
    )
    launcher = start_npu_run("-n", "2", *python(code), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    pids = []
    try:
        deadline = time.monotonic() + 30
        while len(pids) < 2 and time.monotonic() < deadline:
            pids = [int((tmp_path / r).read_text()) for r in ("0", "1") if (tmp_path / r).exists()]
            time.sleep(0.1)
        assert len(pids) == 2
        launcher.kill()
        launcher.wait()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(_alive(pid) for pid in pids):
            time.sleep(0.1)
        assert not any(_alive(pid) for pid in pids)
    finally:
        for pid in pids:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        if launcher.poll() is None:
            launcher.kill()
            launcher.wait()


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:  # a zombie waiting for its reaper is not running
            return f.read().split(") ")[1][0] != "Z"
    except FileNotFoundError:
        return False


def test_npu_run_waits_for_a_rank_table_the_scheduler_is_still_filling_in(tmp_path):
    # Volcano / MindCluster mount hccl.json as {"status": "initializing"} and complete it once every pod is scheduled
    path = tmp_path / "hccl.json"
    path.write_text('{"status": "initializing"}')
    done = tmp_path / "done.json"
    done.write_text(json.dumps(plan.local_rank_table(2)))
    timer = threading.Timer(1.0, os.replace, (done, path))
    timer.start()
    try:
        planned = plan.plan_from_table(str(path), None, {"HCCL_CONNECT_TIMEOUT": "30", "JOB_ID": "j"})
    finally:
        timer.cancel()
    assert (planned.rank_size, [r.rank_id for r in planned.ranks]) == (2, [0, 1])
