"""The MCP server: capabilities from the one registry, exposed to outside MCP clients.

Built on the official `mcp` SDK's low-level `Server`, whose `on_list_tools` / `on_call_tool`
handlers see the caller on every request, so the tool list is projected from the registry per
caller (it changes as capabilities are published) instead of being fixed at start-up:

- `read` and `safe` capabilities always, `mutate` ones only for a caller holding the operator
  scope, `gated` never (a hidden tool cannot be called either);
- a call goes through `core.capabilities.dispatch` (validation, scopes, never raises) in a
  worker thread; `is_error` becomes an MCP tool error result.

ORM work runs through `_in_thread`: a pool thread (calls do not queue behind one another as they
would on asgiref's single thread-sensitive thread) with stale connections closed around it.

Transports: streamable HTTP at `/mcp` (bearer token, see `McpHttpApp`) and stdio
(`manage.py mcp_serve`), both serving the same `build_server()`. Over HTTP, once the token is
checked, a POST body the /api/ routes would refuse as JSON (not plain UTF-8, nested deeper than
`ARIA_API_MAX_JSON_DEPTH`, a key repeated in one object, `NaN`/`Infinity`/`1e999`) is answered with
a JSON-RPC parse error (-32700, HTTP 400) naming its dotted path (`params.arguments.cell_id`),
before the SDK's parser — which keeps a repeated key's last value and reads NaN as a float — sees it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types
from channels.db import database_sync_to_async
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.serializers.json import DjangoJSONEncoder
from mcp.server import Server, ServerRequestContext
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from core.access import OPERATOR, has_scopes, user_scopes
from core.auth import user_for_token
from core.capabilities import Capability, CapabilityContext, CapabilityResult, Tier, dispatch, registry
from core.errors import DomainError
from core.json_body import json_body_refusal
from core.request_limits import DEFAULT_MAX_BODY_BYTES, door_refusal

SERVER_NAME = "aria"
PARSE_ERROR = -32700  # JSON-RPC 2.0: the text is not (strict) JSON
INVALID_REQUEST = -32600  # JSON-RPC 2.0: not a request the server takes (here: a body over the size limit)
MCP_PATH = "/mcp"
USER_SCOPE_KEY = "aria.user"  # the ASGI scope key the HTTP app stores the token's user under
AGENT_NAME = "mcp"


def _in_thread(func: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
    return database_sync_to_async(func, thread_sensitive=False)


def visible_capabilities(user: AbstractBaseUser | None) -> list[Capability]:
    """What this caller may see and call over MCP."""
    if user is None or not user.is_active:
        return []
    operator = has_scopes(user, (OPERATOR,))
    # A listed tool whose own scopes the caller lacks still answers "Permission denied" (dispatch).
    return [
        cap
        for cap in registry.all()
        if not cap.ui_only and (cap.tier <= Tier.SAFE or (cap.tier == Tier.MUTATE and operator))
    ]


def _tool(cap: Capability) -> types.Tool:
    return types.Tool(
        name=cap.tool_name,
        description=cap.description,
        input_schema=cap.input_schema(),
        annotations=types.ToolAnnotations(read_only_hint=cap.tier <= Tier.SAFE),
    )


def tool_result(result: CapabilityResult) -> types.CallToolResult:
    """A capability result as MCP content: JSON text, plus structured content for objects."""
    if result.is_error:
        return types.CallToolResult(content=[types.TextContent(type="text", text=result.message)], is_error=True)
    content = result.content
    text = content if isinstance(content, str) else json.dumps(content, cls=DjangoJSONEncoder)
    structured = json.loads(text) if isinstance(content, dict) else None
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=structured)


def _call(user: AbstractBaseUser | None, tool_name: str, arguments: dict[str, Any]) -> CapabilityResult:
    """Runs in a worker thread: the ORM may not be touched from the event loop."""
    cap = next((c for c in visible_capabilities(user) if c.tool_name == tool_name), None)
    if cap is None:  # hidden and unknown look the same to the caller
        return CapabilityResult(name=tool_name, is_error=True, message=f"Unknown tool {tool_name!r}.")
    return dispatch(cap.name, arguments, ctx=CapabilityContext(user=user, agent=AGENT_NAME))


def build_server(default_user: AbstractBaseUser | None = None) -> Server:
    """The MCP server. Over HTTP the caller is the token's user; over stdio it is `default_user`."""

    def caller(ctx: ServerRequestContext) -> AbstractBaseUser | None:
        request = ctx.request
        if request is not None and hasattr(request, "scope"):
            return request.scope.get(USER_SCOPE_KEY)
        return default_user

    async def on_list_tools(
        ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        caps = await _in_thread(visible_capabilities)(caller(ctx))
        return types.ListToolsResult(tools=[_tool(cap) for cap in caps])

    async def on_call_tool(ctx: ServerRequestContext, params: types.CallToolRequestParams) -> types.CallToolResult:
        result = await _in_thread(_call)(caller(ctx), params.name, dict(params.arguments or {}))
        return tool_result(result)

    def input_schema(name: str) -> dict[str, Any] | None:
        cap = registry.get(name)
        return None if cap is None or cap.tier >= Tier.GATED else cap.input_schema()

    return Server(
        SERVER_NAME,
        title="ARIA maintenance operations",
        instructions="Read plant signals, alarms, work orders, failure history and KPIs of the ARIA platform.",
        get_tool_input_schema=input_schema,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )


async def serve_stdio(user: AbstractBaseUser) -> None:
    """Serve the tools over this process's stdin/stdout, acting as `user`."""
    server = build_server(default_user=user)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


# --- streamable HTTP ------------------------------------------------------------------------------


def _bearer(scope: Scope) -> str:
    for key, value in scope.get("headers", ()):
        if key == b"authorization":
            text = value.decode("latin-1")
            if text[:7].lower() == "bearer ":
                return text[7:].strip()
    return ""


def _authenticate(raw: str) -> tuple[AbstractBaseUser | None, list[str]]:
    """The token's user and scopes (a worker thread: both read the database)."""
    user = user_for_token(raw)
    return user, sorted(user_scopes(user)) if user is not None else []


async def _unauthorized(send: Send) -> None:
    body = json.dumps({"detail": "Authentication required: send Authorization: Bearer <token>."}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"www-authenticate", b'Bearer realm="aria", error="invalid_token"'),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class McpHttpApp:
    """Streamable HTTP at /mcp with bearer-token auth, runnable under daphne and uvicorn.

    The SDK's session manager needs its `run()` context (normally entered from ASGI lifespan).
    Daphne never sends lifespan, and under Channels' ProtocolTypeRouter uvicorn's lifespan does not
    reach us either, so the first request starts a task that enters `run()` and waits until it is
    ready; the task lives as long as the event loop.
    """

    def __init__(self) -> None:
        self.server = build_server()
        # Bearer tokens are not ambient browser credentials, so DNS-rebinding checks (which would
        # reject every real Host name) add nothing here. Stateless: any web process can answer.
        self.app: ASGIApp = self.server.streamable_http_app(
            streamable_http_path=MCP_PATH,
            stateless_http=True,
            json_response=True,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        self._ready: asyncio.Event | None = None
        self._runner: asyncio.Task[None] | None = None
        self._start_error: BaseException | None = None

    async def _ensure_running(self) -> None:
        if self._ready is None:
            self._ready = asyncio.Event()
            self._runner = asyncio.get_running_loop().create_task(self._run_session_manager(self._ready))
        await self._ready.wait()
        if self._start_error is not None:
            raise RuntimeError("MCP session manager failed to start") from self._start_error

    async def _run_session_manager(self, ready: asyncio.Event) -> None:
        try:
            async with self.server.session_manager.run():
                ready.set()
                await asyncio.Event().wait()  # until the loop shuts down
        except Exception as exc:
            self._start_error = exc
        finally:
            ready.set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        user, scopes = await _in_thread(_authenticate)(_bearer(scope))
        if user is None:
            await _unauthorized(send)
            return
        if scope.get("method") == "POST":
            checked = await _checked_body(scope, receive, send)
            if checked is None:
                return
            receive = checked
        await self._ensure_running()
        token = AccessToken(token="", client_id=f"user:{user.pk}", scopes=scopes, subject=str(user.pk))
        scope = {**scope, "path": MCP_PATH, "user": AuthenticatedUser(token), USER_SCOPE_KEY: user}
        await self.app(scope, receive, send)


def _json_refusal(body: bytes) -> DomainError | None:
    """As on every /api/ route: not plain UTF-8 or nested too deep, then a repeated key or a
    non-finite number, then a NUL or a lone surrogate escape in a string, named by its dotted path
    (the SDK's parser keeps the last of a repeated key, reads `NaN`, `Infinity` and `1e999` as
    floats, and hands a tool text PostgreSQL cannot store)."""
    return door_refusal(body) or json_body_refusal(body)


def _too_large(scope: Scope, received: int) -> int | None:
    """The body limit of every /api/ route (`ARIA_API_MAX_BODY_BYTES`) when the declared length or
    what was received passes it; else None."""
    limit = getattr(settings, "ARIA_API_MAX_BODY_BYTES", DEFAULT_MAX_BODY_BYTES)
    declared = dict(scope.get("headers") or []).get(b"content-length", b"0")
    return limit if received > limit or (declared.isdigit() and int(declared) > limit) else None


async def _checked_body(scope: Scope, receive: Receive, send: Send) -> Receive | None:
    """After authentication: reads the request body, up to the API's size limit (HTTP 413 past it,
    without reading the rest), and answers a JSON-RPC parse error (HTTP 400) for one `_json_refusal`
    refuses, returning None; else a `receive` that hands the SDK the same body. None too when the
    client went away before sending it all."""
    chunks: list[bytes] = []
    received = 0
    more = True
    limit = _too_large(scope, received)  # by the declared length, before a byte is read
    while more and limit is None:
        message = await receive()
        if message["type"] != "http.request":
            return None
        chunks.append(message.get("body", b""))
        received += len(chunks[-1])
        more = message.get("more_body", False)
        limit = _too_large(scope, received)
    if limit is not None:
        text = f"Request too large: a body has at most {limit} bytes."
        await _rpc_error(send, 413, INVALID_REQUEST, text, {"code": "payload_too_large", "limit": limit})
        return None
    body = b"".join(chunks)
    # A hostile body costs up to seconds to walk: off the event loop, as the caller's other work.
    refusal = await asyncio.to_thread(_json_refusal, body)
    if refusal is not None:
        await _parse_error(send, refusal)
        return None
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if replayed:
            return await receive()  # a disconnect, which the SDK may wait for
        replayed = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


async def _parse_error(send: Send, refusal: DomainError) -> None:
    data = {key: value for key, value in refusal.as_body().items() if key != "detail"}  # code, field, key
    await _rpc_error(send, 400, PARSE_ERROR, f"Parse error: {refusal.message}", data)


async def _rpc_error(send: Send, status: int, code: int, message: str, data: dict[str, Any]) -> None:
    error = {"code": code, "message": message, "data": data}
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
