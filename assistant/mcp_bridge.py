"""Published MCP servers: their tools become `read` capabilities that call the server through the
official MCP client (stdio or streamable HTTP), one short session per call.

A stdio server's command is untrusted: it runs in the sandbox (core.sandbox — bubblewrap, uid
65534, a private work dir, no network, rlimits), never on the host; the SDK spawns the bwrap
command line. An HTTP server is reached only when its host is on ARIA_MCP_HTTP_ALLOWED_HOSTS."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shlex
import sys
import threading
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlparse

import anyio
from django.conf import settings

from assistant.conf import get_config
from assistant.services.draft_tests import sandbox_limits
from core.sandbox import INNER_PATH, Limits, sandbox_workdir, sandboxed_command

MCP_PREFIX = "mcp."


class McpHostRefused(PermissionError):
    """An HTTP MCP server whose host the admin has not allowed."""

    def __init__(self, host: str) -> None:
        self.reason = f"host not allowed: {host!r} is not on ARIA_MCP_HTTP_ALLOWED_HOSTS"
        super().__init__(self.reason)


def check_http_host(url: str) -> None:
    """Raise McpHostRefused unless the URL's host (or host:port) is on the admin's allowlist."""
    parsed = urlparse(url)
    host = (parsed.hostname or "").lower()
    allowed = {str(h).lower() for h in getattr(settings, "ARIA_MCP_HTTP_ALLOWED_HOSTS", [])}
    if not host or not ({host, f"{host}:{parsed.port}"} & allowed):
        raise McpHostRefused(host or url)


def _sandbox_limits() -> Limits:

    return sandbox_limits(get_config())


@contextlib.contextmanager
def _stdio_params(spec: dict[str, Any], limits: Limits) -> Iterator[Any]:
    """The SDK's parameters for spawning the server inside the sandbox (raises SandboxUnavailable)."""
    from mcp.client.stdio import StdioServerParameters  # lazy: the MCP SDK loads only when an MCP server is used

    command = spec["command"]
    argv = shlex.split(command) if isinstance(command, str) else list(command)
    argv += [str(a) for a in spec.get("args", [])]
    # What a server may see besides /usr and the Python installation: the project's virtualenv (the
    # MCP SDK and its libraries, read-only) and the paths the admin installed servers under.
    read_only = [sys.prefix, *getattr(settings, "ARIA_SANDBOX_READ_ONLY_PATHS", [])]
    with sandbox_workdir() as workdir:
        wrapped, _warning = sandboxed_command(
            argv, workdir=workdir, limits=limits, read_only=read_only, env={"PATH": INNER_PATH}
        )
        yield StdioServerParameters(command=wrapped[0], args=wrapped[1:], cwd=workdir)


async def _with_session(spec: dict[str, Any], work, limits: Limits):
    from mcp import ClientSession  # lazy: the MCP SDK loads only when an MCP server is used

    if spec["transport"] == "stdio":
        from mcp.client.stdio import stdio_client  # lazy: the MCP SDK loads only when an MCP server is used

        with _stdio_params(spec, limits) as params:
            async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                return await work(session)
    # lazy: the MCP SDK loads only when an MCP server is used
    from mcp.client.streamable_http import streamable_http_client

    check_http_host(spec["url"])

    async with streamable_http_client(spec["url"]) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        return await work(session)


def _run(coro_factory, timeout: float) -> Any:
    """Run the client in a fresh event loop (a worker thread if this one already runs a loop)."""

    async def bounded():
        with anyio.fail_after(timeout):
            return await coro_factory()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return anyio.run(bounded)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = anyio.run(bounded)
        except BaseException as exc:  # handed back to the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout + 5)
    if "error" in box:
        raise box["error"]
    return box.get("value")


def list_server_tools(spec: dict[str, Any], *, timeout: float = 30) -> list[dict[str, Any]]:
    async def work(session):
        listed = (await session.list_tools()).tools
        return [{"name": t.name, "description": t.description or "", "input_schema": t.input_schema} for t in listed]

    limits = _sandbox_limits()  # read here: the database is not for the client's event loop
    return _run(lambda: _with_session(spec, work, limits), timeout)


def call_server_tool(spec: dict[str, Any], tool: str, args: dict[str, Any], *, timeout: float = 30) -> Any:
    async def work(session):
        result = await session.call_tool(tool, args)
        texts = [getattr(block, "text", "") for block in result.content]
        if result.is_error:
            raise RuntimeError(" ".join(texts)[:500] or "MCP tool error")
        if result.structured_content is not None:
            return result.structured_content
        joined = "\n".join(texts)
        try:
            return json.loads(joined)
        except ValueError:
            return {"text": joined, "summary": joined[:200]}

    limits = _sandbox_limits()  # read here: the database is not for the client's event loop
    return _run(lambda: _with_session(spec, work, limits), timeout)
