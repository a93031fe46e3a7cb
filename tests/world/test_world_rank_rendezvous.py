"""Ranks that torchrun or mpirun start one by one across machines, knowing only MASTER_ADDR / MASTER_PORT: they meet
at rank 0, prove the job secret and learn every rank's host; what is refused and what a rendezvous that does not
complete says."""

import socket
import threading

import pytest

from npu_bridge.core.launch import plan
from npu_bridge.core.runtime import job_secret
from npu_bridge.core.runtime.errors import NotAvailableError, RankTableError, RendezvousError
from npu_bridge.core.world import rank_rendezvous, rendezvous, world


def _free_port():
    # above the ephemeral range: a port the kernel handed out would be free only until some client's connection
    # took it as its local port, before rank 0 binds it
    return plan.find_free_ports(1)


@pytest.fixture
def secret(tmp_path):
    path = str(tmp_path / "job.secret")
    job_secret.create(path)
    return path


def _torchrun(rank, size, port, secret, **extra):
    """A torchrun rank's variables, one rank per machine (so the world spans machines)."""
    env = dict(
        RANK=str(rank),
        WORLD_SIZE=str(size),
        LOCAL_RANK="0",
        LOCAL_WORLD_SIZE="1",
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
        TORCHELASTIC_RUN_ID=f"run-{port}",
        NPU_RUN_JOB_SECRET=secret,
        HCCL_CONNECT_TIMEOUT="20",
    )
    return {**env, **extra}


