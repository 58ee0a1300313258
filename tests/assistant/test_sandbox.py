"""The sandbox: limits hold, each failure names its reason, nothing keeps running."""

import os
import time

import pytest

from assistant.sandbox import Limits, run_tool

LIMITS = Limits(cpu_seconds=1, memory_mb=256, fsize_mb=4, nofile=32, wall_seconds=3)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_runs_the_entrypoint_with_an_empty_environment_in_a_private_dir():
    source = "import os\ndef run(p):\n    return {'env': sorted(k for k in os.environ if k != 'LC_CTYPE'), 'cwd': os.getcwd(), 'x': p['x']}"
    result = run_tool(source, "run", {"x": 3}, limits=LIMITS)
    assert result.ok, result.as_dict()
    assert result.output["env"] == [] and result.output["x"] == 3
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


def test_sleeping_past_the_wall_timeout_is_killed_with_its_children():
    source = (
        "import os, time\n"
        "def run(p):\n"
        "    if os.fork() == 0:\n"
        "        time.sleep(120)\n"
        "    print('child', flush=True)\n"
        "    print(os.getpid(), flush=True)\n"
        "    time.sleep(120)\n"
    )
    started = time.monotonic()
    result = run_tool(source, "run", {}, limits=LIMITS)
    assert time.monotonic() - started < 10
    assert not result.ok and result.reason == "wall timeout"
    parent_pid = int(result.stdout.split()[-1])
    time.sleep(0.2)
    assert not _alive(parent_pid)
    # the forked child was in the same process group: nothing of the group survives
    survivors = [p for p in os.listdir("/proc") if p.isdigit() and _alive(int(p)) and _pgid(int(p)) == parent_pid]
    assert survivors == []


def _pgid(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().split(")")[-1].split()[2])
    except (FileNotFoundError, ValueError, IndexError):
        return -1


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
