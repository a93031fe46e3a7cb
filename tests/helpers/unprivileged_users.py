"""Running a test's job as an unprivileged user, and attacking it as another one.

The suite runs as root on CI and on most developers' machines, where every privileged path works and the
unprivileged one never runs. Tests that start jobs therefore also run them as a user without privileges: as
root, ``job_user()`` creates a system user (``npu-test-job``) and ``prefix()`` drops to it with ``setpriv``
(no capabilities, no supplementary groups); run by anyone else, the tests already are such a user.

The interpreter, the virtualenv and the checkout may sit below directories that user cannot enter (CI's
virtualenv links to an interpreter in root's 0700 home). The dropped command therefore runs in a mount namespace
of its own (``workers/user_view.py``) in which just those paths are reachable; the machine's modes stay as they
are. ``attacker()`` (``npu-test-other``) is a second user without privileges, for attacks from the same machine.
A test runs its job as both users with ``@pytest.mark.parametrize("who", ["root", "unprivileged user"])``,
``chosen(who)`` and ``run_python``, and checks who owns what the job wrote with ``not_owned_by``.

Both users persist on the machine after the run (creating them is idempotent; removing them while another
test worker still runs as them would break that worker).
"""

import contextlib
import functools
import os
import pathlib
import pwd
import shutil
import signal
import stat
import subprocess
import sys
import tempfile

import pytest

from helpers.paths import REPO_ROOT, TESTS_DIR
from helpers.processes import update_environment

JOB_USER = "npu-test-job"
ATTACKER = "npu-test-other"
USER_VIEW = os.path.join(TESTS_DIR, "workers", "user_view.py")
# What a dropped user must be able to read: the interpreter, its standard library, the virtualenv, the checkout.
_NEEDED = (sys.executable, sys.prefix, sys.base_prefix, REPO_ROOT)


@functools.lru_cache(maxsize=None)
def shared_temporary_directory():
    """A temporary directory every user can enter (the suite's own TMPDIR is private to it)."""
    for candidate in (tempfile.gettempdir(), "/tmp", "/var/tmp", "/dev/shm"):
        with contextlib.suppress(OSError):
            if os.stat(candidate).st_mode & stat.S_IXOTH:
                return candidate
    pytest.skip("no temporary directory that every user can enter")


