"""The secret of a job across machines, and the handshake by which a connection proves that it knows it.

The secret is a file of random text that only the job's user can read (``create`` makes one; copy it to every
machine of the job). Every connection between two machines' relays, and every registration at the job's chief
(``world.rendezvous``), starts with a mutual challenge: each side
sends a fresh random nonce and answers the other's with an HMAC-SHA256 over both nonces, the port and its role,
keyed by a key derived from the secret and the job id. A side that does not know the key cannot answer, and an
answer seen on the network is worth nothing for another connection. Nothing after the handshake is encrypted.
"""

import errno
import hashlib
import hmac
import os
import secrets
import stat

from npu_bridge.core.runtime.errors import JobAuthenticationError, LaunchError

VARIABLE = "NPU_RUN_JOB_SECRET"  # the secret file of npu-run (its default for --job-secret) and of ranks that meet
SECRET_BYTES = 32
_MAX_FILE_BYTES = 4096
_MAGIC = b"NPUJOB\x00\x01"
_NONCE_BYTES = 32
_ACCEPTED = b"\x01"


def create(path):
    """Writes a new secret to ``path`` (mode 0600; never over an existing file or through a symlink).

    Raises:
      LaunchError: the file exists or cannot be created.
    """
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as e:
        raise LaunchError(f"cannot create the job secret {path}: {e.strerror}") from None
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(secrets.token_hex(SECRET_BYTES) + "\n")


def load(path):
    """Reads the secret at ``path``.

    Returns:
      The secret (bytes).
    Raises:
      LaunchError: the file is missing, not a regular file, not owned by this user, readable by others, or too
        short; the message says what to do.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        hints = {
            errno.ENOENT: f"; create one with npu-run --make-secret {path} and copy it to every machine of the job",
            errno.ELOOP: " (it is a symbolic link, which is never followed; a Kubernetes Secret volume's files are "
            "links: mount the file with subPath)",
        }
        raise LaunchError(f"cannot read the job secret {path}: {e.strerror}{hints.get(e.errno, '')}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise LaunchError(f"the job secret {path} is not a regular file")
        if info.st_uid != os.geteuid() or info.st_mode & 0o077:
            raise LaunchError(
                f"the job secret {path} must belong to this user and be readable by nobody else (it is owned by "
                f"user id {info.st_uid} with mode {stat.S_IMODE(info.st_mode):04o}): chmod 600 {path}"
            )
        secret = os.read(fd, _MAX_FILE_BYTES + 1).strip()
    except OSError as e:
        raise LaunchError(f"cannot read the job secret {path}: {e.strerror}") from None
    finally:
        os.close(fd)
    if len(secret) < SECRET_BYTES or len(secret) > _MAX_FILE_BYTES:
        raise LaunchError(
            f"the job secret {path} must hold {SECRET_BYTES} to {_MAX_FILE_BYTES} bytes of random text "
            f"(npu-run --make-secret writes one)"
        )
    return secret


def job_key(secret, job_id):
    """The key the handshakes of job ``job_id`` use (a secret reused for another job gives another key)."""
    return hmac.new(secret, b"npu-run job key\0" + job_id.encode("utf-8"), hashlib.sha256).digest()


def vouching_key(secret):
    """The key with which the ranks of a job across machines vouch for their connections (``job_server``)."""
    return hmac.new(secret, b"npu_bridge rank vouching\0", hashlib.sha256).digest()


def _answer(key, role, first, second, port):
    return hmac.new(key, role + first + second + port.to_bytes(2, "big"), hashlib.sha256).digest()


def _receive(sock, count):
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            raise JobAuthenticationError(errno.ECONNRESET, "the other side closed the connection during the handshake")
        data += chunk
    return data


def client_handshake(sock, key, port):
    """Proves the key to the relay at ``port`` over ``sock``, and checks that it knows the key too.

    Raises:
      JobAuthenticationError: the other side does not know the key, or the connection broke.
      OSError: the socket failed (a timeout included).
    """
    mine = secrets.token_bytes(_NONCE_BYTES)
    sock.sendall(_MAGIC + mine)
    theirs = _receive(sock, _NONCE_BYTES)
    if not hmac.compare_digest(_receive(sock, 32), _answer(key, b"server", mine, theirs, port)):
        raise JobAuthenticationError(errno.EACCES, "the other side does not know the job's secret")
    sock.sendall(_answer(key, b"client", theirs, mine, port))
    if _receive(sock, 1) != _ACCEPTED:
        raise JobAuthenticationError(errno.EACCES, "the other side refused this side's proof of the job's secret")


def server_handshake(sock, key, port):
    """The accepting side of the handshake on a blocking socket (``ServerHandshake``, fed as the bytes arrive).

    Raises:
      JobAuthenticationError: the other side does not know the key, is not a launcher of a job, or closed.
      OSError: the socket failed (a timeout included).
    """
    handshake = ServerHandshake(key, port)
    while not handshake.done:
        reply = handshake.feed(_receive(sock, handshake.need))
        if reply:
            sock.sendall(reply)


class ServerHandshake:
    """The accepting side of the handshake, fed bytes as they arrive (for a gate that serves many at once).

    ``need`` is how many bytes the next ``feed`` takes; ``feed`` returns the bytes to send back, and ``done``
    becomes True once the other side has proved the key (its last reply, ``_ACCEPTED``, is then returned).

    Raises (from ``feed``):
      JobAuthenticationError: the other side does not know the key, or is not a relay of this kind.
    """

    def __init__(self, key, port):
        self._key = key
        self._port = port
        self._mine = None
        self._theirs = None
        self._started = False
        self.need = len(_MAGIC)
        self.done = False

    def feed(self, data):
        """Takes exactly ``need`` bytes; returns the reply (empty while the other side has more to say)."""
        if not self._started:  # the magic alone first, so that another protocol is refused at once
            if data != _MAGIC:
                raise JobAuthenticationError(errno.EPROTO, "it did not start the job's handshake")
            self._started = True
            self.need = _NONCE_BYTES
            return b""
        if self._mine is None:
            self._theirs = data
            self._mine = secrets.token_bytes(_NONCE_BYTES)
            self.need = 32
            return self._mine + _answer(self._key, b"server", self._theirs, self._mine, self._port)
        if not hmac.compare_digest(data, _answer(self._key, b"client", self._mine, self._theirs, self._port)):
            raise JobAuthenticationError(errno.EACCES, "it does not know the job's secret")
        self.done = True
        self.need = 0
        return _ACCEPTED
