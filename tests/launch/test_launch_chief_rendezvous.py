"""The chief's rendezvous of npu-run: launchers that only know the chief (CM_*, or torchrun-style MASTER_ADDR) find
each other there, proving the job secret; what completes the job, and the errors of what does not."""

import threading

import pytest

from npu_bridge.core.launch import chief_rendezvous, cli, plan
from npu_bridge.core.runtime.errors import LaunchError
from npu_bridge.core.world import rendezvous
from npu_bridge.core.world.rendezvous import Chief

KEY = b"k" * 32
CM = {"CM_CHIEF_IP": "10.0.0.1", "CM_CHIEF_PORT": "29000", "CM_CHIEF_DEVICE": "0", "CM_WORKER_SIZE": "4"}


def never_local(address):
    return False


def test_the_environment_names_the_chief_and_who_serves_it():
    chief = chief_rendezvous.chief_of(dict(CM, CM_WORKER_IP="10.0.0.1"), never_local)
    assert (chief.source, chief.host, chief.port, chief.is_chief, chief.total_ranks) == (
        "cm",
        "10.0.0.1",
        29000,
        True,
        4,
    )
    worker = chief_rendezvous.chief_of(CM, never_local)
    assert (worker.is_chief, worker.my_host) == (False, None)  # its address is the one it reaches the chief from
    torch = {"RANK": "1", "WORLD_SIZE": "3", "LOCAL_WORLD_SIZE": "1", "MASTER_ADDR": "head", "MASTER_PORT": "29500"}
    launcher = chief_rendezvous.chief_of(torch, never_local)
    assert (launcher.source, launcher.host, launcher.is_chief, launcher.launchers, launcher.order) == (
        "torchrun",
        "head",
        False,
        3,
        1,
    )
    assert chief_rendezvous.chief_of(dict(torch, LOCAL_WORLD_SIZE="3"), never_local) is None  # one machine
    assert chief_rendezvous.chief_of({}, never_local) is None
    assert chief_rendezvous.chief_of({"CM_WORKER_SIZE": "8"}, never_local) is None  # no chief: npu-run's own job
    for bad, message in (
        ({"CM_CHIEF_IP": "10.0.0.1"}, "CM mode needs CM_CHIEF_PORT, CM_CHIEF_DEVICE, CM_WORKER_SIZE too"),
        ({"CM_CHIEF_IP": "10.0.0.1", "CM_WORKER_SIZE": "2"}, "(set: CM_CHIEF_IP, CM_WORKER_SIZE)"),
        (dict(CM, CM_CHIEF_IP="nowhere"), "CM_CHIEF_IP has invalid value 'nowhere': must be an IPv4 or IPv6 address"),
        (dict(CM, CM_CHIEF_PORT="0"), "CM_CHIEF_PORT has invalid value '0': must be an integer in [1, 65520]"),
        (dict(torch, MASTER_PORT="http"), "MASTER_PORT has invalid value 'http': must be an integer in [1, 65535]"),
        (dict(torch, MASTER_ADDR="a b\x1b"), "MASTER_ADDR='a b\\x1b' must be a host name or an IP address"),
    ):
        with pytest.raises(LaunchError) as info:
            chief_rendezvous.chief_of(bad, never_local)
        assert message in str(info.value)


def _serve(chief, ranks, timeout=30):
    result, messages = {}, []

    def run():
        try:
            result["machines"] = rendezvous.serve(chief, KEY, ranks, timeout, messages.append)
        except LaunchError as e:
            result["error"] = str(e)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, result, messages


def test_launchers_meet_at_the_chief_and_learn_the_same_machines():
    port = plan.find_free_ports(1)
    chief = Chief("cm", "127.0.0.1", port, True, "127.0.0.1", total_ranks=5)
    thread, result, messages = _serve(chief, 2)
    answers = {}

    def worker(host, ranks):
        answers[host] = rendezvous.register(
            Chief("cm", "127.0.0.1", port, False, host, total_ranks=5), KEY, ranks, 30, lambda m: None
        )

    workers = [threading.Thread(target=worker, args=(h, n)) for h, n in (("127.0.0.3", 2), ("127.0.0.2", 1))]
    for t in workers:
        t.start()
    for t in [*workers, thread]:
        t.join(60)
    machines = [("127.0.0.1", 2), ("127.0.0.2", 1), ("127.0.0.3", 2)]  # the chief first, then by address
    assert result == {"machines": machines}, messages
    assert answers == {"127.0.0.3": (machines, "127.0.0.3"), "127.0.0.2": (machines, "127.0.0.2")}


def test_a_launcher_without_the_secret_is_refused_and_an_incomplete_job_times_out_naming_who_came():
    port = plan.find_free_ports(1)
    chief = Chief("cm", "127.0.0.1", port, True, "127.0.0.1", total_ranks=4)
    thread, result, messages = _serve(chief, 2, timeout=4)
    with pytest.raises(LaunchError, match="the chief at 127.0.0.1.*does not know the job's secret.*same --job-secret"):
        rendezvous.register(
            Chief("cm", "127.0.0.1", port, False, "127.0.0.2", total_ranks=4), b"x" * 32, 2, 3, lambda m: None
        )
    thread.join(30)
    # the launcher hung up once the chief's proof failed, which the chief reports
    assert "refused a connection from 127.0.0.1: the other side closed the connection during the handshake" in " ".join(
        messages
    )
    assert "was not complete within HCCL_CONNECT_TIMEOUT=4 s: registered 1 machines (127.0.0.1)" in result["error"]
    assert "ranks add up to CM_WORKER_SIZE=4" in result["error"]


def test_a_second_launcher_for_a_machine_or_too_many_ranks_is_refused():
    port = plan.find_free_ports(1)
    chief = Chief("cm", "127.0.0.1", port, True, "127.0.0.1", total_ranks=4)
    thread, result, _ = _serve(chief, 2, timeout=6)
    again = Chief("cm", "127.0.0.1", port, False, "127.0.0.1", total_ranks=4)
    with pytest.raises(LaunchError, match="refused this launcher: a launcher for 127.0.0.1 has registered already"):
        rendezvous.register(again, KEY, 2, 5, lambda m: None)
    big = Chief("cm", "127.0.0.1", port, False, "127.0.0.2", total_ranks=4)
    with pytest.raises(LaunchError, match="larger than CM_WORKER_SIZE=4"):
        rendezvous.register(big, KEY, 3, 5, lambda m: None)
    thread.join(30)
    assert "error" in result


def test_a_cm_job_across_machines_needs_a_job_id_and_a_secret(capsys, monkeypatch):
    for name, value in dict(CM, CM_WORKER_IP="10.0.0.2").items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("NPU_RUN_JOB_SECRET", raising=False)
    monkeypatch.delenv("JOB_ID", raising=False)
    assert cli.main(["-n", "2", "--", "true"]) == cli.EXIT_USAGE
    assert "need the same --job-id (or JOB_ID) on every machine" in capsys.readouterr().err
    assert cli.main(["-n", "2", "--job-id", "j", "--", "true"]) == cli.EXIT_USAGE
    assert "need a job secret, so that only the job's machines join" in capsys.readouterr().err
    assert cli.main(["-n", "5", "--job-id", "j", "--", "true"]) == cli.EXIT_USAGE
    assert "-n 5 is more ranks than the whole job has (CM_WORKER_SIZE=4)" in capsys.readouterr().err
