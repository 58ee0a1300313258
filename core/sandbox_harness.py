"""The program the sandbox runs for a tool: read {source, entrypoint, input} from stdin, exec the
source, call the entrypoint, print one marked JSON result. Its audit hook (no sockets, name lookups,
processes or ctypes) is the second layer inside the bubblewrap sandbox (core.sandbox)."""

MARKER = "__ARIA_SANDBOX_RESULT__"

HARNESS = r"""
import json, signal, sys, traceback
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the size limit raises EFBIG (reported)
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
    reason = {27: "file size limit exceeded", 24: "too many open files", 2: "no such file in the sandbox",
              13: "permission denied", 30: "read-only file system",
              28: "no space left in the sandbox"}.get(exc.errno, "OSError")
    result = {"ok": False, "error": f"OSError: {exc}", "reason": reason}
except BaseException as exc:
    result = {"ok": False, "error": f"{type(exc).__name__}: {exc}", "reason": "error",
              "traceback": traceback.format_exc()[-2000:]}
if not result["ok"] and _denials:
    result["reason"] = "denied: " + _denials[0]
sys.stdout.write("\n" + MARKER + json.dumps(result, default=str) + "\n")
sys.stdout.flush()
""".replace("MARKER", repr(MARKER))
