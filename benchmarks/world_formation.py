"""What forming the world from a scheduler costs beyond a rank-table start (target: <= 2 s for an 8-rank, 2-host job).

The baseline is what a rank-table start does before any rank runs: read and check the table's world
(``world.load_world`` with ``RANK_TABLE_FILE``), and ``npu-run``'s plan of its machine's share
(``plan.plan_from_table``). Measured against it, for the same 8 ranks on 2 hosts:

1. a rank ``srun`` started: its world from Slurm's variables (node list, tasks per node);
2. ``npu-run`` under ``srun --ntasks-per-node=1``: the rank table made from the step's variables, then the plan;
3. ``npu-run`` with upstream's ``CM_*`` variables: the chief's rendezvous (two launchers, 4 ranks each, on
   loopback addresses 127.0.0.1 and 127.0.0.2, the job secret's handshake included), the table, then the plan;
4. ranks torchrun started one by one across machines: all 8 meet at rank 0's rendezvous (8 threads of this
   process, each with its own connection and the job secret's handshake), which is what such a rank adds to the
   Slurm rank's reading of its variables;
5. vouching, which ranks started across machines with the job secret add to every connection their servers accept
   from another machine: one question to a rank's server about a socket of this process and its signed answer
   (the server's machine table lookup and HMAC included). A rank accepts one or two connections per other rank.

Each is the median of --repeats runs; the ratio is to the baseline, and the difference is what the target bounds.
Forming the collective servers afterwards (TensorFlow's part) is the same for every source and not counted.

Run: python benchmarks/world_formation.py [--repeats 20]
"""

import argparse
import json
import os
import socket
import statistics
import struct
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from npu_bridge.core.launch import plan, scheduler_plan  # noqa: E402
from npu_bridge.core.world import rendezvous, world  # noqa: E402

HOSTS = ("127.0.0.1", "127.0.0.2")
PER_HOST = 4
SLURM = {
    "SLURM_JOB_ID": "4242",
    "SLURM_STEP_ID": "0",
    "SLURM_STEP_NODELIST": "127.0.0.[1-2]",
}
KEY = b"k" * 32


def _timed(function, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _table(folder):
    path = os.path.join(folder, "hccl.json")
    servers = [
        {"server_id": h, "device": [{"device_id": str(d), "rank_id": str(k * PER_HOST + d)} for d in range(PER_HOST)]}
        for k, h in enumerate(HOSTS)
    ]
    with open(path, "w") as f:
        json.dump({"status": "completed", "version": "1.0", "server_count": "2", "server_list": servers}, f)
    return path


def _rank_table_start(path):
    world.load_world({"RANK_TABLE_FILE": path, "RANK_ID": "5"})
    plan.plan_from_table(path, HOSTS[1], {}, job_id="j")


def _srun_rank():
    env = dict(SLURM, SLURM_PROCID="5", SLURM_STEP_NUM_TASKS="8", SLURM_STEP_TASKS_PER_NODE="4(x2)")
    world.load_world(env)


def _srun_launcher(folder):
    env = dict(SLURM, SLURM_PROCID="1", SLURM_STEP_NUM_TASKS="2", SLURM_STEP_TASKS_PER_NODE="1(x2)")
    outer = scheduler_plan.outer_placement(env)
    with tempfile.TemporaryDirectory(dir=folder) as work:
        table = scheduler_plan.write_rank_table(scheduler_plan.machines_of(outer, PER_HOST), work)
        plan.plan_from_table(table, outer.hosts[outer.rank_id], {}, job_id="j")


def _cm_launchers(folder):
    port = plan.find_free_ports(1)
    chief = rendezvous.Chief("cm", HOSTS[0], port, True, HOSTS[0], total_ranks=2 * PER_HOST)
    worker = rendezvous.Chief("cm", HOSTS[0], port, False, HOSTS[1], total_ranks=2 * PER_HOST)
    served = {}
    thread = threading.Thread(
        target=lambda: served.update(m=rendezvous.serve(chief, KEY, PER_HOST, 30, lambda m: None))
    )
    thread.start()
    machines, mine = rendezvous.register(worker, KEY, PER_HOST, 30, lambda m: None)
    thread.join()
    assert machines == served["m"]
    with tempfile.TemporaryDirectory(dir=folder) as work:
        table = scheduler_plan.write_rank_table(machines, work)
        plan.plan_from_table(table, mine, {}, job_id="j")


def _torchrun_ranks():
    port = plan.find_free_ports(1)
    size = 2 * PER_HOST

    def chief(rank):
        return rendezvous.Chief("torchrun", HOSTS[0], port, rank == 0, None, launchers=size, order=rank, per_rank=True)

    answers = {}
    threads = [
        threading.Thread(target=lambda r=r: answers.update({r: rendezvous.register(chief(r), KEY, 1, 30, print)[0]}))
        for r in range(1, size)
    ]
    for thread in threads:
        thread.start()
    answers[0] = rendezvous.serve(chief(0), KEY, 1, 30, lambda m: None)
    for thread in threads:
        thread.join()
    assert len(answers) == size and all(a == answers[0] for a in answers.values())


def _vouching_question():
    """Starts a rank server that vouches (job across 2 hosts, rank 1 never started) and returns a function that asks
    it about a connection of this process and checks the answer."""
    from npu_bridge.core.collectives import job_server, server

    port = plan.find_free_ports(2)
    job_server.vouch_with(KEY)
    started = server._start_server(0, [f"127.0.0.1:{port}", f"192.0.2.7:{port + 1}"])
    listener = socket.create_server(("127.0.0.1", 0))
    client = socket.create_connection(listener.getsockname())
    listener.accept()

    def endpoint(address):
        return socket.inet_pton(socket.AF_INET6, "::ffff:" + address[0]) + struct.pack(">H", address[1])

    question = b"NPUVQ\0\0\1" + os.urandom(16) + endpoint(listener.getsockname()) + endpoint(client.getsockname())
    asker = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    asker.settimeout(5)

    def ask():
        asker.sendto(question, ("127.0.0.1", port))
        answer = asker.recv(200)
        assert answer[60] == 1, answer  # vouched: the socket is this user's
        return started, client  # kept alive with the question

    return ask


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = _table(folder)
        baseline = _timed(lambda: _rank_table_start(path), args.repeats)
        rows = [
            ("rank table (baseline)", baseline),
            ("srun rank (Slurm variables)", _timed(_srun_rank, args.repeats)),
            ("npu-run under srun, one per node", _timed(lambda: _srun_launcher(folder), args.repeats)),
            ("npu-run with CM_* (chief's rendezvous)", _timed(lambda: _cm_launchers(folder), args.repeats)),
            ("torchrun ranks (rank 0's rendezvous)", _timed(_torchrun_ranks, args.repeats)),
            ("vouching for one connection", _timed(_vouching_question(), args.repeats)),
        ]
    print(f"8 ranks on 2 hosts, median of {args.repeats} runs")
    print(f"{'source':42} {'ms':>8} {'ratio':>7} {'beyond baseline, ms':>20}")
    for name, seconds in rows:
        print(f"{name:42} {seconds * 1e3:8.2f} {seconds / baseline:7.2f} {(seconds - baseline) * 1e3:20.2f}")


if __name__ == "__main__":
    main()
