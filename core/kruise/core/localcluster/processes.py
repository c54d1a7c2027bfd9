"""Child processes of the local cluster: spawn with a log file, probe, stop by PID.

Every process the cluster starts goes through :func:`spawn` and is stopped by the PID
it returned (SIGTERM, then SIGKILL): nothing is ever found or killed by name, because
other clusters of the same binaries run on the machine.

An *attached* child gets ``PR_SET_PDEATHSIG``, which the kernel fires when the **thread**
that forked it exits, not the process. So attached children are forked by one thread that
lives as long as the process, whichever thread asks (real nodes are prepared on a worker
thread while the control plane starts).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import ctypes
import os
import signal
import socket
import ssl
import subprocess
import time
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port on ``host`` that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


_FORKER = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="kruise-forker")


def die_with_parent() -> None:  # pragma: no cover - runs in the child
    """preexec_fn: SIGKILL this child when the parent process dies (Linux prctl)."""
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def spawn(
    argv: Sequence[str],
    log_path: Path,
    *,
    attached: bool,
    env: Mapping[str, str] | None = None,
) -> subprocess.Popen[bytes]:
    """Start ``argv`` in its own session, stdout and stderr appended to ``log_path``.

    ``attached=True`` makes the kernel SIGKILL the child when this process dies.
    """
    log_path.parent.mkdir(parents=True, exist_ok=True)

    def fork() -> subprocess.Popen[bytes]:
        with open(log_path, "ab") as logf:
            return subprocess.Popen(
                list(argv),
                stdout=logf,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                preexec_fn=die_with_parent if attached else None,
                env=dict(env) if env is not None else None,
            )

    return _FORKER.submit(fork).result() if attached else fork()


def pid_alive(pid: int) -> bool:
    """True when ``pid`` exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie child is not alive
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def cmdline(pid: int) -> list[str]:
    """The argv of ``pid`` ([] when it is gone)."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def terminate(pid: int, proc: subprocess.Popen[bytes] | None, timeout: float) -> None:
    """SIGTERM ``pid``, wait up to ``timeout`` seconds, then SIGKILL it."""
    if not pid_alive(pid):
        if proc is not None:
            proc.poll()
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None:
            if proc.poll() is not None:
                return
        elif not pid_alive(pid):
            return
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    if proc is not None:
        proc.wait(5)
    else:
        deadline = time.monotonic() + 5
        while pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)


def wait_for(
    name: str,
    proc: subprocess.Popen[bytes] | None,
    probe: Callable[[], bool],
    *,
    timeout: float,
    what: str,
    log: Path,
    error: type[Exception],
) -> None:
    """Poll ``probe()`` every 0.1 s until it is true; raise ``error`` with ``log``'s tail when
    ``proc`` exits first or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise error(f"{name} exited with {proc.returncode}:\n{log_tail(log)}")
        if probe():
            return
        time.sleep(0.1)
    raise error(f"timed out after {timeout}s waiting for {what}:\n{log_tail(log)}")


def http_ok(url: str, ctx: ssl.SSLContext | None) -> bool:
    """True when ``GET url`` answers 200 within 2 s."""
    try:
        with urllib.request.urlopen(url, timeout=2, context=ctx) as resp:
            return bool(resp.status == 200)
    except OSError:
        return False


def log_tail(path: Path, lines: int = 30) -> str:
    """The last ``lines`` lines of a log file (``(no log)`` when absent)."""
    if not path.exists():
        return "(no log)"
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
