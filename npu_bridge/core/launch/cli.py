"""The ``npu-run`` command line.

  npu-run -n 4 -- python train.py --flags
      4 ranks on this machine (a generated rank table, free ports)
  npu-run --rank-table hccl.json --job-id J -- python train.py
      this machine's ranks of a multi-machine job: the server of the table whose address is this machine's;
      run the same on every machine (--server-id ID names the server instead)

  CM_CHIEF_IP=... CM_CHIEF_PORT=... CM_WORKER_SIZE=16 npu-run -n 8 --job-id J --job-secret S -- python train.py
      one launcher per machine that meet at the chief (upstream's CM_* variables, or torchrun-style
      MASTER_ADDR / MASTER_PORT): ``chief_rendezvous``
  srun --ntasks-per-node=1 npu-run -n 8 --job-secret S -- python train.py
      one launcher per machine, started by a scheduler (Slurm, or a TF_CONFIG / Volcano pod): the machines and
      this one's place among them come from the scheduler's variables (``scheduler_plan``)

  npu-run --make-secret FILE
      writes a new job secret; with --job-secret FILE on every machine, a multi-machine job accepts only
      connections that prove it

The ranks' network (a private one for a one-machine job, authenticated relays between machines with a job
secret, or this machine's with a warning) is ``job_network``'s choice.

Exit code: 0 when every rank succeeded; the first failing rank's code; 128 + signal when interrupted (130 for
Ctrl-C: see ``supervisor`` and ``interrupt``); 2 for bad arguments or a malformed rank table; 127 when the
command cannot be started.
"""

import argparse
import dataclasses
import os
import shutil
import sys
import tempfile

from npu_bridge.core.collectives import exposure, shm_segment, status_files
from npu_bridge.core.launch import (
    addresses,
    chief_rendezvous,
    job_network,
    plan,
    scheduler_plan,
    stall_summary,
    supervisor,
)
from npu_bridge.core.runtime import arg_checks, job_secret, log, version
from npu_bridge.core.runtime.errors import EnvironmentVariableError, LaunchError
from npu_bridge.core.tf1 import environment
from npu_bridge.core.tf2 import environment as tf2_environment
from npu_bridge.core.world import rendezvous, timeouts

EXIT_USAGE = 2
EXIT_CANNOT_START = 127
DEFAULT_STOP_TIMEOUT = 10.0
_FOUND_BY = {
    "--server-id": "--server-id",
    "address": "its address is this machine's",
    "only server": "the table's only server",
    "scheduler": "the scheduler's variables name it",
    "rendezvous": "from the chief's rendezvous",
}


def _parser():
    parser = argparse.ArgumentParser(
        prog="npu-run",
        description="Start the rank processes of an npu_bridge job on this machine.",
        epilog="Example: npu-run -n 2 -- python train.py --batch 64",
    )
    parser.add_argument("--version", action="version", version=version.version_text("npu-run"))
    parser.add_argument(
        "-n",
        "-np",  # horovodrun's and mpirun's spelling
        "--np",
        dest="size",
        type=arg_checks.command_line_int,
        metavar="N",
        help="number of ranks to start here (with --rank-table: must match the table, or leave out)",
    )
    parser.add_argument(
        "--rank-table", metavar="FILE", help="rank table of a multi-machine job: start this machine's share of it"
    )
    parser.add_argument(
        "--server-id",
        metavar="ID",
        help="this machine's server_id in --rank-table (default: the server whose container_ip, host_ip or "
        "server_id is an address of this machine)",
    )
    parser.add_argument(
        "--job-id", metavar="ID", help="JOB_ID of every rank (default: $JOB_ID, or generated for a local job)"
    )
    parser.add_argument(
        "--port-base",
        type=arg_checks.command_line_int,
        metavar="PORT",
        help="HCCL_IF_BASE_PORT: rank r listens on PORT + r (default: $HCCL_IF_BASE_PORT; a local "
        "job finds free ports, a multi-machine job uses 60000)",
    )
    parser.add_argument(
        "--stop-timeout",
        type=arg_checks.command_line_float,
        default=DEFAULT_STOP_TIMEOUT,
        metavar="SECONDS",
        help="how long ranks being stopped get before SIGKILL, after SIGTERM (or SIGINT, on Ctrl-C) "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--share-network",
        action="store_true",
        help="run the ranks of a one-machine job in this machine's network instead of a private one (their "
        "servers can then be reached by anyone who can connect to this machine; the ranks can reach other "
        "machines)",
    )
    parser.add_argument(
        "--insecure-open-ports",
        action="store_true",
        help="run the ranks of a rank table whose servers are on several machines without a job secret: their "
        "servers then listen on every interface without authentication, so anyone who can connect to a rank's "
        "port can run code in it",
    )
    parser.add_argument(
        "--job-secret",
        metavar="FILE",
        default=os.environ.get(job_secret.VARIABLE) or None,
        help="the job's secret (the same file on every machine; readable only by you): a multi-machine job then "
        "accepts only connections that prove it (default: $%s)" % job_secret.VARIABLE,
    )
    parser.add_argument(
        "--tf1",
        action="store_true",
        help="run every Python the command starts in the TF1 mode (TensorFlow 1.x for user code; also through "
        "shell wrappers: see docs/tf1_mode.md)",
    )
    parser.add_argument(
        "--tf2",
        action="store_true",
        help="map the Keras 2.6 and TensorFlow-internal imports of every Python the command starts from its first "
        "line, as python -m npu_bridge.tf2 does (also through shell wrappers: see docs/tf2_adapter.md)",
    )
    parser.add_argument(
        "--make-secret",
        metavar="FILE",
        help="write a new job secret to FILE (mode 0600) and exit; copy it to every machine",
    )
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command every rank runs, after --")
    return parser


