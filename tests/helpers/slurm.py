"""A real single-node Slurm cluster for a test: slurmctld and slurmd (Debian's slurm-wlm, which ``.ci/run`` installs
as root) on free ports of 127.0.0.1, with a configuration, state and logs in a temporary directory.

slurmd runs in the mount namespace ``helpers.unprivileged_users`` gives jobs of other users, so the tasks it starts
as an unprivileged user can run this interpreter and checkout. Authentication is off (``auth/none``): the cluster
listens on 127.0.0.1 only and lives as long as the test. Every daemon is ended by PID afterwards.
"""

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time

import pytest

from helpers import unprivileged_users
from npu_bridge.core.launch import plan

_COMMANDS = ("slurmctld", "slurmd", "srun", "sbatch", "sinfo", "squeue", "scancel")


def _config(folder, host, ports):
    return f"""ClusterName=npu-test
SlurmctldHost={host}(127.0.0.1)
AuthType=auth/none
CredType=cred/none
SlurmUser=root
SlurmdUser=root
SlurmctldPort={ports}
SlurmdPort={ports + 1}
StateSaveLocation={folder}/state
SlurmdSpoolDir={folder}/spool
SlurmctldPidFile={folder}/slurmctld.pid
SlurmdPidFile={folder}/slurmd.pid
SlurmctldLogFile={folder}/slurmctld.log
SlurmdLogFile={folder}/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName={host} NodeAddr=127.0.0.1 CPUs={os.cpu_count() or 2} RealMemory=1000 State=UNKNOWN
PartitionName=test Nodes={host} Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
"""


@contextlib.contextmanager
def cluster():
    """Starts the cluster; yields the environment (``SLURM_CONF``) its commands need. Skips with the reason when
    Slurm is not installed or this is not root (slurmd must start tasks as other users)."""
    missing = [c for c in _COMMANDS if shutil.which(c) is None]
    if missing:
        pytest.skip(f"Slurm is not installed ({', '.join(missing)} missing): .ci/run installs slurm-wlm as root")
    if os.geteuid() != 0:
        pytest.skip("a Slurm cluster of this machine needs root (slurmd starts the tasks as their user)")
    # in the temporary directory every user can enter: an unprivileged user's srun reads slurm.conf
    folder = tempfile.mkdtemp(prefix="npu-slurm-", dir=unprivileged_users.shared_temporary_directory())
    os.chmod(folder, 0o755)  # every user's srun reads slurm.conf; state and spool stay root's
    for sub in ("state", "spool"):
        os.mkdir(os.path.join(folder, sub), 0o700)
    conf = os.path.join(folder, "slurm.conf")
    with open(conf, "w") as f:
        f.write(_config(folder, socket.gethostname().split(".")[0], plan.find_free_ports(2)))
    os.chmod(conf, 0o644)
    env = dict(os.environ, SLURM_CONF=conf)
    daemons = []
    try:
        for daemon, prefix in (("slurmctld", []), ("slurmd", unprivileged_users.view_prefix())):
            with open(os.path.join(folder, f"{daemon}.out"), "w") as out:
                daemons.append(
                    subprocess.Popen([*prefix, daemon, "-D", "-f", conf], env=env, stdout=out, stderr=subprocess.STDOUT)
                )
        _wait_until_idle(env, daemons, folder)
        yield env
    finally:
        jobs = subprocess.run(["squeue", "-h", "-o", "%i"], env=env, capture_output=True, text=True, timeout=30)
        for job in jobs.stdout.split():
            subprocess.run(["scancel", job], env=env, capture_output=True, timeout=30)
        for process in daemons:
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        shutil.rmtree(folder, ignore_errors=True)


def _wait_until_idle(env, daemons, folder):
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        state = subprocess.run(["sinfo", "-h", "-o", "%T"], env=env, capture_output=True, text=True, timeout=30)
        if state.stdout.strip() == "idle":
            return
        if any(p.poll() is not None for p in daemons):
            break
        time.sleep(0.5)
    logs = ""
    for name in ("slurmctld.out", "slurmd.out", "slurmctld.log", "slurmd.log"):
        path = os.path.join(folder, name)
        if os.path.exists(path):
            with open(path, errors="replace") as f:
                logs += f"--- {name}\n{f.read()[-2000:]}\n"
    pytest.fail("the Slurm cluster did not become idle within 60 s\n" + logs)
