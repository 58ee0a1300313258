"""Run untrusted draft code in a subprocess: Python isolated mode, empty environment, a private
temporary working directory, RLIMIT CPU/AS/FSIZE/NOFILE, a wall timeout, and the whole process
group killed at the end so nothing it started survives.

No network and no other programs, in two layers:
- the kernel: the child gets a network namespace of its own (no interfaces up) where the process
  may create one (root, or unprivileged user namespaces); elsewhere this layer is skipped;
- the interpreter: an audit hook, installed before the draft's code is compiled, refuses sockets,
  name lookups, starting processes (fork, exec, spawn, subprocess, os.system) and ctypes — the
  draft sees `SandboxDenied` and the run reports reason "denied: …".

Not covered: a separate uid. Run the web/worker processes as an unprivileged user — root could
raise its own hard limits back."""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MARKER = "__ARIA_SANDBOX_RESULT__"
OUTPUT_LIMIT = 20_000

# The harness the child runs: exec the source, call the entrypoint with the input, print a result.
HARNESS = r"""
import json, sys, traceback
payload = json.loads(sys.stdin.read())
result = {"ok": False}

class SandboxDenied(PermissionError):
    pass

_denials = []  # what was refused, reported even when a library wraps the error (urllib: URLError)

def _aria_guard(event, args, _deny=frozenset({
        "socket.__new__", "socket.connect", "socket.bind", "socket.getaddrinfo", "socket.gethostbyname",
        "socket.gethostbyaddr", "socket.sendto", "socket.sendmsg", "subprocess.Popen", "os.system", "os.exec",
        "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty", "pty.spawn", "ctypes.dlopen", "ctypes.dlsym",
        "ctypes.cdata"}), _modules=frozenset({"ctypes", "_ctypes", "_posixsubprocess"})):
    what = None
    if event in _deny:
        what = "network" if event.startswith("socket.") else ("ctypes" if event.startswith("ctypes.") else "processes")
    elif event == "import" and args and args[0] in _modules:
        what = "ctypes" if "ctypes" in args[0] else "processes"
    elif event == "object.__setattr__" and args and getattr(args[0], "__name__", "") == "_aria_guard":
        what = "the sandbox guard"
    if what:
        _denials.append(what)
        raise SandboxDenied(f"{what} is not available in the sandbox ({event})")

sys.addaudithook(_aria_guard)
try:
    namespace = {"__name__": "aria_tool"}
    exec(compile(payload["source"], "<tool>", "exec"), namespace)
    output = namespace[payload["entrypoint"]](payload["input"])
    json.dumps(output)
    result = {"ok": True, "output": output}
except MemoryError:
    result = {"ok": False, "error": "MemoryError", "reason": "memory limit exceeded"}
except OSError as exc:
    reason = {27: "file size limit exceeded", 24: "too many open files"}.get(exc.errno, "OSError")
    result = {"ok": False, "error": f"OSError: {exc}", "reason": reason}
except BaseException as exc:
    result = {"ok": False, "error": f"{type(exc).__name__}: {exc}", "reason": "error",
              "traceback": traceback.format_exc()[-2000:]}
if not result["ok"] and _denials:
    result["reason"] = "denied: " + _denials[0]
sys.stdout.write("\n" + MARKER + json.dumps(result, default=str) + "\n")
sys.stdout.flush()
""".replace("MARKER", repr(MARKER))


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
    reason: str = ""  # "" | error | cpu time limit exceeded | memory limit exceeded | … | wall timeout
    output: Any = None
    error: str = ""
    returncode: int | None = None
    stdout: str = ""
    stderr: str = ""
    duration_ms: int = 0
    details: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "reason": self.reason,
            "output": self.output,
            "error": self.error,
            "returncode": self.returncode,
            "stdout": self.stdout[-2000:],
            "stderr": self.stderr[-2000:],
            "duration_ms": self.duration_ms,
        }


CLONE_NEWNET, CLONE_NEWUSER = 0x40000000, 0x10000000
# Resolved here, in the parent: the forked child only calls it (no dlopen/dlsym between fork and exec).
_unshare = getattr(ctypes.CDLL(None, use_errno=True), "unshare", None)


def _own_network_namespace() -> None:
    """In the child before exec: a fresh network namespace (only a loopback, down), if allowed."""
    if _unshare is not None and _unshare(CLONE_NEWNET) != 0:  # no CAP_SYS_ADMIN: in a new user namespace
        _unshare(CLONE_NEWUSER | CLONE_NEWNET)


def _limit_child(limits: Limits):
    def apply() -> None:
        with contextlib.suppress(OSError, AttributeError):
            _own_network_namespace()
        mb = 1024 * 1024
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1))
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_mb * mb, limits.memory_mb * mb))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.fsize_mb * mb, limits.fsize_mb * mb))
        resource.setrlimit(resource.RLIMIT_NOFILE, (limits.nofile, limits.nofile))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        # A write past the size limit raises EFBIG (reported) instead of killing silently.
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)

    return apply


_SIGNAL_REASONS = {
    signal.SIGXCPU: "cpu time limit exceeded",
    signal.SIGXFSZ: "file size limit exceeded",
    signal.SIGSEGV: "memory limit exceeded",
    signal.SIGKILL: "killed",
}


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def run_tool(source: str, entrypoint: str, params: dict[str, Any], *, limits: Limits = Limits()) -> SandboxResult:
    """Call `entrypoint(params)` from `source` in a fresh limited process; never raises."""
    payload = json.dumps({"source": source, "entrypoint": entrypoint, "input": params})
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="aria-sandbox-") as workdir:
        harness = Path(workdir) / "harness.py"
        harness.write_text(HARNESS)
        out_path, err_path = Path(workdir) / ".stdout", Path(workdir) / ".stderr"
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            proc = subprocess.Popen(
                [sys.executable, "-I", "-S", str(harness)],
                stdin=subprocess.PIPE,
                stdout=out,
                stderr=err,
                cwd=workdir,
                env={},
                start_new_session=True,
                preexec_fn=_limit_child(limits),
                close_fds=True,
            )
            timed_out = False
            try:
                proc.communicate(payload.encode(), timeout=limits.wall_seconds)
            except subprocess.TimeoutExpired:
                timed_out = True
            finally:
                _kill_group(proc.pid)  # whatever the tool started dies with it
                proc.wait()
        stdout = out_path.read_bytes()[-OUTPUT_LIMIT * 4 :].decode(errors="replace")
        stderr = err_path.read_bytes()[-OUTPUT_LIMIT:].decode(errors="replace")
    duration_ms = int((time.monotonic() - started) * 1000)
    result = SandboxResult(
        ok=False, returncode=proc.returncode, stdout=stdout[-OUTPUT_LIMIT:], stderr=stderr, duration_ms=duration_ms
    )
    if timed_out:
        result.reason, result.error = "wall timeout", f"Killed after {limits.wall_seconds:g}s wall time."
        return result
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
    if proc.returncode is not None and proc.returncode < 0:
        sig = -proc.returncode
        result.reason = _SIGNAL_REASONS.get(sig, f"killed by signal {sig}")
    elif "MemoryError" in stderr:
        result.reason = "memory limit exceeded"
    else:
        result.reason = "error"
    result.error = result.error or f"Exited with {proc.returncode}: {stderr[-500:]}"
    return result
