"""Running a test's job as an unprivileged user, and attacking it as another one.

The suite runs as root on CI and on most developers' machines, where every privileged path works and the
unprivileged one never runs. Tests that start jobs therefore also run them as a user without privileges: as
root, ``job_user()`` creates a system user (``npu-test-job``) and ``prefix()`` drops to it with ``setpriv``
(no capabilities, no supplementary groups); run by anyone else, the tests already are such a user.

The interpreter, the virtualenv and the checkout may sit below directories that user cannot enter (CI's
virtualenv links to an interpreter in root's 0700 home). The dropped command therefore runs in a mount namespace
of its own (``workers/user_view.py``) in which just those paths are reachable; the machine's modes stay as they
are. ``attacker()`` (``npu-test-other``) is a second user without privileges, for attacks from the same machine.

Both users persist on the machine after the run (creating them is idempotent; removing them while another
test worker still runs as them would break that worker).
"""

import contextlib
import functools
import os
import pathlib
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile

import pytest

from helpers.paths import REPO_ROOT, TESTS_DIR

JOB_USER = "npu-test-job"
ATTACKER = "npu-test-other"
USER_VIEW = os.path.join(TESTS_DIR, "workers", "user_view.py")
# What a dropped user must be able to read: the interpreter, its standard library, the virtualenv, the checkout.
_NEEDED = (sys.executable, sys.prefix, sys.base_prefix, REPO_ROOT)


@functools.lru_cache(maxsize=None)
def _shared_temporary_directory():
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
        path = tempfile.mkdtemp(prefix=f"npu-{self.name}-", dir=_shared_temporary_directory())
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
