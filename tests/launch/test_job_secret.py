"""The job secret of a job across machines: the file's checks, the handshake between relays, and what npu-run
does with a multi-machine table with and without a secret (without running ranks)."""

import os
import socket
import threading

import pytest
from helpers.paths import TESTS_DIR

from npu_bridge.core.launch import cli, job_network, plan
from npu_bridge.core.runtime import job_secret
from npu_bridge.core.runtime.errors import JobAuthenticationError, LaunchError

TWO_SERVERS = os.path.join(TESTS_DIR, "data", "rank_tables", "template1_2servers.json")


@pytest.fixture
def secret(tmp_path):
    path = tmp_path / "job.secret"
    job_secret.create(str(path))
    return path


def test_a_new_secret_is_owner_only_random_and_never_written_over_a_file_or_a_link(secret, tmp_path):
    assert secret.stat().st_mode & 0o777 == 0o600
    other = tmp_path / "other.secret"
    job_secret.create(str(other))
    assert job_secret.load(str(secret)) != job_secret.load(str(other))
    with pytest.raises(LaunchError, match="cannot create the job secret .*exists"):
        job_secret.create(str(secret))
    victim = tmp_path / "victim"
    victim.write_text("keep")
    (tmp_path / "link").symlink_to(victim)
    with pytest.raises(LaunchError, match="cannot create the job secret"):
        job_secret.create(str(tmp_path / "link"))
    assert victim.read_text() == "keep"


def test_a_secret_others_can_read_a_link_a_short_or_a_missing_one_is_refused(secret, tmp_path):
    secret.chmod(0o640)
    with pytest.raises(LaunchError, match=r"readable by nobody else .*mode 0640\): chmod 600"):
        job_secret.load(str(secret))
    secret.chmod(0o600)
    (tmp_path / "link").symlink_to(secret)
    with pytest.raises(LaunchError, match="cannot read the job secret .*symbolic link.*mount the file with subPath"):
        job_secret.load(str(tmp_path / "link"))
    short = tmp_path / "short"
    short.write_text("abc")
    short.chmod(0o600)
    with pytest.raises(LaunchError, match="must hold 32 to 4096 bytes"):
        job_secret.load(str(short))
    with pytest.raises(LaunchError, match="npu-run --make-secret .*missing.* and copy it to every machine"):
        job_secret.load(str(tmp_path / "missing"))


def _handshake(client_key, server_key, port=60000, client_port=None):
    a, b = socket.socketpair()
    a.settimeout(5)
    b.settimeout(5)
    outcome = {}

    def server():
        try:
            job_secret.server_handshake(b, server_key, port)
            outcome["server"] = "accepted"
        except OSError as e:
            outcome["server"] = e
        b.close()

    thread = threading.Thread(target=server)
    thread.start()
    try:
        job_secret.client_handshake(a, client_key, port if client_port is None else client_port)
        outcome["client"] = "accepted"
    except OSError as e:
        outcome["client"] = e
    a.close()
    thread.join(10)
    return outcome


def test_the_handshake_accepts_the_job_key_only(secret):
    key = job_secret.job_key(job_secret.load(str(secret)), "job-1")
    assert _handshake(key, key) == {"server": "accepted", "client": "accepted"}
    other_job = job_secret.job_key(job_secret.load(str(secret)), "job-2")
    refused = _handshake(other_job, key)
    assert isinstance(refused["client"], JobAuthenticationError)
    assert "does not know the job's secret" in str(refused["client"])
    assert isinstance(refused["server"], OSError)  # the client hung up once it saw the server's wrong answer
    another_port = _handshake(key, key, client_port=60001)
    assert isinstance(another_port["client"], JobAuthenticationError)


def test_a_client_that_does_not_speak_the_handshake_is_refused(secret):
    key = job_secret.job_key(job_secret.load(str(secret)), "job-1")
    a, b = socket.socketpair()
    b.settimeout(5)
    a.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")  # what a plain gRPC client sends first
    with pytest.raises(JobAuthenticationError, match="did not start the job's handshake"):
        job_secret.server_handshake(b, key, 60000)
    a.close()
    b.close()


def test_a_multi_machine_job_with_a_secret_needs_ip_addresses(tmp_path, secret, monkeypatch):
    table = tmp_path / "names.json"
    table.write_text(
        '{"status": "completed", "version": "1.0", "server_count": "2", "server_list": ['
        '{"server_id": "127.0.0.1", "device": [{"device_id": "0", "rank_id": "0"}]},'
        '{"server_id": "localhost", "device": [{"device_id": "0", "rank_id": "1"}]}]}'
    )
    job = plan.plan_from_table(str(table), "127.0.0.1", {"JOB_ID": "j"}, port_base=60000)
    monkeypatch.setattr(job_network.addresses, "is_local", lambda host: host == "127.0.0.1")  # "localhost" elsewhere
    with pytest.raises(LaunchError, match="'localhost' is a host name"):
        job_network.choose(job, share=False, secret_path=str(secret), report=print)


def test_make_secret_on_the_command_line(tmp_path, capsys):
    path = tmp_path / "s"
    assert cli.main(["--make-secret", str(path)]) == 0
    assert "wrote a new job secret" in capsys.readouterr().err
    assert path.stat().st_mode & 0o777 == 0o600
    assert cli.main(["--make-secret", str(path)]) == cli.EXIT_USAGE
    assert "error: cannot create the job secret" in capsys.readouterr().err


def test_a_directory_or_a_fifo_as_the_secret_is_refused_by_name(tmp_path):
    with pytest.raises(LaunchError, match=f"the job secret {tmp_path} is not a regular file"):
        job_secret.load(str(tmp_path))
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(LaunchError, match="is not a regular file"):
        job_secret.load(str(fifo))  # opened without blocking: no writer needed
