"""The sandbox: limits hold, each failure names its reason, nothing keeps running.
(The escapes — host files, the database, other processes, the network — are in tests/security.)"""

import os
import time

import pytest

from core.sandbox import Limits, isolation_status, run_tool

LIMITS = Limits(cpu_seconds=1, memory_mb=256, fsize_mb=4, nofile=32, wall_seconds=3)


@pytest.fixture(autouse=True)
def _needs_isolation():
    """bwrap must work here; CI (ARIA_REQUIRE_INTEGRATION=1) installs it, so there its absence fails."""
    status = isolation_status()
    if not status.available and os.environ.get("ARIA_REQUIRE_INTEGRATION") != "1":
        pytest.skip(f"sandbox unavailable: {status.why}")


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_runs_the_entrypoint_with_an_empty_environment_in_a_private_dir():
    source = "import os\ndef run(p):\n    return {'env': sorted(os.environ), 'cwd': os.getcwd(), 'x': p['x'], 'uid': os.getuid()}"
    result = run_tool(source, "run", {"x": 3}, limits=LIMITS)
    assert result.ok, result.as_dict()
    assert set(result.output["env"]) <= {"LC_CTYPE", "PWD"} and result.output["x"] == 3
    assert result.output["uid"] == 65534
    assert "aria-sandbox-" in result.output["cwd"] and not os.path.exists(result.output["cwd"])


def test_infinite_loop_hits_the_cpu_limit():
    # a generous wall timeout: on a busy machine 1 s of CPU can take longer than 3 s of wall time
    limits = Limits(cpu_seconds=1, memory_mb=256, fsize_mb=4, nofile=32, wall_seconds=30)
    result = run_tool("def run(p):\n    while True:\n        pass", "run", {}, limits=limits)
    assert not result.ok and result.reason == "cpu time limit exceeded"


def test_4gb_allocation_hits_the_memory_limit():
    result = run_tool("def run(p):\n    return len(bytearray(4 * 1024 ** 3))", "run", {}, limits=LIMITS)
    assert not result.ok and result.reason == "memory limit exceeded"


def test_1gb_write_hits_the_file_size_limit():
    source = "def run(p):\n    with open('big', 'wb') as f:\n        for _ in range(1024):\n            f.write(b'x' * 1024 * 1024)"
    result = run_tool(source, "run", {}, limits=LIMITS)
    assert not result.ok and result.reason == "file size limit exceeded"


def test_sleeping_past_the_wall_timeout_is_killed_with_its_process_group():
    # the work dir has the same (unique) path inside and outside: find whatever still runs in it
    source = "import os, time\ndef run(p):\n    print(os.getcwd(), flush=True)\n    time.sleep(120)\n"
    started = time.monotonic()
    result = run_tool(source, "run", {}, limits=LIMITS)
    assert time.monotonic() - started < 10
    assert not result.ok and result.reason == "wall timeout"
    workdir = result.stdout.split()[-1]
    assert "aria-sandbox-" in workdir
    time.sleep(0.2)
    assert [pid for pid in _pids() if _cwd(pid) == workdir] == []


@pytest.mark.parametrize(
    ("body", "denied"),
    [
        ("import socket\n    socket.create_connection(('127.0.0.1', PORT), timeout=1)", "network"),
        ("import urllib.request\n    urllib.request.urlopen('http://127.0.0.1:PORT/', timeout=1)", "network"),
        ("import socket\n    socket.getaddrinfo('example.com', 80)", "network"),
        ("import os\n    os.fork()", "processes"),
        ("import subprocess\n    subprocess.run(['true'])", "processes"),
        ("import os\n    os.system('true')", "processes"),
        ("import ctypes", "ctypes"),
    ],
)
def test_no_network_no_processes_no_ctypes(body, denied):
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.5)
    port = listener.getsockname()[1]
    try:
        source = "def run(p):\n    " + body.replace("PORT", str(port)) + "\n    return 'got through'\n"
        result = run_tool(source, "run", {}, limits=LIMITS)
        assert not result.ok and result.reason == f"denied: {denied}", result.as_dict()
        assert "not available in the sandbox" in result.error
        with pytest.raises(TimeoutError):  # nothing reached the listener on this host
            listener.accept()
    finally:
        listener.close()


def test_the_guard_cannot_be_switched_off_from_the_draft():
    source = (
        "import gc\n"
        "def run(p):\n"
        "    guard = next(o for o in gc.get_objects() if getattr(o, '__name__', '') == '_aria_guard')\n"
        "    guard.__code__ = (lambda event, args: None).__code__\n"
        "    import socket\n"
        "    socket.socket()\n"
    )
    result = run_tool(source, "run", {}, limits=LIMITS)
    assert not result.ok and result.reason == "denied: the sandbox guard", result.as_dict()


def test_the_child_has_a_network_namespace_of_its_own():
    source = "def run(p):\n    return [l.split(':')[0].strip() for l in open('/proc/net/dev').read().splitlines()[2:]]"
    result = run_tool(source, "run", {}, limits=LIMITS)
    assert result.ok, result.as_dict()
    assert result.output == ["lo"]  # the host's interfaces are not there


def _pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and _alive(int(p))]


def _cwd(pid: int) -> str:
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return ""


def test_the_work_dir_is_a_capped_tmpfs_not_the_hosts_disk():
    # fsize 4 MB per file, 16 MB for the whole work dir: many files just under the limit run out of space
    source = (
        "def run(p):\n"
        "    for i in range(10):\n"
        "        with open('f%d' % i, 'wb') as f:\n"
        "            f.write(b'x' * (4 * 1024 * 1024 - 1))\n"
    )
    result = run_tool(source, "run", {}, limits=LIMITS)
    assert not result.ok and result.reason == "no space left in the sandbox", result.as_dict()


def test_too_many_open_files():
    source = "def run(p):\n    return [open('f%d' % i, 'w') for i in range(100)] and 1"
    result = run_tool(source, "run", {}, limits=LIMITS)
    assert not result.ok and result.reason == "too many open files"


@pytest.mark.django_db
def test_draft_tests_report_the_sandbox_reason(operator):
    from assistant.services.drafts import draft_create, draft_test, draft_validate

    from .factories import set_config, tool_spec

    set_config(sandbox_cpu_seconds=1, sandbox_wall_seconds=30, sandbox_memory_mb=256)
    draft = draft_create(
        owner=operator, type="tool", name="spin", spec=tool_spec("def run(p):\n    while True:\n        pass")
    )
    draft_validate(draft=draft, actor=operator)
    draft = draft_test(draft=draft, actor=operator)
    assert draft.status == "test_failed"
    assert draft.test_report["cases"][0]["reason"] == "cpu time limit exceeded"