def _load_all(envs):
    """Each environment's world, loaded at once in its own thread (as the ranks' processes would); errors too."""
    results = [None] * len(envs)

    def load(i):
        try:
            results[i] = world.load_world(envs[i])
        except Exception as e:  # noqa: BLE001 (the test compares what each rank got)
            results[i] = e

    threads = [threading.Thread(target=load, args=(i,)) for i in range(len(envs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return results


def test_torchrun_ranks_across_machines_meet_at_rank_0_and_learn_every_host(secret):
    port = _free_port()
    worlds = _load_all([_torchrun(r, 3, port, secret) for r in (2, 0, 1)])
    assert [(w.source, w.rank_id, w.rank_size) for w in worlds] == [
        ("torchrun", 2, 3),
        ("torchrun", 0, 3),
        ("torchrun", 1, 3),
    ], worlds
    assert all([r.host for r in w.ranks] == ["127.0.0.1"] * 3 for w in worlds)
    assert all(w.job_id == f"run-{port}" for w in worlds)
    # once met, the same process asks again without a second rendezvous (rank 0 no longer listens)
    again = world.load_world(dict(_torchrun(1, 3, port, secret), EXTRA="changed environment"))
    assert [r.host for r in again.ranks] == ["127.0.0.1"] * 3


def test_mpi_ranks_given_master_addr_meet_the_same_way(secret):
    port = _free_port()
    env = {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "NPU_RUN_JOB_SECRET": secret, "JOB_ID": "mpi-job"}
    envs = [
        dict(env, OMPI_COMM_WORLD_RANK=str(r), OMPI_COMM_WORLD_SIZE="2", OMPI_COMM_WORLD_LOCAL_SIZE="1") for r in (0, 1)
    ]
    worlds = _load_all(envs)
    assert [(w.source, w.rank_id, w.local_rank_size) for w in worlds] == [("mpi", 0, 2), ("mpi", 1, 2)]


def test_under_torchruns_own_store_the_rendezvous_takes_the_next_port(secret):
    placement = world.scheduler_env.torchrun(_torchrun(0, 4, 29500, secret))
    chief = rank_rendezvous.chief_of(_torchrun(0, 4, 29500, secret, TORCHELASTIC_USE_AGENT_STORE="True"), placement)
    assert (chief.host, chief.port, chief.is_chief, chief.per_rank) == ("127.0.0.1", 29501, True, True)
    assert rank_rendezvous.chief_of(_torchrun(0, 4, 29500, secret), placement).port == 29500
    with pytest.raises(RankTableError, match="MASTER_PORT=65535 is torchrun's store"):
        rank_rendezvous.chief_of(_torchrun(0, 4, 65535, secret, TORCHELASTIC_USE_AGENT_STORE="True"), placement)
    # the store really holds MASTER_PORT: the ranks still meet
    port = _free_port()
    with socket.create_server(("127.0.0.1", port)):
        agent = {"TORCHELASTIC_USE_AGENT_STORE": "True"}
        worlds = _load_all([_torchrun(r, 2, port, secret, **agent) for r in (0, 1)])
    assert [w.rank_id for w in worlds] == [0, 1], worlds


def test_without_a_secret_or_with_another_one_no_world_forms(secret, tmp_path):
    port = _free_port()
    env = _torchrun(1, 2, port, secret)
    del env["NPU_RUN_JOB_SECRET"]
    with pytest.raises(NotAvailableError) as info:
        world.load_world(env)
    assert "meet at rank 0 (127.0.0.1:%d) once each proves the job secret" % port in str(info.value)
    assert "npu-run --make-secret FILE" in str(info.value) and "NPU_RUN_JOB_SECRET=FILE" in str(info.value)

    other = str(tmp_path / "other.secret")
    job_secret.create(other)
    # rank 0 waits long enough for the other rank to try even on a loaded machine (a busy CI worker starved it 3 s)
    worlds = _load_all([_torchrun(0, 2, port, secret, HCCL_CONNECT_TIMEOUT="8"), _torchrun(1, 2, port, other)])
    assert isinstance(worlds[1], RendezvousError), worlds
    assert "does not know the job's secret (every rank needs the same job secret file in NPU_RUN_JOB_SECRET" in str(
        worlds[1]
    )
    assert isinstance(worlds[0], RendezvousError)
    assert "was not complete within HCCL_CONNECT_TIMEOUT=8 s: registered 1 ranks: 0 (127.0.0.1); missing ranks: 1" in (
        str(worlds[0])
    )


def test_a_missing_rank_0_is_named_and_ranks_on_rank_0s_host_are_reached_by_its_name(secret):
    port = _free_port()
    with pytest.raises(RendezvousError) as info:
        world.load_world(_torchrun(1, 2, port, secret, HCCL_CONNECT_TIMEOUT="1"))
    assert f"rendezvous at 127.0.0.1:{port} (torchrun) did not answer within HCCL_CONNECT_TIMEOUT=1 s" in str(
        info.value
    )
    assert "start rank 0 on the host MASTER_ADDR names" in str(info.value)
    # MASTER_ADDR a name: rank 0 listens on every interface, and a rank on its host is reached by that name too
    # (its own address may be a loopback one, as Debian maps a host's name)
    port = _free_port()
    worlds = _load_all([_torchrun(r, 3, port, secret, MASTER_ADDR="localhost") for r in (0, 1, 2)])
    assert [[r.host for r in w.ranks] for w in worlds] == [["localhost"] * 3] * 3, worlds
    assert [w.local_rank_size for w in worlds] == [3, 3, 3]


def test_a_second_rank_with_one_rank_id_is_refused_and_those_that_came_hear_why_the_job_did_not_form():
    port = _free_port()
    key = b"k" * 32

    def chief(rank, is_chief=False):
        return rendezvous.Chief("torchrun", "127.0.0.1", port, is_chief, None, launchers=3, order=rank, per_rank=True)

    results = {}

    def run(name, call):
        try:
            results[name] = call()
        except RendezvousError as e:
            results[name] = str(e)

    threads = [
        threading.Thread(target=run, args=("rank 0", lambda: rendezvous.serve(chief(0, True), key, 1, 8, print)))
    ]
    threads += [
        threading.Thread(target=run, args=(f"rank 1 ({i})", lambda: rendezvous.register(chief(1), key, 1, 20, print)))
        for i in range(2)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    second = sorted((results[f"rank 1 ({i})"] for i in range(2)), key=lambda text: "refused" not in text)
    assert "answered: it refused this rank: another rank has RANK 1 already" in second[0], results
    # the first rank 1 came, and hears when rank 0 gives up, instead of waiting out its own 20 s
    assert "answered: the chief's rendezvous at 127.0.0.1:%d (torchrun) was not complete within " % port in second[1]
    assert "registered 2 ranks: 0 (127.0.0.1), 1 (127.0.0.1); missing ranks: 2" in second[1]
    assert "the job is complete when all 3 ranks (WORLD_SIZE) have registered" in results["rank 0"]
