"""Run untrusted code (draft tools, published tools, stdio MCP servers) isolated from the host.

Isolation is Debian's bubblewrap (`bwrap`): new mount, pid, network, ipc, uts and cgroup
namespaces; a filesystem view holding only /usr, the Python installation (read-only), a fresh
/proc of its own pid namespace, a minimal /dev, and a size-capped tmpfs for /tmp and the work dir;
an empty environment; an unprivileged uid (65534); rlimits (`prlimit`) on the untrusted process;
the process group killed at the end. When the server runs as root, bwrap runs without a user
namespace and the command drops to uid/gid 65534 on the host with `setpriv` (no capabilities,
no_new_privs); otherwise bwrap maps the server's own uid to 65534 in a user namespace.

It fails closed: when bwrap is missing or cannot create its namespaces (probed once per process),
`run_tool` returns reason "sandbox unavailable: …" and `sandboxed_command` raises
`SandboxUnavailable` — nothing executes. Only the development setting
ARIA_SANDBOX_ALLOW_UNISOLATED=1 runs the code unisolated (rlimits only), with a warning logged
and carried in the result. The audit hook in the harness (no sockets, processes or ctypes) is a
second layer inside the sandbox. See docs/SANDBOX.md.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings

from core.sandbox_harness import HARNESS, MARKER

logger = logging.getLogger(__name__)

OUTPUT_LIMIT = 20_000
NOBODY = 65534
NPROC = 256  # processes (and threads) uid 65534 may hold at once, all sandboxes together
INNER_PATH = "/usr/local/bin:/usr/bin:/bin"
UNISOLATED_WARNING = "UNISOLATED: ARIA_SANDBOX_ALLOW_UNISOLATED is on — this code ran on the host without a sandbox."


@dataclass(frozen=True)
class Limits:
    cpu_seconds: int = 5
    memory_mb: int = 512
    fsize_mb: int = 16
    nofile: int = 64
    wall_seconds: float = 10.0


@dataclass
class SandboxResult:
    ok: bool
    reason: str = ""  # "" | error | cpu time limit exceeded | … | wall timeout | sandbox unavailable: …
    output: Any = None
    error: str = ""
    returncode: int | None = None
    stdout: str = ""
    stderr: str = ""
    duration_ms: int = 0
    warning: str = ""  # set when the code ran unisolated (development override)
    details: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        data = {
            "ok": self.ok,
            "reason": self.reason,
            "output": self.output,
            "error": self.error,
            "returncode": self.returncode,
            "stdout": self.stdout[-2000:],
            "stderr": self.stderr[-2000:],
            "duration_ms": self.duration_ms,
        }
        if self.warning:
            data["warning"] = self.warning
        return data


class SandboxUnavailable(RuntimeError):
    """Isolation is not available on this host and the unisolated override is off."""

    def __init__(self, why: str) -> None:
        self.reason = f"sandbox unavailable: {why}"
        super().__init__(self.reason)


@dataclass(frozen=True)
class Isolation:
    available: bool
    why: str = ""  # why isolation is unavailable


# ---------------------------------------------------------------- the bwrap command line


def _bwrap_path() -> str | None:
    configured = str(getattr(settings, "ARIA_SANDBOX_BWRAP", "bwrap") or "bwrap")
    return shutil.which(configured)


def _host_tool(name: str) -> str | None:
    found = shutil.which(name, path="/usr/bin:/bin")
    return os.path.realpath(found) if found else None  # under /usr on merged-/usr systems, inside the view


def _root_mode() -> bool:
    """The server runs as root: bwrap without a user namespace, the command drops to 65534 with setpriv."""
    return os.geteuid() == 0


def _system_binds() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    return args


def _parent_dirs(inner_path: str, made: set[str]) -> list[str]:
    """Traversable parents for a bind (bwrap would create them 0700, closed to the sandbox's uid)."""
    args: list[str] = []
    for parent in reversed(Path(inner_path).parents):
        if str(parent) not in made and not str(parent).startswith("/usr/"):
            made.add(str(parent))
            args += ["--perms", "0755", "--dir", str(parent)]
    return args


def interpreter() -> str:
    """The base Python (not the project's virtualenv): the harness needs only its standard library."""
    return os.path.realpath(getattr(sys, "_base_executable", "") or sys.executable)


def _prlimit(limits: Limits, prlimit: str) -> list[str]:
    mb = 1024 * 1024
    # As uid 65534 on the host (root mode), a process cap stops a fork bomb; with a user namespace
    # the count would include the server's own threads, so the pid namespace teardown has to do.
    nproc = [f"--nproc={NPROC}"] if _root_mode() else []
    return [
        prlimit,
        *nproc,
        f"--cpu={limits.cpu_seconds}:{limits.cpu_seconds + 1}",
        f"--as={limits.memory_mb * mb}",
        f"--fsize={limits.fsize_mb * mb}",
        f"--nofile={limits.nofile}",
        "--core=0",
        "--",
    ]


def _isolated_argv(
    bwrap: str,
    argv: Sequence[str],
    *,
    workdir: str,
    limits: Limits,
    read_only: Sequence[str] = (),
    mounts: Sequence[tuple[str, str]] = (),
    env: dict[str, str] | None = None,
) -> list[str]:
    prlimit, setpriv = _host_tool("prlimit"), _host_tool("setpriv")
    if prlimit is None:
        raise SandboxUnavailable("prlimit (util-linux) not found")
    args = [bwrap, "--die-with-parent", "--new-session", "--clearenv"]
    if _root_mode():
        # No user namespace: the untrusted process is uid 65534 on the host itself, with no capabilities.
        args += ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"]
        args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]  # only for setpriv, dropped with the uid
    else:
        args += ["--unshare-all", "--uid", str(NOBODY), "--gid", str(NOBODY)]
    args += _system_binds()
    # /tmp and the work dir are size-capped tmpfs of the sandbox's own: nothing it writes reaches the host
    tmpfs_size = str(limits.fsize_mb * 4 * 1024 * 1024)
    args += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--size", tmpfs_size, "--tmpfs", "/tmp"]
    prefixes = {os.path.realpath(sys.base_prefix), *(os.path.realpath(p) for p in read_only)}
    made: set[str] = {"/", "/tmp", "/usr"}
    for host_path, inner_path in [*((path, path) for path in sorted(prefixes)), *mounts]:
        args += [*_parent_dirs(inner_path, made), "--ro-bind", host_path, inner_path]
    args += [*_parent_dirs(workdir, made), "--perms", "1777", "--size", tmpfs_size, "--tmpfs", workdir]
    args += ["--chdir", workdir, "--remount-ro", "/"]
    for key, value in (env or {}).items():
        args += ["--setenv", key, value]
    args.append("--")
    if _root_mode():
        if setpriv is None:
            raise SandboxUnavailable("setpriv (util-linux) not found; needed to drop root")
        args += [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
        args += ["--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
    return [*args, *_prlimit(limits, prlimit), *argv]


# ---------------------------------------------------------------- probe (once per process)

_probed: dict[tuple[str | None, int], Isolation] = {}


def reset_isolation_probe() -> None:
    """Forget the cached probe (after a settings change)."""
    _probed.clear()


def isolation_status() -> Isolation:
    """Whether bwrap can build the sandbox here: tried once with a trivial command, then cached."""
    bwrap = _bwrap_path()
    key = (bwrap or str(getattr(settings, "ARIA_SANDBOX_BWRAP", "bwrap")), os.geteuid())
    if key in _probed:
        return _probed[key]
    if bwrap is None:
        status = Isolation(False, f"bubblewrap (bwrap) not found at {key[0]!r}; install it: apt-get install bubblewrap")
    else:
        status = _probe(bwrap)
    if not status.available:
        logger.error("Sandbox isolation unavailable: %s", status.why)
    _probed[key] = status
    return status


def _probe(bwrap: str) -> Isolation:
    try:
        with sandbox_workdir() as workdir:
            argv = _isolated_argv(bwrap, [interpreter(), "-I", "-S", "-c", "pass"], workdir=workdir, limits=Limits())
            done = subprocess.run(argv, capture_output=True, timeout=30, env={}, start_new_session=True)
    except SandboxUnavailable as exc:
        return Isolation(False, exc.reason.removeprefix("sandbox unavailable: "))
    except (OSError, subprocess.SubprocessError) as exc:
        return Isolation(False, f"bwrap failed to start: {exc}")
    if done.returncode != 0:
        why = done.stderr.decode(errors="replace").strip()[-300:] or f"exit status {done.returncode}"
        return Isolation(False, f"bwrap cannot create the sandbox: {why}")
    return Isolation(True)


def unisolated_allowed() -> bool:
    return bool(getattr(settings, "ARIA_SANDBOX_ALLOW_UNISOLATED", False))


# ---------------------------------------------------------------- public entry points


@contextlib.contextmanager
def sandbox_workdir() -> Iterator[str]:
    """A unique work dir path: isolated, the sandbox mounts a tmpfs of its own there (the host's
    directory stays empty); unisolated, the code runs in the host directory itself."""
    with tempfile.TemporaryDirectory(prefix="aria-sandbox-") as workdir:
        yield workdir


def sandboxed_command(
    argv: Sequence[str],
    *,
    workdir: str,
    limits: Limits,
    read_only: Sequence[str] = (),
    mounts: Sequence[tuple[str, str]] = (),
    env: dict[str, str] | None = None,
) -> tuple[list[str], str]:
    """(argv that runs `argv` isolated, warning). `read_only` paths are bound read-only at the same
    path, `mounts` are read-only (host, inner) binds. Raises SandboxUnavailable when isolation is
    missing and the development override is off; with the override, `argv` runs unisolated (rlimits
    only, the host's paths) and the warning says so."""
    status = isolation_status()
    if status.available:
        bwrap = _bwrap_path()
        assert bwrap is not None
        argv = _isolated_argv(bwrap, argv, workdir=workdir, limits=limits, read_only=read_only, mounts=mounts, env=env)
        return argv, ""
    if not unisolated_allowed():
        raise SandboxUnavailable(status.why)
    logger.warning("%s (%s)", UNISOLATED_WARNING, status.why)
    prlimit = _host_tool("prlimit")
    return [*(_prlimit(limits, prlimit) if prlimit else []), *argv], f"{UNISOLATED_WARNING} ({status.why})"


_SIGNAL_REASONS: dict[int, str] = {
    signal.SIGXCPU: "cpu time limit exceeded",
    signal.SIGXFSZ: "file size limit exceeded",
    signal.SIGSEGV: "memory limit exceeded",
    signal.SIGKILL: "killed",
}


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def run_tool(source: str, entrypoint: str, params: dict[str, Any], *, limits: Limits = Limits()) -> SandboxResult:
    """Call `entrypoint(params)` from `source` in a fresh isolated process; never raises."""
    payload = json.dumps({"source": source, "entrypoint": entrypoint, "input": params})
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="aria-run-") as host_dir, sandbox_workdir() as workdir:
        harness = Path(host_dir) / "harness.py"
        harness.write_text(HARNESS)
        inner_harness = f"{workdir}.harness.py"  # beside the work dir, read-only, not inside it
        if not isolation_status().available:
            inner_harness = str(harness)  # only reached with the unisolated override
        try:
            argv, warning = sandboxed_command(
                [interpreter(), "-I", "-S", inner_harness],
                workdir=workdir,
                limits=limits,
                mounts=[(str(harness), inner_harness)],
            )
        except SandboxUnavailable as exc:
            return SandboxResult(ok=False, reason=exc.reason, error=f"Refused: {exc.reason}")
        out_path, err_path = Path(host_dir) / "stdout", Path(host_dir) / "stderr"
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=out,
                stderr=err,
                cwd=workdir,
                env={},
                start_new_session=True,
                close_fds=True,
            )
            timed_out = False
            try:
                proc.communicate(payload.encode(), timeout=limits.wall_seconds)
            except subprocess.TimeoutExpired:
                timed_out = True
            finally:
                _kill_group(proc.pid)  # bwrap dies, and with it its pid namespace and all it holds
                proc.wait()
        stdout = out_path.read_bytes()[-OUTPUT_LIMIT * 4 :].decode(errors="replace")
        stderr = err_path.read_bytes()[-OUTPUT_LIMIT:].decode(errors="replace")
    result = SandboxResult(
        ok=False,
        returncode=proc.returncode,
        stdout=stdout[-OUTPUT_LIMIT:],
        stderr=stderr,
        duration_ms=int((time.monotonic() - started) * 1000),
        warning=warning,
    )
    if timed_out:
        result.reason, result.error = "wall timeout", f"Killed after {limits.wall_seconds:g}s wall time."
        return result
    return _read_result(result, stdout, stderr, proc.returncode)


def _read_result(result: SandboxResult, stdout: str, stderr: str, returncode: int | None) -> SandboxResult:
    found = stdout.rfind(MARKER)
    if found >= 0:
        try:
            data = json.loads(stdout[found + len(MARKER) :].strip().splitlines()[0])
        except (ValueError, IndexError):
            data = {"ok": False, "error": "unreadable result", "reason": "error"}
        result.ok = bool(data.get("ok"))
        result.output = data.get("output")
        result.error = data.get("error", "")
        result.reason = "" if result.ok else data.get("reason", "error")
        result.stdout = stdout[:found][-OUTPUT_LIMIT:]
        return result
    # bwrap reports a child killed by signal N as exit status 128 + N; unisolated, it is -N
    sig = -returncode if returncode is not None and returncode < 0 else None
    if returncode is not None and returncode > 128 and not result.warning:
        sig = returncode - 128
    if sig is not None:
        result.reason = _SIGNAL_REASONS.get(sig, f"killed by signal {sig}")
    elif "MemoryError" in stderr:
        result.reason = "memory limit exceeded"
    else:
        result.reason = "error"
    result.error = result.error or f"Exited with {returncode}: {stderr[-500:]}"
    return result
