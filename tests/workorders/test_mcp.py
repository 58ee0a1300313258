"""The MCP server through the SDK's own client: streamable HTTP under daphne and uvicorn, and stdio.

Each server runs as a real subprocess on a file SQLite database seeded with `seed_demo`; the
tokens belong to seeded users (operator, and approver who lacks the operator scope).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
BIN = Path(PYTHON).parent

SETUP_SCRIPT = """
import json
from django.contrib.auth.models import User
from core.models import ApiToken
from sentinel.models import Cell, Line, Site, SignalDefinition

def token(username):
    raw = ApiToken.generate_key()
    ApiToken.objects.create(user=User.objects.get(username=username), name="mcp test",
                            key_prefix=raw[:12], key_hash=ApiToken.hash_key(raw))
    return raw

cell = Cell.objects.filter(tag="P-02").first()
if cell is None:  # sentinel's demo seed not there: the smallest plant that answers
    line = Line.objects.create(site=Site.objects.create(name="Test site"), name="Line 1")
    cell = Cell.objects.create(line=line, tag="P-02", name="Pump", onboarding_complete=True)
    SignalDefinition.objects.create(cell=cell, key="vibration_mm_s", display_name="Vibration", unit="mm/s",
                                    alert=4.5, trip=7.1)
print("SETUP " + json.dumps({"operator": token("operator"), "approver": token("approver"), "cell_id": cell.pk}))
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def server_env(var_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(
        DJANGO_SETTINGS_MODULE="aria_project.settings_test",
        ARIA_VAR_DIR=str(var_dir),
        DATABASE_URL=f"sqlite:///{var_dir / 'mcp.sqlite3'}",
        ARIA_ENGINE="fake",
        ARIA_EMBEDDED_WORKER="false",
        PYTHONUNBUFFERED="1",
    )
    return env


def manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [PYTHON, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=240, check=False
    )
    assert done.returncode == 0, f"manage.py {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> dict:
    var_dir = tmp_path_factory.mktemp("mcp")
    env = server_env(var_dir)
    manage(env, "migrate", "--noinput")
    manage(env, "seed_demo")
    out = manage(env, "shell", "-c", SETUP_SCRIPT)
    setup = json.loads(next(line for line in out.splitlines() if line.startswith("SETUP "))[6:])
    return {"env": env, **setup}


def _wait_ready(proc: subprocess.Popen, url: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}:\n{proc.stdout.read() if proc.stdout else ''}")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"server not ready at {url}")


@pytest.fixture(scope="module", params=["daphne", "uvicorn"])
def http_server(request: pytest.FixtureRequest, site: dict) -> Iterator[str]:
    port = free_port()
    app = "aria_project.asgi:application"
    if request.param == "daphne":
        cmd = [str(BIN / "daphne"), "-b", "127.0.0.1", "-p", str(port), app]
    else:
        cmd = [str(BIN / "uvicorn"), app, "--host", "127.0.0.1", "--port", str(port)]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=site["env"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(proc, base + "/healthz")
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


async def _session_calls(session: ClientSession, cell_id: int) -> tuple[set[str], object]:
    await session.initialize()
    listed = (await session.list_tools()).tools
    tools = {tool.name for tool in listed}
    schema = next(t.input_schema for t in listed if t.name == "get_current_signals")
    assert schema["required"] == ["cell_id"]  # the capability's pydantic model
    bad = await session.call_tool("get_current_signals", {"cell_id": "not a number"})
    assert bad.is_error  # "Invalid input: …" for an operator, "Permission denied" for anyone else
    assert any(word in bad.content[0].text for word in ("Invalid input", "Permission denied"))
    result = await session.call_tool("get_current_signals", {"cell_id": cell_id})
    return tools, result


async def http_calls(base: str, token: str, cell_id: int) -> tuple[set[str], object]:
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as client,
        streamable_http_client(f"{base}/mcp", http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        return await _session_calls(session, cell_id)


def assert_current_signals(result: object, cell_id: int) -> None:
    assert not result.is_error, result.content
    payload = json.loads(result.content[0].text)
    assert payload["cell_id"] == cell_id
    assert any(s["key"].startswith("vibration") for s in payload["signals"])
    assert result.structured_content["cell_id"] == cell_id


async def test_http_operator_lists_and_calls_tools(http_server: str, site: dict) -> None:
    tools, result = await http_calls(http_server, site["operator"], site["cell_id"])

    assert {"get_current_signals", "get_signal_trends", "get_work_order"} <= tools
    assert {"update_work_order", "raise_work_order"} <= tools  # mutate: the operator may
    assert_current_signals(result, site["cell_id"])


async def test_http_non_operator_sees_no_mutate_tools(http_server: str, site: dict) -> None:
    tools, result = await http_calls(http_server, site["approver"], site["cell_id"])

    assert "get_current_signals" in tools
    assert not {"update_work_order", "update_equipment_kb", "raise_work_order"} & tools
    # The capability's own scope still applies on the call.
    assert result.is_error and "operator" in result.content[0].text


@pytest.mark.parametrize("header", [None, "Bearer aria_not-a-real-token", "Basic abc"])
def test_http_without_valid_token_is_401(http_server: str, header: str | None) -> None:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if header:
        headers["Authorization"] = header
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}

    response = httpx.post(f"{http_server}/mcp", json=body, headers=headers, timeout=10)

    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")


MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def tools_call(arguments: str) -> bytes:
    """A raw `tools/call` of get_current_signals, its arguments spelled as given."""
    params = f'{{"name": "get_current_signals", "arguments": {arguments}}}'
    return f'{{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {params}}}'.encode()


@pytest.mark.parametrize(
    ("arguments", "problem", "data"),
    [
        (
            '{"cell_id": 1, "cell_id": 2}',
            "the key 'cell_id' appears more than once in one object; send each key once.",
            {"code": "duplicate_key", "field": "params.arguments.cell_id", "key": "cell_id"},
        ),
        ('{"cell_id": NaN}', "NaN is not a JSON number; send a finite number.", None),
        ('{"cell_id": -Infinity}', "-Infinity is not a JSON number; send a finite number.", None),
        ('{"cell_id": 1e999}', "1e999 is not a JSON number; send a finite number.", None),
        ('{"cell_id": "7\\u0000"}', "text must not contain NUL characters (\\u0000).", None),
        (
            '{"cell_id": "7\\ud800"}',
            "text must be Unicode characters; a \\ud800-\\udfff escape is half of a pair.",
            None,
        ),
    ],
    ids=["repeat", "nan", "-infinity", "1e999", "nul", "lone-surrogate"],
)
def test_http_refuses_a_repeated_key_or_a_non_finite_number(http_server: str, site: dict, arguments, problem, data):
    """As every /api/ route does; the SDK's parser kept the last `cell_id` and read NaN as a float,
    handed a tool a NUL, and refused a lone surrogate without naming where."""
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {site['operator']}"}

    response = httpx.post(f"{http_server}/mcp", content=tools_call(arguments), headers=headers, timeout=10)

    assert response.status_code == 400, response.text
    body = response.json()
    assert (body["jsonrpc"], body["id"], body["error"]["code"]) == ("2.0", None, -32700)
    assert body["error"]["message"] == f"Parse error: params.arguments.cell_id: {problem}"
    assert body["error"]["data"] == (data or {"code": "invalid", "field": "params.arguments.cell_id"})


def test_http_refuses_a_hostile_body_only_after_authentication(http_server: str, site: dict) -> None:
    repeated = tools_call('{"cell_id": 1, "cell_id": 2}')

    anonymous = httpx.post(f"{http_server}/mcp", content=repeated, headers=MCP_HEADERS, timeout=10)
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {site['operator']}"}
    sound = httpx.post(f"{http_server}/mcp", content=tools_call(f'{{"cell_id": {site["cell_id"]}}}'), headers=headers)

    assert anonymous.status_code == 401  # the token first: an anonymous body is never parsed
    assert sound.status_code == 200, sound.text  # a sound body reaches the SDK whole
    result = sound.json()["result"]
    assert not result.get("isError") and json.loads(result["content"][0]["text"])["cell_id"] == site["cell_id"]


def test_http_refuses_a_body_over_the_api_size_limit(http_server: str, site: dict) -> None:
    """Every /api/ route refuses a body over 2 MB (ARIA_API_MAX_BODY_BYTES); /mcp read any size whole."""
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {site['operator']}"}
    padding = "x" * (2 * 1024 * 1024)
    big = tools_call(f'{{"cell_id": {site["cell_id"]}, "note": "{padding}"}}')

    declared = httpx.post(f"{http_server}/mcp", content=big, headers=headers, timeout=30)

    def chunks():  # no Content-Length: the limit is counted as the body arrives
        for start in range(0, len(big), 65536):
            yield big[start : start + 65536]

    streamed = httpx.post(f"{http_server}/mcp", content=chunks(), headers=headers, timeout=30)
    for response in (declared, streamed):
        assert response.status_code == 413, response.text
        error = response.json()["error"]
        assert error["code"] == -32600 and error["data"]["code"] == "payload_too_large", error
    sound = httpx.post(f"{http_server}/mcp", content=tools_call(f'{{"cell_id": {site["cell_id"]}}}'), headers=headers)
    assert sound.status_code == 200, sound.text


async def test_stdio_serves_the_same_tools(site: dict) -> None:
    params = StdioServerParameters(
        command=PYTHON, args=["manage.py", "mcp_serve", "--token", site["operator"]], env=site["env"], cwd=str(ROOT)
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        tools, result = await _session_calls(session, site["cell_id"])

    assert {"get_current_signals", "update_work_order"} <= tools
    assert_current_signals(result, site["cell_id"])


async def test_stdio_user_option_without_operator_scope(site: dict) -> None:
    params = StdioServerParameters(
        command=PYTHON, args=["manage.py", "mcp_serve", "--user", "approver"], env=site["env"], cwd=str(ROOT)
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = {tool.name for tool in (await session.list_tools()).tools}

    assert "get_current_signals" in tools and "update_work_order" not in tools
