"""Published MCP servers: their tools become `read` capabilities that call the server through the
official MCP client (stdio or streamable HTTP), one short session per call."""

from __future__ import annotations

import asyncio
import json
import shlex
import threading
from typing import Any

import anyio

MCP_PREFIX = "mcp."


def _stdio_params(spec: dict[str, Any]):
    from mcp.client.stdio import StdioServerParameters

    command = spec["command"]
    argv = shlex.split(command) if isinstance(command, str) else list(command)
    return StdioServerParameters(command=argv[0], args=[*argv[1:], *spec.get("args", [])], cwd=spec.get("cwd") or None)


async def _with_session(spec: dict[str, Any], work):
    from mcp import ClientSession

    if spec["transport"] == "stdio":
        from mcp.client.stdio import stdio_client

        async with stdio_client(_stdio_params(spec)) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await work(session)
    from mcp.client.streamable_http import streamable_http_client

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

    return _run(lambda: _with_session(spec, work), timeout)


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

    return _run(lambda: _with_session(spec, work), timeout)