def main(argv=None):
    """Entry point of ``npu-run`` and ``python -m npu_bridge.core.launch``.

    Args:
      argv: arguments without the program name (default: ``sys.argv[1:]``).
    Returns:
      The exit code (see the module docstring).
    """
    parser = _parser()
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    try:
        log.configure()  # rank table warnings; a bad ASCEND_GLOBAL_LOG_LEVEL is the ranks' to report
    except ValueError:
        pass
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if args.make_secret is not None:
        try:
            job_secret.create(args.make_secret)
        except LaunchError as e:
            _report(f"error: {e}")
            return EXIT_USAGE
        _report(f"wrote a new job secret to {args.make_secret} (mode 0600); copy it to every machine of the job")
        return 0
    work_dir = None
    try:
        if not command:
            raise LaunchError("no command given; put it after --, e.g. npu-run -n 2 -- python train.py")
        if args.stop_timeout < 0:
            raise LaunchError(f"--stop-timeout {args.stop_timeout}: must be >= 0 seconds")
        if args.tf1 and args.tf2:
            raise LaunchError("--tf1 and --tf2 exclude each other: a script is written for TensorFlow 1.x or 2.x")
        if args.rank_table is not None or args.server_id is not None:
            if args.rank_table is None:
                raise LaunchError(
                    "--server-id needs --rank-table: the table describes the job, "
                    "--server-id says which of its servers this machine is"
                )
            job = plan.plan_from_table(
                args.rank_table, args.server_id, os.environ, args.size, args.job_id, args.port_base
            )
        elif (chief := chief_rendezvous.chief_of(os.environ, addresses.is_local)) is not None:
            work_dir = tempfile.mkdtemp(prefix="npu-run-")
            job = _plan_by_rendezvous(chief, args, work_dir)
        elif (outer := scheduler_plan.outer_placement(os.environ)) is not None:
            work_dir = tempfile.mkdtemp(prefix="npu-run-")
            table = scheduler_plan.write_rank_table(scheduler_plan.machines_of(outer, args.size), work_dir)
            server_id = outer.hosts[outer.rank_id]
            job_id = args.job_id or os.environ.get("JOB_ID") or scheduler_plan.job_id_of(os.environ)
            job = plan.plan_from_table(table, server_id, os.environ, None, job_id, args.port_base)
            job = dataclasses.replace(job, server_found="scheduler")
        else:
            if args.size is None:
                raise LaunchError("say how many ranks to start with -n N (or use --rank-table)")
            work_dir = tempfile.mkdtemp(prefix="npu-run-")
            job_id = args.job_id or os.environ.get("JOB_ID") or scheduler_plan.job_id_of(os.environ)
            job = plan.plan_local(args.size, work_dir, os.environ, job_id, args.port_base)
    except (LaunchError, EnvironmentVariableError) as e:
        parser.print_usage(sys.stderr)
        _report(f"error: {e}")
        _remove(work_dir)
        return EXIT_USAGE
    if work_dir is None:
        work_dir = tempfile.mkdtemp(prefix="npu-run-")  # for the ranks' stop file
    for warning in job.warnings:
        _report(f"warning: {warning}")
    try:
        network = job_network.choose(
            job, args.share_network, args.job_secret, _report, insecure_open_ports=args.insecure_open_ports
        )
    except LaunchError as e:
        _report(f"error: {e}")
        _remove(work_dir)
        return EXIT_USAGE
    except OSError as e:
        _report(f"error: {e.strerror or e}")
        _remove(work_dir)
        return EXIT_CANNOT_START
    if network.warning:
        _report(f"warning: {network.warning}")
    status = _status_directory(work_dir)
    segment = _shared_segment(len(job.ranks))
    ranks = []
    for rank in job.ranks:
        env = dict(rank.env, **{exposure.NETWORK_VARIABLE: network.kind})
        if status is not None:
            env[status_files.STATUS_DIR_VARIABLE] = status[0]
        if segment is not None:
            env[shm_segment.FD_VARIABLE] = str(segment)
        if args.tf1:
            env = environment.for_children(env)
        elif args.tf2:
            env = tf2_environment.for_children(env)
        ranks.append(dataclasses.replace(rank, env=env))
    job = dataclasses.replace(job, ranks=tuple(ranks))
    first, last = job.ranks[0].rank_id, job.ranks[-1].rank_id
    server = f" of server {job.server_id!r} ({_FOUND_BY[job.server_found]})" if job.server_id is not None else ""
    where = _network_words(network)
    _report(
        f"job {job.job_id}: starting {len(job.ranks)} of {job.rank_size} ranks ({first}-{last}){server}, rank "
        f"table {job.rank_table_path}, ports from {job.port_base}{where}"
    )
    runner = supervisor.Supervisor(
        command,
        job.ranks,
        args.stop_timeout,
        supervisor.binary_stream(sys.stdout),
        supervisor.binary_stream(sys.stderr),
        _report,
        stop_file=os.path.join(work_dir, "stop"),
        stall_summary=None if status is None else stall_summary.StallSummary(status[1], job.job_id),
        pass_fds=() if segment is None else (segment,),
    )
    try:
        code = runner.run()
    except OSError as e:
        _report(f"error: cannot start {command[0]!r}: {e}")
        return EXIT_CANNOT_START
    finally:
        if status is not None:
            os.close(status[1])
        if segment is not None:
            os.close(segment)
        _remove(work_dir)
        network.close()
    if code == 0:
        _report(f"job {job.job_id}: all {len(job.ranks)} ranks finished")
    return code