def _ensure_user(name):
    try:
        return pwd.getpwnam(name)
    except KeyError:
        pass
    if shutil.which("useradd") is None or shutil.which("setpriv") is None:
        return None
    result = subprocess.run(
        ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    try:  # exit 9: a parallel test worker created it first
        return pwd.getpwnam(name)
    except KeyError:
        pytest.skip(f"cannot create the test user {name}: {result.stderr.strip() or result.returncode}")


class User:
    """A user the test runs commands as (``prefix()`` + argv); made from a passwd entry, or None for this
    process's own user."""

    def __init__(self, entry):
        self.uid = entry.pw_uid if entry else os.geteuid()
        self.gid = entry.pw_gid if entry else os.getegid()
        self.name = entry.pw_name if entry else pwd.getpwuid(self.uid).pw_name
        self._drop = entry is not None and entry.pw_uid != os.geteuid()

    @property
    def privileged(self):
        return self.uid == 0

    def prefix(self, view=True):
        """The command that runs what follows it as this user (empty when it is this process's user); with
        ``view``, in a mount namespace where it can read the interpreter and the checkout."""
        if not self._drop:
            return []
        drop = ["setpriv", f"--reuid={self.uid}", f"--regid={self.gid}", "--clear-groups", "--"]
        return [sys.executable, USER_VIEW, *_NEEDED, "--", *drop] if view else drop

    @contextlib.contextmanager
    def directory(self):
        """A new directory this user owns (mode 0700) in a temporary directory every user can enter (the suite's
        own TMPDIR is private to it), as a ``pathlib.Path``; removed afterwards. Give it to the job as its
        TMPDIR too."""
        path = tempfile.mkdtemp(prefix=f"npu-{self.name}-", dir=shared_temporary_directory())
        try:
            os.chown(path, self.uid, self.gid)
            yield pathlib.Path(path)
        finally:
            shutil.rmtree(path, ignore_errors=True)


@functools.lru_cache(maxsize=None)
def job_user():
    """The unprivileged user jobs run as (this process's user when it is not root); skips where none can be had."""
    if os.geteuid() != 0:
        return User(None)
    entry = _ensure_user(JOB_USER)
    if entry is None:
        pytest.skip("running as an unprivileged user needs useradd and setpriv (util-linux)")
    user = User(entry)
    probe = subprocess.run(
        [*user.prefix(), sys.executable, "-c", "import npu_bridge.core.launch"],
        cwd="/",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if probe.returncode != 0:
        pytest.skip(f"{JOB_USER} cannot run this interpreter and checkout here: {probe.stderr.strip()[-300:]}")
    return user


@functools.lru_cache(maxsize=None)
def attacker():
    """Another local user without any privilege (skips when the tests do not run as root)."""
    if os.geteuid() != 0:
        pytest.skip("acting as another local user needs root to create one")
    entry = _ensure_user(ATTACKER)
    if entry is None:
        pytest.skip("acting as another user needs useradd and setpriv (util-linux)")
    return User(entry)


def as_root():
    """This process's user when it is root (skips otherwise)."""
    if os.geteuid() != 0:
        pytest.skip("the privileged variant needs root")
    return User(None)


def view_prefix():
    """As root: the command that runs what follows it, still as root, in the mount namespace where every user can
    read the interpreter and the checkout (processes it starts as another user, a daemon's tasks, can too)."""
    return [sys.executable, USER_VIEW, *_NEEDED, "--"]


def chosen(who):
    """The user a test parametrized over ``who`` ("root" or "unprivileged user") runs its job as."""
    return as_root() if who == "root" else job_user()


def run_python(user, directory, args, env=None, timeout=300, cwd=REPO_ROOT):
    """Runs this interpreter with ``args`` (``["-m", "npu_bridge.core.launch", ...]``, a script and its arguments)
    as ``user``, with HOME and TMPDIR ``directory`` (from ``user.directory()``), this checkout and the tests' helpers
    importable, and umask 022 (the documented modes assume it).

    Args:
      env: variables to set (a value of None removes the variable).
      timeout: seconds; past them the command's process group gets SIGTERM, then SIGKILL (npu-run and npu-debug
        take their ranks and runs along), and ``subprocess.TimeoutExpired`` is raised.
    Returns:
      The ``subprocess.CompletedProcess`` (text mode, stdout and stderr captured).
    """
    full_env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([REPO_ROOT, TESTS_DIR]),
        HOME=str(directory),
        TMPDIR=str(directory),
    )
    update_environment(full_env, env)
    argv = [*user.prefix(), sys.executable, *args]
    process = subprocess.Popen(
        argv,
        env=full_env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        umask=0o022,
        start_new_session=True,
    )
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _end_group(process)
        raise
    finally:
        if process.poll() is None:  # the test was interrupted
            _end_group(process)
    return subprocess.CompletedProcess(argv, process.returncode, out, err)


def _end_group(process):
    for sig, grace in ((signal.SIGTERM, 15), (signal.SIGKILL, None)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        try:
            process.communicate(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


def not_owned_by(user, top):
    """Every path below ``top`` (``top`` included, symlinks not followed) that ``user`` does not own, with its
    owner: {path: uid}."""
    foreign = {}
    for parent, dir_names, file_names in os.walk(top):
        for path in [parent] + [os.path.join(parent, name) for name in dir_names + file_names]:
            uid = os.lstat(path).st_uid
            if uid != user.uid:
                foreign[path] = uid
    return foreign