def _plan_by_rendezvous(chief, args, work_dir):
    """This machine's share of a job whose launchers meet at the chief (``chief_rendezvous``, ``world.rendezvous``)."""
    if args.size is None:
        raise LaunchError(f"with {chief.source} variables, say how many ranks to start on this machine with -n N")
    if chief.total_ranks is not None and args.size > chief.total_ranks:
        raise LaunchError(f"-n {args.size} is more ranks than the whole job has (CM_WORKER_SIZE={chief.total_ranks})")
    job_id = args.job_id or os.environ.get("JOB_ID")
    timeout = timeouts.connect_timeout(os.environ)
    alone = chief.is_chief and (chief.total_ranks == args.size or chief.launchers == 1)
    if alone:
        machines, mine = rendezvous.serve(chief, None, args.size, timeout, _report), chief.host
    else:
        if not job_id:
            raise LaunchError("launchers that meet at a chief need the same --job-id (or JOB_ID) on every machine")
        if args.job_secret is None:
            raise LaunchError(
                f"launchers that meet at the chief ({chief.host}:{chief.port}) need a job secret, so that only the "
                "job's machines join: make one with npu-run --make-secret FILE, copy it to every machine and give "
                "each npu-run --job-secret FILE"
            )
        key = job_secret.job_key(job_secret.load(args.job_secret), job_id)
        if chief.is_chief:
            machines, mine = rendezvous.serve(chief, key, args.size, timeout, _report), chief.host
        else:
            machines, mine = rendezvous.register(chief, key, args.size, timeout, _report)
    table = scheduler_plan.write_rank_table(machines, work_dir)
    job = plan.plan_from_table(table, mine, os.environ, args.size, job_id or f"npu-run-{os.getpid()}", args.port_base)
    return dataclasses.replace(job, server_found="rendezvous")


def _status_directory(work_dir):
    """(path, descriptor) of the ranks' status directory in ``work_dir``, or None (then no stall summary)."""
    try:
        return status_files.make(work_dir)
    except OSError as e:
        _report(f"warning: cannot make the ranks' status directory ({e.strerror or e}); no stall summary")
        return None


def _shared_segment(local_ranks):
    """The descriptor of the job's shared-memory segment for collectives on this host, or None (one rank here, or
    no memfd: the ranks then use TensorFlow's collectives)."""
    if local_ranks < 2:
        return None
    try:
        return shm_segment.create()
    except OSError as e:
        _report(f"warning: cannot make the job's shared-memory segment ({e.strerror or e}); collectives use gRPC")
        return None


def _network_words(network):
    if network.kind == exposure.AUTHENTICATED:
        return ", in a private network joined to the other machines' by authenticated relays"
    if network.kind == exposure.PRIVATE:
        return f", in a private network (loopback only, {network.mechanism})"
    if network.warning is None and network.reason:
        why = network.reason.rstrip(".")
        return f", in this machine's network ({why}); their servers serve only this user's processes"
    return ""


def _report(text):
    sys.stderr.write(f"npu-run: {text}\n")
    sys.stderr.flush()


def _remove(path):
    if path is not None:
        shutil.rmtree(path, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
